import type { FastifyInstance } from 'fastify'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import { listTests, type ListTestsArgs } from '../../src/mcp/list-tests.js'
import { ownerLookupFromConfig } from '../../src/owners/read-codeowners.js'
import { refreshAnalyses } from '../../src/pipeline/persisted-analyses.js'
import { buildSnapshot } from '../../src/server/snapshot.js'
import type { ImpactResponse, LeaderboardResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { ANSWER_TTL_MS, PersistedReads, READ_REFRESH_ROWS } from '../../src/server/persisted-reads.js'
import { snapshotSummariesOf } from '../../src/server/routes/mcp.js'
import type { RefreshAsk, RefreshOutcome } from '../../src/server/snapshot-builder.js'
import type { AnalysisStore } from '../../src/store/analyses.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { HistoryFilter, Store } from '../../src/store/store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { random, randomUploads, T0, type Upload } from '../helpers/random-history.js'
import { makeTestId } from '../../src/model.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { auth, config, DAY, NOW, tempDir, until } from './helpers.js'

const pg = await resolveTestPg()
const cfg = resolveAnalysisConfig()

/** The store, recording the filter of every history scan: a wrapper, every call reaches the real store. */
function recordingScans(store: Store): { store: Store; filters: HistoryFilter[] } {
  const filters: HistoryFilter[] = []
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (prop === 'scanHistory') {
        return (filter?: HistoryFilter) => {
          filters.push(filter ?? {})
          return target.scanHistory(filter)
        }
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: wrapped, filters }
}

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface Backend {
  name: string
  open(): Promise<Store>
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    async open() {
      const tmp = tempDir()
      cleanups.push(tmp.cleanup)
      return openSqliteStore(join(tmp.dir, 'fw.db'))
    },
  },
]
const pgSchemas = pg.url === undefined ? null : schemas(pg.url)
if (pgSchemas) {
  afterAll(() => pgSchemas.dropAll())
  backends.push({ name: 'PostgreSQL', open: () => openPostgresStore(pgSchemas.fresh()) })
}

/** An app over the store, answering on this thread, with no sweep: whatever it analyses, a read asked for. */
async function appOver(store: Store, conf = config(), now?: () => number): Promise<FastifyInstance> {
  const app = await createApp({
    store,
    config: conf,
    now,
    webRoot: null,
    analysisWorker: false,
    uploadWorkers: false,
    analysisSweep: false,
  })
  cleanups.push(() => app.close())
  return app
}

const get = async <T>(app: FastifyInstance, url: string): Promise<T> => {
  const r = await app.inject({ method: 'GET', url: `/api/v1/${url}` })
  expect({ url, status: r.statusCode }).toEqual({ url, status: 200 })
  return r.json<T>()
}

/** A tool's answer over `POST /mcp` (stateless JSON-RPC), parsed. */
async function mcpCall(app: FastifyInstance, name: string, args: object): Promise<unknown> {
  const r = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  expect({ name, status: r.statusCode }).toEqual({ name, status: 200 })
  const body = r.json<{ result: { content: { text: string }[] } }>()
  return JSON.parse(body.result.content[0]!.text)
}

/** An answer without the time it was read at. */
const timeless = (body: unknown) => ({ ...(body as object), generated_at: null })

/** The random histories' analysis clock: a day after their last run (`randomUploads` spans 60 days from T0). */
const CLOCK = T0 + 61 * DAY

/** An upload of `randomUploads` as if of another suite: its tests and its run are that suite's. */
function ofSuite(u: Upload, suite: string): Upload {
  return {
    ...u,
    run: { ...u.run, runId: `${suite}-${u.run.runId}`, suite },
    results: u.results.map((r) => ({
      ...r,
      test: { ...r.test, suite, testId: makeTestId(suite, r.test.module, r.test.name) },
    })),
  }
}

