import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveAnalysisConfig } from '../../src/analysis/resolve-analysis-config.js'
import { toAnalysisJson } from '../../src/analysis/to-analysis-json.js'
import { makeTestId, type Result } from '../../src/model.js'
import { analyzeStore } from '../../src/pipeline/analyze-store.js'
import {
  analysisFingerprint,
  forEachPersistedAnalysis,
  refreshAnalyses,
  storeClock,
} from '../../src/pipeline/persisted-analyses.js'
import { toRunMeta } from '../../src/pipeline/run-context.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import type { AnalysisClaim } from '../../src/store/analyses.js'
import { DAY, random, randomUploads, T0 } from '../helpers/random-history.js'
import { resolveTestPg, schemas } from './pg-helpers.js'

const cfg = resolveAnalysisConfig()
const config = analysisFingerprint(cfg)

/** The full re-analysis at `clock`, as `analyze --json` prints each test, by test id. */
async function reference(store: Store, clock: number): Promise<Map<string, unknown>> {
  const all = await analyzeStore(store, { now: clock, config: {} })
  return new Map(all.map((a) => [a.testId, JSON.parse(JSON.stringify(toAnalysisJson(a)))]))
}

async function exactRows(store: Store, clock: number): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>()
  for await (const row of store.analyses().readAnalyses({ clock, config })) {
    if (row.exact && row.json !== null) out.set(row.testId, JSON.parse(row.json))
  }
  return out
}

/** Stores the uploads with writers that refresh (or do not), then checks every exact row at random clocks. */
async function checkSeed(store: Store, seed: number): Promise<number> {
  const rand = random(seed)
  let n = 0
  for (const u of randomUploads(rand)) {
    const outcomes = await store.ingestReport(
      { file: `${u.run.runId}-${n}.json`, contentHash: `${seed}-${n++}`, runs: [{ run: u.run, results: u.results }] },
      { replace: u.replace },
    )
    // A writer that refreshes its own rows just after its commit, one that dies first, or a sweep.
    const step = rand.pick(['writer', 'writer', 'none', 'sweep'])
    if (step === 'writer') await refreshAnalyses(store, cfg, { runIds: outcomes.map((o) => o.runId) })
    if (step === 'sweep') await refreshAnalyses(store, cfg, { maxRows: rand.int(1, 5), chunk: 2 })
    if (step === 'none' && rand.chance(0.3)) await refreshAnalyses(store, cfg, { clock: T0 + rand.int(0, 90) * DAY })
  }
  if (rand.chance(0.3)) {
    await store.prune(T0 + rand.int(0, 40) * DAY)
    if (rand.chance(0.5)) await refreshAnalyses(store, cfg)
  }
  // Rows analysed at random clocks, then read at clocks around each: every row exact at a clock must equal the
  // full re-analysis there.
  let compared = 0
  for (let w = 0; w < 4; w++) {
    const written = T0 + rand.int(-DAY, 100 * DAY)
    await refreshAnalyses(store, cfg, { clock: written, chunk: rand.int(1, 8) })
    for (let c = 0; c < 4; c++) {
      const clock = written + rand.int(-5 * DAY, 5 * DAY)
      const want = await reference(store, clock)
      for (const [testId, got] of await exactRows(store, clock)) {
        expect({ seed, clock, testId, analysis: got }).toEqual({ seed, clock, testId, analysis: want.get(testId) })
        compared++
      }
    }
  }
  // After a sweep, every test is exact at the store's clock, and the reader gives the full analysis whole.
  await refreshAnalyses(store, cfg)
  const clock = await storeClock(store)
  const want = await reference(store, clock)
  const got = new Map<string, unknown>()
  const used = await forEachPersistedAnalysis(
    store,
    cfg,
    { clock },
    {
      exact: (row) => got.set(row.testId, JSON.parse(row.json)),
      analysed: (a) => got.set(a.testId, JSON.parse(JSON.stringify(toAnalysisJson(a)))),
    },
  )
  if (want.size > 0) expect({ seed, used }).toEqual({ seed, used: true })
  expect({ seed, analyses: got }).toEqual({ seed, analyses: want })
  const backlog = await store.analyses().analysisBacklog(clock)
  expect({ seed, due: backlog.due }).toEqual({ seed, due: 0 })
  expect({ seed, compared: compared > 0 }).toEqual({ seed, compared: true })
  return compared + got.size
}