for (const backend of backends) {
  describe(`reads answered from the persisted analyses (${backend.name})`, () => {
    it('answers its first reads on a store of many tests without scanning their history', async () => {
      const store = await backend.open()
      cleanups.push(() => store.close())
      const tests = Array.from({ length: 600 }, (_, i) => `t-${i}`)
      for (let r = 0; r < 8; r++) {
        const run = runMeta(`r${r}`, new Date(NOW - (r + 1) * 3_600_000).toISOString())
        await store.ingestReport(
          batch(
            run,
            tests.map((t, i) => result(t, (r + i) % 5 ? 'passed' : 'failed')),
          ),
        )
      }
      // As `flakewatch ingest` and uploads leave them: every test analysed.
      await refreshAnalyses(store, cfg)
      const recorded = recordingScans(store)
      const app = await appOver(recorded.store)
      const board = await get<LeaderboardResponse>(app, 'leaderboard?limit=5')
      expect(board.total).toBe(600)
      expect(board.rows).toHaveLength(5)
      expect(board.pending).toBeUndefined()
      await get(app, 'kiosk')
      await get(app, 'trends')
      await get(app, `tests/${encodeURIComponent(board.rows[0]!.test_id)}`)
      await get(app, 'leaderboard?sort=name&search=t-5&verdict=flaky')
      // The heatmap reads its page's tests' recent results, by test: never the store's.
      await get(app, 'heatmap?limit=20')
      expect(recorded.filters.filter((f) => f.testIds === undefined)).toEqual([])
      expect(recorded.filters.flatMap((f) => f.testIds ?? []).length).toBeLessThanOrEqual(20)
      // The impact page reads the results of the tests that failed in the window, by test: never the store's.
      recorded.filters.length = 0
      const impact = await get<ImpactResponse>(app, 'impact')
      expect(impact.totals.tests).toBe(600)
      expect(recorded.filters.length).toBeGreaterThan(0)
      expect(recorded.filters.filter((f) => f.testIds === undefined)).toEqual([])
      // A suite's reads too: the same rows, narrowed to its tests.
      recorded.filters.length = 0
      const suite = await get<LeaderboardResponse>(app, 'leaderboard?limit=5&suite=unit')
      expect([suite.total, suite.runs]).toEqual([600, 8])
      expect((await get<LeaderboardResponse>(app, 'leaderboard?suite=api')).total).toBe(0)
      await get(app, 'kiosk?suite=unit')
      await get(app, 'trends?suite=unit')
      await get(app, `tests/${encodeURIComponent(board.rows[0]!.test_id)}?suite=unit`)
      await get(app, 'leaderboard?sort=name&search=t-5&verdict=flaky&suite=unit')
      await get(app, 'heatmap?limit=20&suite=unit')
      expect((await get<ImpactResponse>(app, 'impact?suite=unit')).totals.tests).toBe(600)
      expect(recorded.filters.filter((f) => f.testIds === undefined)).toEqual([])
    })

    it('says how many tests are pending when more are stale than a read re-analyses, and catches up', async () => {
      const store = await backend.open()
      cleanups.push(() => store.close())
      const tests = Array.from({ length: 700 }, (_, i) => `s-${i}`)
      for (let r = 0; r < 3; r++) {
        const run = runMeta(`p${r}`, new Date(NOW - (r + 1) * DAY).toISOString())
        await store.ingestReport(
          batch(
            run,
            tests.map((t) => result(t, 'passed')),
          ),
        )
      }
      const app = await appOver(store)
      const first = await get<LeaderboardResponse>(app, 'leaderboard')
      expect(first.pending).toBeGreaterThan(0)
      // Reads do not wait for the refresh they start: they answer at once, and catch up as it writes rows.
      let last = first
      await until(async () => {
        last = await get<LeaderboardResponse>(app, 'leaderboard')
        return last.total === 700 && last.pending === undefined
      }, 60_000)
      expect(last.total).toBe(700)
      expect(last.pending).toBeUndefined()
    })

    it.each([2000, 2001, 2002, 2003])(
      'answers as a full analysis of the history does, of every suite and of each, random seed %i',
      async (seed) => {
        const store = await backend.open()
        cleanups.push(() => store.close())
        const rand = random(seed)
        let n = 0
        // Two suites' histories, each random: a suite's reads show its own tests and runs, at the store's clock.
        for (const u of [...randomUploads(rand), ...randomUploads(rand).map((u) => ofSuite(u, 'api'))]) {
          await store.ingestReport(
            {
              file: `${u.run.runId}-${n}.json`,
              contentHash: `${seed}-${n++}`,
              // Every run has the facet `all=yes`: that selection is every run, analysed from the histories in full
              // (the snapshot), so its answers are the reference.
              runs: [{ run: { ...u.run, env: { ...u.run.env, all: 'yes' } }, results: u.results }],
            },
            { replace: u.replace },
          )
        }
        // Owners for the impact page's groups: a test of two owners counts for each, one of none for nobody.
        const tmp = tempDir()
        cleanups.push(tmp.cleanup)
        const codeowners = join(tmp.dir, 'CODEOWNERS')
        writeFileSync(codeowners, 'src/f0.test.ts @team-a\nsrc/f1.test.ts @team-a @team-b\n')
        const conf = { ...config(), codeowners: { file: codeowners, dialect: 'github' as const, enabled: true } }
        // One clock for the rows and the reference: without it, the reference would end at its selection's newest run.
        const app = await appOver(store, conf, () => CLOCK)
        const views = [
          'leaderboard?limit=1000',
          'leaderboard?limit=1000&sort=score&order=asc',
          'leaderboard?limit=1000&sort=pass_rate',
          'leaderboard?limit=1000&sort=runs',
          'leaderboard?limit=1000&sort=flip_rate&order=asc',
          'leaderboard?limit=1000&sort=name',
          'leaderboard?limit=1000&sort=last',
          'leaderboard?limit=1000&sort=class',
          'leaderboard?limit=1000&sort=verdict',
          'leaderboard?limit=3&offset=2&search=F1',
          'leaderboard?limit=1000&verdict=flaky',
          'leaderboard?limit=1000&owner=@team-b',
          'kiosk',
          'trends',
          'heatmap',
          'heatmap?sort=name&limit=4&offset=1',
          'impact',
          'impact?limit=2',
        ]
        for (const suite of [null, 'unit', 'api', 'none']) {
          for (const view of views) {
            const url = suite === null ? view : `${view}${view.includes('?') ? '&' : '?'}suite=${suite}`
            const rows = await get(app, url)
            const snapshot = await get(app, `${url}${url.includes('?') ? '&' : '?'}env=all=yes`)
            expect({ seed, url, body: timeless(rows) }).toEqual({ seed, url, body: timeless(snapshot) })
          }
        }
        // The MCP tools list the tests the snapshot listed them from, in its order, with its figures.
        const snapshot = await buildSnapshot(store, { env: [] }, { cfg, now: CLOCK })
        const reference = snapshotSummariesOf(snapshot)
        const owners = ownerLookupFromConfig(conf, process.cwd())
        const cases: ListTestsArgs[] = [
          {},
          { verdicts: ['flaky', 'broken', 'healthy', 'insufficient_data'] },
          { verdicts: ['healthy'], suite: 'unit', search: 'F1', limit: 2, offset: 1 },
          { owner: '@team-b', verdicts: ['flaky', 'healthy'] },
          { suite: 'api', verdicts: ['flaky', 'broken', 'healthy'] },
          { suite: 'other' },
        ]
        for (const args of cases) {
          const listed = await mcpCall(app, 'list_tests', args)
          const expected = await listTests(
            {
              summaries: () => Promise.resolve(reference),
              ownersOf: owners,
              quarantine: { list: () => Promise.resolve([]) },
            } as never,
            args,
          )
          expect({ seed, args, listed }).toEqual({ seed, args, listed: JSON.parse(JSON.stringify(expected)) })
        }
        const board = await get<LeaderboardResponse>(app, 'leaderboard?limit=1000')
        const bySuite = (suite: string) => board.rows.filter((r) => r.suite === suite).slice(0, 2)
        for (const row of [...bySuite('unit'), ...bySuite('api')]) {
          const path = `tests/${encodeURIComponent(row.test_id)}`
          const reference = await get<{ analysis: Record<string, unknown> }>(app, `${path}?env=all=yes`)
          const other = row.suite === 'unit' ? 'api' : 'unit'
          for (const query of ['', `?suite=${row.suite}`]) {
            const detail = await get<{ analysis: Record<string, unknown> }>(app, `${path}${query}`)
            // The persisted analysis is `analyze --json`'s, over the whole history: its first run may be older.
            expect({ seed, query, analysis: { ...detail.analysis, first_run_at: null } }).toEqual({
              seed,
              query,
              analysis: { ...reference.analysis, first_run_at: null },
            })
          }
          // Of another suite, a test has no analysis.
          expect((await get<{ analysis: unknown }>(app, `${path}?suite=${other}`)).analysis).toBeNull()
        }
      },
    )
  })
}

/** The store, counting the calls of each of its analysis reads: a wrapper, every call reaches the real store. */
function countingAnalyses(store: Store): {
  store: Store
  calls: Map<string, number>
  last: Map<string, Promise<unknown>>
} {
  const calls = new Map<string, number>()
  const last = new Map<string, Promise<unknown>>()
  const analyses = (real: AnalysisStore) =>
    new Proxy(real, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown
        if (typeof value !== 'function' || typeof prop !== 'string') return value
        return (...args: unknown[]) => {
          calls.set(prop, (calls.get(prop) ?? 0) + 1)
          const out = (value as (...a: unknown[]) => unknown).apply(target, args)
          if (out instanceof Promise) last.set(prop, out)
          return out
        }
      },
    })
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'analyses') return () => analyses(target.analyses())
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: wrapped, calls, last }
}

/** A refresh that waits until released, then re-analyses the rows asked for, as the analysis worker would. */
function heldRefresh(store: Store): {
  refresh: (ask: RefreshAsk) => Promise<RefreshOutcome>
  asks: RefreshAsk[]
  release: () => void
} {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const asks: RefreshAsk[] = []
  return {
    asks,
    release,
    refresh: async (ask) => {
      asks.push(ask)
      await held
      return refreshAnalyses(store, cfg, { maxRows: ask.maxRows, clock: ask.clock })
    },
  }
}