const SEEDS = Array.from({ length: 12 }, (_, i) => 1000 + i)

describe('persisted analyses equal a full re-analysis (sqlite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-persisted-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  it.each(SEEDS)('random history, seed %i', async (seed) => {
    const store = await openSqliteStore(join(dir, `s${seed}.db`))
    try {
      expect(await checkSeed(store, seed)).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
  })
})

const pg = await resolveTestPg()
if (pg.skip !== undefined) {
  describe.skip(`persisted analyses on postgres (skipped: ${pg.skip})`, () => {
    it('equal a full re-analysis', () => undefined)
  })
} else {
  const db = schemas(pg.url)
  afterAll(() => db.dropAll())
  describe('persisted analyses equal a full re-analysis (postgres)', () => {
    it.each(SEEDS.slice(0, 6))('random history, seed %i', async (seed) => {
      const store = await openPostgresStore(db.fresh())
      try {
        expect(await checkSeed(store, seed)).toBeGreaterThan(0)
      } finally {
        await store.close()
      }
    })
  })
}

/** A stored history whose every row is stale, as a writer that never refreshed leaves it: 3 files × 4 tests. */
/** Rows a refresh would write for `claims`: an empty analysis, exact from `clock` on (what is written is not the point). */
function emptyRowsOf(claims: AnalysisClaim[], clock: number) {
  return claims.map((c) => ({
    ...c,
    analysis: null,
    config,
    asOf: clock,
    validFrom: 0,
    validUntil: Number.MAX_SAFE_INTEGER,
  }))
}

async function staleHistory(store: Store): Promise<number> {
  const rand = random(7)
  let n = 0
  for (let r = 0; r < 12; r++) {
    const run = toRunMeta(`run-${r}`, 'unit', { branch: 'main', startedAt: new Date(T0 + r * DAY).toISOString() })
    const results: Result[] = []
    for (let f = 0; f < 3; f++) {
      for (let t = 0; t < 4; t++) {
        const failed = rand.chance(0.2 * t)
        results.push({
          test: {
            testId: makeTestId('unit', `f${f}`, `t${t}`),
            suite: 'unit',
            module: `f${f}`,
            name: `t${t}`,
            file: null,
          },
          status: failed ? 'failed' : 'passed',
          flakyOnRetry: false,
          durationMs: 5,
          errorType: null,
          message: failed ? 'boom' : null,
          healingOccurred: false,
          attempts: [],
          position: f * 4 + t,
        })
      }
    }
    await store.ingestReport({ file: `${r}.json`, contentHash: `h${r}-${n++}`, runs: [{ run, results }] })
  }
  return 3 * 4
}

/** A report of one run, after `staleHistory`'s, with one result of test `name` in file f0: failed with `message`. */
function oneResultReport(runId: string, name: string, position: number, message: string | null = null) {
  const run = toRunMeta(runId, 'unit', { branch: 'main', startedAt: new Date(T0 + 40 * DAY).toISOString() })
  const result: Result = {
    test: { testId: makeTestId('unit', 'f0', name), suite: 'unit', module: 'f0', name, file: null },
    status: message === null ? 'passed' : 'failed',
    flakyOnRetry: false,
    durationMs: 5,
    errorType: null,
    message,
    healingOccurred: false,
    attempts: [],
    position,
  }
  return { file: `${runId}.json`, contentHash: runId, runs: [{ run, results: [result] }] }
}