/** `n` tests of one run at `at`, each passing. */
const passing = (runId: string, at: number, names: string[]) =>
  batch(
    runMeta(runId, new Date(at).toISOString()),
    names.map((n) => result(n, 'passed')),
  )

for (const backend of backends) {
  describe(`answers kept by an instance (${backend.name})`, () => {
    /**
     * A store of 10 analysed tests and an instance's reads that have answered once; then 5 more tests stored by a
     * writer that has not analysed them yet, and the window read again (as after a write through the instance).
     */
    async function pendingReads(
      opts: { refresh?: (store: Store) => (ask: RefreshAsk) => Promise<RefreshOutcome>; fresh?: () => boolean } = {},
    ) {
      const real = await backend.open()
      cleanups.push(() => real.close())
      const old = Array.from({ length: 10 }, (_, i) => `old-${i}`)
      for (let r = 0; r < 3; r++) await real.ingestReport(passing(`o${r}`, NOW - (r + 2) * DAY, old))
      await refreshAnalyses(real, cfg)
      const counted = countingAnalyses(real)
      const held = heldRefresh(real)
      const reads = new PersistedReads({
        store: () => counted.store,
        cfg,
        refresh: opts.refresh?.(real) ?? held.refresh,
        fresh: opts.fresh,
      })
      expect((await reads.window()).pending).toBe(0)
      await real.ingestReport(
        passing(
          'n0',
          NOW - DAY,
          Array.from({ length: 5 }, (_, i) => `new-${i}`),
        ),
      )
      reads.invalidate()
      counted.calls.clear()
      return { real, counted, held, reads }
    }
    const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0)

    it('waits for a small refresh on its first read only', async () => {
      const store = await backend.open()
      cleanups.push(() => store.close())
      await store.ingestReport(passing('f0', NOW - DAY, ['a', 'b', 'c']))
      const held = heldRefresh(store)
      const reads = new PersistedReads({ store: () => store, cfg, refresh: held.refresh })
      const first = reads.window()
      await until(() => held.asks.length === 1)
      held.release()
      expect((await first).pending).toBe(0)
      expect(total(await reads.analyses(await first).countAnalyses(reads.filter(await first, {})))).toBe(3)
    })

    it('keeps answers while rows are pending, and never waits for the refresh it starts', async () => {
      const { counted, held, reads } = await pendingReads()
      const windows = await Promise.all([reads.window(), reads.window(), reads.window()])
      const w = windows[0]
      expect(w.pending).toBeGreaterThan(0)
      // One window read, one bounded refresh asked for (still held: the reads did not wait for it).
      expect(new Set(windows).size).toBe(1)
      expect(counted.calls.get('dueAnalyses')).toBe(1)
      expect(held.asks.map((a) => a.maxRows)).toEqual([READ_REFRESH_ROWS])
      const filter = reads.filter(w, {})
      const answers = await Promise.all([1, 2, 3].map(() => reads.analyses(w).countAnalyses(filter)))
      const again = await reads.analyses(await reads.window()).countAnalyses(filter)
      // The 5 new tests have no analysis yet: the window shows the 10 analysed ones, from one kept answer.
      expect([...answers, again].map(total)).toEqual([10, 10, 10, 10])
      expect(counted.calls.get('countAnalyses')).toBe(1)
      expect(counted.calls.get('dueAnalyses')).toBe(1)
    })

    it('serves the previous answer while the next is computed, then the new one', async () => {
      const { counted, held, reads } = await pendingReads()
      const w = await reads.window()
      const filter = reads.filter(w, {})
      expect(total(await reads.analyses(w).countAnalyses(filter))).toBe(10)
      // The refresh writes the new tests' rows: what is kept is out of date.
      held.release()
      await reads.settled()
      // Readers meanwhile get the previous answer, and one computation of the next one runs.
      const stale = await Promise.all([1, 2, 3].map(() => reads.analyses(w).countAnalyses(filter)))
      expect(stale.map(total)).toEqual([10, 10, 10])
      expect(counted.calls.get('countAnalyses')).toBe(2)
      await counted.last.get('countAnalyses')
      expect(total(await reads.analyses(w).countAnalyses(filter))).toBe(15)
      expect(counted.calls.get('countAnalyses')).toBe(2)
      // The window too: the previous one, then the one without pending rows.
      expect((await reads.window()).pending).toBeGreaterThan(0)
      await counted.last.get('windowRuns')
      await until(async () => (await reads.window()).pending === 0)
    })

    it('computes one answer per key at a time, and keeps none for a read pinned to its write', async () => {
      let pinned = false
      const { counted, reads } = await pendingReads({
        refresh: (store) => (ask) => refreshAnalyses(store, cfg, ask),
        fresh: () => pinned,
      })
      const w = await reads.window()
      const page = { ...reads.filter(w, {}), sort: 'flaky', order: 'desc', offset: 0, limit: 5 } as const
      const pages = await Promise.all(Array.from({ length: 20 }, () => reads.analyses(w).pageAnalyses(page)))
      expect(pages.map((p) => p.length)).toEqual(Array.from({ length: 20 }, () => 5))
      expect(counted.calls.get('pageAnalyses')).toBe(1)
      pinned = true
      await reads.window()
      await reads.analyses(w).pageAnalyses(page)
      expect([counted.calls.get('dueAnalyses'), counted.calls.get('pageAnalyses')]).toEqual([2, 2])
    })

    it("shows the instance's own upload at once, and another instance's within the time an answer is kept", async () => {
      const store = await backend.open()
      cleanups.push(() => store.close())
      const old = Array.from({ length: 10 }, (_, i) => `old-${i}`)
      for (let r = 0; r < 3; r++) await store.ingestReport(passing(`o${r}`, NOW - (r + 2) * DAY, old))
      await refreshAnalyses(store, cfg)
      const [a, b] = await Promise.all([appOver(store), appOver(store)])
      const total = async (app: FastifyInstance) => (await get<LeaderboardResponse>(app, 'leaderboard?limit=1')).total
      const upload = (name: string, runId: string) =>
        a.inject({
          method: 'POST',
          url: `/api/v1/reports?suite=unit&run_id=${runId}`,
          headers: { ...auth(), 'content-type': 'application/xml' },
          payload: `<testsuite name="s" timestamp="${new Date(NOW - 3_600_000).toISOString().slice(0, 19)}"><testcase classname="m" name="${name}"/></testsuite>`,
        })
      expect(await total(a)).toBe(10)
      // B's answers settle after this: while less than their time has passed since, B serves them.
      const keptSince = performance.now()
      expect(await total(b)).toBe(10)
      expect((await upload('newcomer', 'up-1')).statusCode).toBe(201)
      // Through A: its next read sees it, kept answers or not.
      expect(await total(a)).toBe(11)
      // Through B: its answer is kept a moment, then the upload shows.
      const onB = await total(b)
      if (performance.now() - keptSince < ANSWER_TTL_MS) expect(onB).toBe(10)
      await until(async () => (await total(b)) === 11, 10_000)
    })
  })
}

describe('a read-only instance over rows nobody refreshed (SQLite)', () => {
  it('lists the analysed tests, and says in list_tests and /impact how many are pending', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const file = join(tmp.dir, 'fw.db')
    const writer = await openSqliteStore(file)
    cleanups.push(() => writer.close())
    const run = (id: string, hoursAgo: number, tests: string[]) =>
      batch(
        runMeta(id, new Date(NOW - hoursAgo * 3_600_000).toISOString()),
        tests.map((t, i) => result(t, i % 3 ? 'passed' : 'failed')),
      )
    const old = Array.from({ length: 30 }, (_, i) => `old-${i}`)
    for (let r = 0; r < 4; r++) await writer.ingestReport(run(`o${r}`, 10 - r, old))
    await refreshAnalyses(writer, cfg)
    // A writer that does not re-analyse (an old release): its new tests' rows are never analysed.
    const fresh = Array.from({ length: 12 }, (_, i) => `new-${i}`)
    await writer.ingestReport(run('n0', 2, fresh))
    const reader = await openSqliteStore(file, { readOnly: true })
    cleanups.push(() => reader.close())
    const app = await appOver(reader)
    const board = await get<LeaderboardResponse>(app, 'leaderboard?limit=100')
    expect(board.total).toBe(30)
    // A bound, not a tally (the old tests' rows were marked with their new file-mates'): at least the new tests.
    expect(board.pending).toBeGreaterThanOrEqual(12)
    const listed = (await mcpCall(app, 'list_tests', {
      verdicts: ['healthy', 'flaky', 'broken', 'insufficient_data'],
    })) as {
      total: number
      pending?: number
    }
    expect(listed).toMatchObject({ total: 30, pending: board.pending })
    const impact = await get<ImpactResponse>(app, 'impact')
    expect(impact).toMatchObject({ pending: board.pending, totals: { tests: 30 } })
  })
})