/** One run of 600 files of 2 tests and one file of 1,100, every test with an execution position. */
async function oneWideRun(store: Store): Promise<{ runId: string; tests: number }> {
  const run = toRunMeta('wide', 'unit', { branch: 'main', startedAt: new Date(T0).toISOString() })
  const files = [
    ...Array.from({ length: 600 }, (_, f) => ({ module: `f${f}`, tests: 2 })),
    { module: 'big', tests: 1100 },
  ]
  const results: Result[] = files.flatMap(({ module, tests }) =>
    Array.from({ length: tests }, (_, t) => ({
      test: { testId: makeTestId('unit', module, `t${t}`), suite: 'unit', module, name: `t${t}`, file: null },
      status: t % 7 === 3 ? ('failed' as const) : ('passed' as const),
      flakyOnRetry: false,
      durationMs: 5,
      errorType: null,
      message: null,
      healingOccurred: false,
      attempts: [],
      position: t,
    })),
  )
  await store.ingestReport({ file: 'wide.json', contentHash: 'wide', runs: [{ run, results }] })
  return { runId: 'wide', tests: results.length }
}

/** Leases and version-conditional writes, with two stores on one database standing for two instances. */
function leaseChecks(backend: string, open: () => Promise<[Store, Store]>) {
  describe(`a writer's refresh reads each file once (${backend})`, () => {
    it('over more files than one page, and a file larger than a chunk, each test is read once', async () => {
      const [a, b] = await open()
      try {
        const { runId, tests } = await oneWideRun(a)
        let read = 0
        const scan = a.scanHistory.bind(a)
        a.scanHistory = (filter) => {
          read += filter?.testIds?.length ?? Infinity
          return scan(filter)
        }
        expect(await refreshAnalyses(a, cfg, { runIds: [runId] })).toEqual({ claimed: tests, written: tests })
        // Chunks of 500 rows claimed file after file, the rest of a larger file with its first chunk: no history
        // is read twice (a chunk of the 1,100-test file used to read all of it, three times).
        expect(read).toBe(tests)
        const clock = await storeClock(b)
        expect(await b.analyses().analysisBacklog(clock)).toEqual({ rows: tests, due: 0 })
        expect(await exactRows(b, clock)).toEqual(await reference(b, clock))
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })
  })

  describe(`a refresh holds about its results budget at once (${backend})`, () => {
    it('once a part says how long the histories are, each part reads one file, and every history once', async () => {
      const [a, b] = await open()
      try {
        // 8 files of 10 ordered tests, 30 runs: 300 results a file.
        for (let r = 0; r < 30; r++) {
          const run = toRunMeta(`r${r}`, 'unit', {
            branch: 'main',
            startedAt: new Date(T0 + r * 3_600_000).toISOString(),
          })
          const results: Result[] = Array.from({ length: 80 }, (_, i) => {
            const module = `f${Math.floor(i / 10)}`
            const name = `t${i % 10}`
            return {
              test: { testId: makeTestId('unit', module, name), suite: 'unit', module, name, file: null },
              ...{ status: (i + r) % 13 === 0 ? ('failed' as const) : ('passed' as const), flakyOnRetry: false },
              ...{ durationMs: 5, errorType: null, message: null, healingOccurred: false, attempts: [] },
              position: i % 10,
            }
          })
          await a.ingestReport({ file: `r${r}.json`, contentHash: `budget-${r}`, runs: [{ run, results }] })
        }
        const calls: number[] = []
        const scan = b.scanHistory.bind(b)
        b.scanHistory = (filter) => {
          calls.push(filter?.testIds?.length ?? Infinity)
          return scan(filter)
        }
        expect(await refreshAnalyses(b, cfg, { results: 100 })).toEqual({ claimed: 80, written: 80 })
        // The first part (10 tests, one whole file) reads 300 results; then 100 results make parts of 3 tests or
        // fewer, each of which reads one file: its own histories, then its mates'.
        expect(calls[0]).toBe(10)
        expect(Math.max(...calls.slice(1))).toBeLessThanOrEqual(9)
        expect(calls.length).toBeGreaterThanOrEqual(2 * 7)
        expect(calls.reduce((x, y) => x + y)).toBe(80)
        const clock = await storeClock(b)
        expect(await exactRows(b, clock)).toEqual(await reference(b, clock))
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })
  })

  describe(`after a configuration change, rows are claimed a file at a time (${backend})`, () => {
    it('a claim takes whole files in file order, though the rows were stored file-mates apart', async () => {
      const [a, b] = await open()
      try {
        // 30 files of 10 ordered tests, stored one test of each file after the other: neither the tests' keys
        // nor the rows' order follow the files.
        const run = toRunMeta('spread', 'unit', { branch: 'main', startedAt: new Date(T0).toISOString() })
        const results: Result[] = Array.from({ length: 300 }, (_, i) => {
          const module = `f${String(i % 30).padStart(2, '0')}`
          const name = `t${Math.floor(i / 30)}`
          return {
            test: { testId: makeTestId('unit', module, name), suite: 'unit', module, name, file: null },
            ...{ status: i % 11 === 0 ? ('failed' as const) : ('passed' as const), flakyOnRetry: false },
            ...{ durationMs: 5, errorType: null, message: null, healingOccurred: false, attempts: [] },
            position: Math.floor(i / 30),
          }
        })
        await a.ingestReport({ file: 'spread.json', contentHash: 'spread', runs: [{ run, results }] })
        const before = resolveAnalysisConfig({ scoring: { lookbackDays: 13 } })
        expect(analysisFingerprint(before)).not.toBe(config)
        expect(await refreshAnalyses(a, before)).toEqual({ claimed: 300, written: 300 })
        // A refresh reads the file-mates of what it claims: 25 rows from 25 files would read 250 histories.
        const claims = await b.analyses().claimOtherConfig(config, 25)
        const files = claims.map((c) => c.testId.split('::')[1]).sort()
        expect(files).toEqual([...Array(10).fill('f00'), ...Array(10).fill('f01'), ...Array(5).fill('f02')])
        await b.analyses().releaseClaims(claims)
        // Each history is read once, and the rows equal the full re-analysis under the new configuration.
        let read = 0
        const scan = b.scanHistory.bind(b)
        b.scanHistory = (filter) => {
          read += filter?.testIds?.length ?? Infinity
          return scan(filter)
        }
        expect(await refreshAnalyses(b, cfg, { otherConfig: true, chunk: 25 })).toEqual({ claimed: 300, written: 300 })
        expect(read).toBe(300)
        const clock = await storeClock(b)
        expect(await exactRows(b, clock)).toEqual(await reference(b, clock))
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })
  })

  describe(`the sweep shares its work through leases (${backend})`, () => {
    it('two instances sweeping at once analyse each row once, and the result is the full re-analysis', async () => {
      const [a, b] = await open()
      try {
        const tests = await staleHistory(a)
        const [da, db] = await Promise.all([
          refreshAnalyses(a, cfg, { chunk: 2 }),
          refreshAnalyses(b, cfg, { chunk: 2 }),
        ])
        expect(da.claimed + db.claimed).toBe(tests)
        expect(da.written + db.written).toBe(tests)
        const clock = await storeClock(a)
        expect(await exactRows(b, clock)).toEqual(await reference(a, clock))
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })

    it('a leased row is not claimed again, and an upload meanwhile makes its write a no-op', async () => {
      const [a, b] = await open()
      try {
        await staleHistory(a)
        const clock = await storeClock(a)
        const claims = await a.analyses().claimAnalyses({ clock, limit: 100 })
        expect(claims).toHaveLength(12)
        // Another instance finds nothing to do while the lease holds.
        expect(await b.analyses().claimAnalyses({ clock, limit: 100 })).toEqual([])
        // A report of one file lands while the first instance analyses: that file's rows are stale again, lease
        // or not, and the first instance's writes of them do not happen.
        await b.ingestReport(oneResultReport('later', 't0', 0, 'late'))
        const stale = emptyRowsOf(claims, clock)
        // The 4 tests of file f0 were marked by the upload; the 8 others are written.
        expect(await a.analyses().writeAnalyses(stale)).toBe(8)
        // The upload cleared the lease of the rows it marked: its writer (or any sweep) takes them at once.
        const again = await b.analyses().claimAnalyses({ clock: await storeClock(b), limit: 100 })
        expect(again.map((c) => c.testId).sort()).toEqual([0, 1, 2, 3].map((t) => makeTestId('unit', 'f0', `t${t}`)))
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })

    it('an upload takes a stale row from a refresh that holds it, after another refresh ended its lease', async () => {
      const [a, b] = await open()
      try {
        await staleHistory(a)
        const clock = await storeClock(a)
        const f0 = [{ suite: 'unit', module: 'f0' }]
        // Two refreshes hold file f0's stale rows at one version: a sweep's claim, and a writer's, which claims
        // leased rows too. The sweep gives its claims back (its write failed), which ends the leases.
        const sweep = await a.analyses().claimAnalyses({ clock, limit: 100, files: f0 })
        const writer = await b.analyses().claimAnalyses({ clock, limit: 100, files: f0, leased: true })
        expect(writer.map((c) => c.version)).toEqual(sweep.map((c) => c.version))
        await a.analyses().releaseClaims(sweep)
        // An upload of the file lands before the writer's refresh writes what it read before the upload.
        await b.ingestReport(oneResultReport('later', 't0', 0, 'late'))
        const rows = emptyRowsOf(writer, clock)
        expect(await b.analyses().writeAnalyses(rows)).toBe(0)
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })

    it('a test a report adds to a file being refreshed is not left leased by that refresh', async () => {
      const [a, b] = await open()
      try {
        await staleHistory(a)
        // The sweep of one instance claims file f0 and reads its histories; then, before it claims the file-mates
        // that its order hints read, the other instance stores a report that adds test t4 to f0.
        const real = a.analyses.bind(a)
        let landed = false
        a.analyses = () => {
          const analyses = real()
          return Object.assign(Object.create(analyses) as typeof analyses, {
            fileMates: async (testIds: string[]) => {
              if (!landed) {
                landed = true
                await b.ingestReport(oneResultReport('added', 't4', 4))
              }
              return analyses.fileMates(testIds)
            },
          })
        }
        const swept = await refreshAnalyses(a, cfg, { maxRows: 4, chunk: 4 })
        expect(landed).toBe(true)
        // Its 4 rows were marked by the report, so none is written, and t4 (claimed as a file-mate) is not either.
        expect(swept).toEqual({ claimed: 5, written: 0 })
        // Its lease on t4 ended with the failed write: the next refresh (here another instance's sweep) takes every
        // stale row at once, t4 included, instead of leaving it unanalysed for the lease's minute.
        expect(await refreshAnalyses(b, cfg)).toEqual({ claimed: 13, written: 13 })
        const clock = await storeClock(b)
        const rows = await exactRows(b, clock)
        expect(rows.get(makeTestId('unit', 'f0', 't4'))).toEqual(
          (await reference(b, clock)).get(makeTestId('unit', 'f0', 't4')),
        )
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })

    it("a writer's refresh analyses its own rows that another refresh holds a lease on", async () => {
      const [a, b] = await open()
      try {
        await staleHistory(a)
        await b.ingestReport(oneResultReport('own', 't0', 0))
        // Another instance claims every stale row, then never writes them (it stopped, or its writes failed).
        const clock = await storeClock(a)
        expect(await a.analyses().claimAnalyses({ clock, limit: 100 })).toHaveLength(12)
        // The writer does not answer before its rows are analysed: the 4 rows of its file, leased or not.
        expect(await refreshAnalyses(b, cfg, { runIds: ['own'] })).toEqual({ claimed: 4, written: 4 })
        const rows = await exactRows(b, clock)
        const want = await reference(b, clock)
        for (const t of [0, 1, 2, 3]) {
          const id = makeTestId('unit', 'f0', `t${t}`)
          expect(rows.get(id)).toEqual(want.get(id))
        }
        // A sweep still leaves the leased rows of other files alone.
        expect(await refreshAnalyses(b, cfg)).toEqual({ claimed: 0, written: 0 })
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })
  })
}

{
  const dir = mkdtempSync(join(tmpdir(), 'fw-lease-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  let k = 0
  leaseChecks('sqlite', async () => {
    const file = join(dir, `l${k++}.db`)
    return [await openSqliteStore(file), await openSqliteStore(file)]
  })
}
if (pg.url !== undefined) {
  const db = schemas(pg.url)
  afterAll(() => db.dropAll())
  leaseChecks('postgres', async () => {
    const url = db.fresh()
    return [await openPostgresStore(url), await openPostgresStore(url)]
  })
}
