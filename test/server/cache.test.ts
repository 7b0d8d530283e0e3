import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { LeaderboardResponse } from '../../src/server/api-types.js'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import { createApp, type AppDeps } from '../../src/server/app.js'
import { createSnapshotBuilder, type SnapshotBuilder } from '../../src/server/snapshot-builder.js'
import { buildSnapshot, DELTA_MAX_RUNS } from '../../src/server/snapshot.js'
import { createSnapshotCache, MAX_VALUES } from '../../src/server/snapshot-cache.js'
import { WRITTEN_RUNS_MAX, type HistoryFilter, type Store } from '../../src/store/store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { comparable } from './comparable.js'
import { auth, config, DAY, NOW, seed, START, tempDir, until } from './helpers.js'

/** The store, counting analysis scans: a wrapper, not a mock; every call reaches the real SQLite file. */
function counting(
  store: Store,
  onScan: () => void = () => undefined,
): { store: Store; scans: () => number; filters: HistoryFilter[] } {
  let scans = 0
  const filters: HistoryFilter[] = []
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (prop === 'scanHistory') {
        return (...args: Parameters<Store['scanHistory']>) => {
          scans++
          filters.push(args[0] ?? {})
          onScan()
          return target.scanHistory(...args)
        }
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: wrapped, scans: () => scans, filters }
}

/** The builder, counting full builds and incremental deltas: every call reaches the real one. */
function countingBuilder(real: SnapshotBuilder): {
  builder: SnapshotBuilder
  builds: () => number
  deltas: () => number
} {
  let builds = 0
  let deltas = 0
  const builder: SnapshotBuilder = {
    kind: real.kind,
    build: (...args) => {
      builds++
      return real.build(...args)
    },
    delta: (...args) => {
      deltas++
      return real.delta(...args)
    },
    look: (request) => real.look(request),
    refresh: (chunk) => real.refresh(chunk),
    close: () => real.close(),
  }
  return { builder, builds: () => builds, deltas: () => deltas }
}

/** The store, counting finished probes for other instances' writes. */
function countingProbes(store: Store): { store: Store; done: () => number } {
  let done = 0
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (prop === 'runsWrittenSince') {
        return (...args: Parameters<Store['runsWrittenSince']>) =>
          target.runsWrittenSince(...args).finally(() => done++)
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: wrapped, done: () => done }
}

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A selection analysed from its histories (a snapshot): every run of the seeded store, and the uploads after. */
const SELECTION = 'suite=unit&last=1000'

async function setup(deps: Partial<AppDeps> = {}, onScan?: () => void) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const file = join(tmp.dir, 'fw.db')
  const raw = await openSqliteStore(file)
  cleanups.push(() => raw.close())
  await seed(raw)
  const c = counting(raw, onScan)
  const app = await createApp({ store: c.store, config: config(), now: () => NOW, webRoot: null, ...deps })
  cleanups.push(() => app.close())
  // A selection of the newest runs: the default one (of every suite or of one) is answered from the persisted
  // analyses, with no snapshot to cache.
  const board = async (q = '') =>
    (
      await app.inject({ method: 'GET', url: `/api/v1/leaderboard?${SELECTION}${q.replace('?', '&')}` })
    ).json<LeaderboardResponse>()
  return { app, file, raw, scans: c.scans, filters: c.filters, board }
}

function newcomerBatch(runId: string) {
  return batch(runMeta(runId, new Date(NOW - 3_600_000).toISOString()), [result('newcomer', 'passed')])
}

describe('analysis cache', () => {
  it('answers every view of one selection from one scan, even when asked at once', async () => {
    const { app, scans } = await setup()
    const urls = ['leaderboard', 'heatmap', 'trends', 'kiosk', 'leaderboard?sort=name&'].map(
      (u) => `/api/v1/${u}${u.endsWith('&') ? '' : '?'}${SELECTION}`,
    )
    const answers = await Promise.all(urls.map((url) => app.inject({ method: 'GET', url })))
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200])
    expect(scans()).toBe(1)
    await app.inject({ method: 'GET', url: '/api/v1/leaderboard?suite=unit&last=5' })
    expect(scans()).toBe(2)
    await app.inject({ method: 'GET', url: '/api/v1/heatmap?suite=unit&last=5' })
    expect(scans()).toBe(2)
  })

  it('sees a write through this process at once, re-reading only the tests it touched', async () => {
    const { app, scans, filters, board } = await setup()
    const before = await board()
    const body = `<testsuite name="s"><testcase classname="m" name="uploaded"/></testsuite>`
    const up = await app.inject({
      method: 'POST',
      url: '/api/v1/reports?suite=unit&run_id=up-1',
      headers: { ...auth(), 'content-type': 'application/xml' },
      payload: body,
    })
    expect(up.statusCode).toBe(201)
    const after = await board()
    expect(after.total).toBe(before.total + 1)
    // After the first full read, the store is read only for the upload's one test, by id: once to refresh its
    // persisted analysis (docs/scaling.md), once by the cache. No full rescan.
    expect(scans()).toBe(3)
    expect(filters[0]!.testIds).toBeUndefined()
    expect(filters[1]!.testIds).toEqual(['unit::m::uploaded'])
    expect(filters[2]!.testIds).toEqual(['unit::m::uploaded'])
  })

  it('finds another instance’s write within the TTL, answering from the old snapshot meanwhile', async () => {
    const { file, board } = await setup({ cache: { ttlMs: 0 } })
    const first = await board()
    const other = await openSqliteStore(file)
    cleanups.push(() => other.close())
    await other.ingestReport(newcomerBatch('other-1'))
    // This answer must not wait for a rebuild: it is the old snapshot, and it starts the probe.
    const stale = await board()
    expect(stale.generated_at).toBe(first.generated_at)
    await until(async () => (await board()).rows.some((r) => r.name === 'newcomer'))
  })

  it('applies another instance’s writes incrementally, old-stamped runs included, equal to a full build', async () => {
    const { file, raw } = await setup()
    const cfg = resolveAnalysisConfig()
    const b = countingBuilder(createSnapshotBuilder({ store: raw, cfg }))
    const cache = createSnapshotCache({ store: raw, builder: b.builder, now: () => NOW, ttlMs: 0 })
    const selection = { env: [] }
    const first = await cache.get(selection)
    expect(b.builds()).toBe(1)
    const other = await openSqliteStore(file)
    cleanups.push(() => other.close())
    await other.ingestReport(newcomerBatch('other-1'))
    // A report of long ago: not among the newest runs, yet written now.
    const old = runMeta('other-old', new Date(START + DAY / 2).toISOString())
    await other.ingestReport(batch(old, [result('old-timer', 'failed'), result('stable', 'failed')]))
    // Answered from the snapshot it has; the probe this starts finds both writes.
    expect(await cache.get(selection)).toBe(first)
    let latest = first
    await until(async () => (latest = await cache.get(selection)).byId.has('unit::mod::old-timer'))
    expect(latest.byId.has('unit::mod::newcomer')).toBe(true)
    expect(b.builds()).toBe(1)
    expect(b.deltas()).toBeGreaterThanOrEqual(1)
    expect(comparable(latest)).toEqual(comparable(await buildSnapshot(raw, selection, { cfg, now: latest.now })))
  })

  it('rebuilds in full when another instance wrote more runs than an update takes, or than a probe reads', async () => {
    const { file, raw } = await setup()
    const b = countingBuilder(createSnapshotBuilder({ store: raw, cfg: resolveAnalysisConfig() }))
    const cache = createSnapshotCache({ store: raw, builder: b.builder, now: () => NOW, ttlMs: 0 })
    const selection = { env: [] }
    await cache.get(selection)
    const other = await openSqliteStore(file)
    cleanups.push(() => other.close())
    const write = async (prefix: string, runs: number) => {
      for (let i = 0; i < runs; i++) await other.ingestReport(newcomerBatch(`${prefix}-${i}`))
    }
    // More runs in the selection than one incremental update may touch: its delta declines, a build follows.
    await write('many', DELTA_MAX_RUNS + 1)
    await until(async () => (await cache.get(selection)).runs.some((r) => r.runId === 'many-0'))
    expect(b.builds()).toBe(2)
    // More than a probe may read: it cannot tell which ran, so every snapshot is rebuilt without asking for a delta.
    const deltas = b.deltas()
    await write('more', WRITTEN_RUNS_MAX)
    await until(async () => (await cache.get(selection)).runs.some((r) => r.runId === 'more-0'))
    expect(b.builds()).toBe(3)
    expect(b.deltas()).toBe(deltas)
  }, 60_000)

  it('never applies its own writes again as another instance’s', async () => {
    const { raw } = await setup()
    const probes = countingProbes(raw)
    const b = countingBuilder(createSnapshotBuilder({ store: raw, cfg: resolveAnalysisConfig() }))
    const cache = createSnapshotCache({ store: probes.store, builder: b.builder, now: () => NOW, ttlMs: 0 })
    const selections = [{ env: [] }, { env: [], last: 5 }]
    for (const s of selections) await cache.get(s)
    // Stored by this process (as the upload route does), then announced.
    await raw.ingestReport(newcomerBatch('own-1'))
    await cache.applyWrite(['own-1'])
    expect(b.deltas()).toBe(2)
    for (const s of selections) expect((await cache.get(s)).byId.has('unit::mod::newcomer')).toBe(true)
    // Later probes see the run as written, and know it.
    for (let i = 0; i < 3; i++) {
      const done = probes.done()
      await until(async () => {
        for (const s of selections) await cache.get(s)
        return probes.done() > done
      })
    }
    expect(b.deltas()).toBe(2)
    expect(b.builds()).toBe(2)
  })

  it('probes for other instances’ writes once a second by default, and keeps small values for 5 s', async () => {
    const { raw } = await setup()
    const probes = countingProbes(raw)
    let clock = 1_000_000
    const builder = createSnapshotBuilder({ store: raw, cfg: resolveAnalysisConfig() })
    const cache = createSnapshotCache({ store: probes.store, builder, now: () => NOW, clock: () => clock })
    const selection = { env: [] }
    await cache.get(selection)
    await until(() => probes.done() === 1)
    clock += 999
    await cache.get(selection)
    expect(probes.done()).toBe(1)
    clock += 1
    await cache.get(selection)
    await until(() => probes.done() === 2)
    // Another instance's upload: found by the next probe, a second later.
    await raw.ingestReport(newcomerBatch('elsewhere-1'))
    clock += 1000
    await cache.get(selection)
    await until(async () => (await cache.get(selection)).byId.has('unit::mod::newcomer'))
    let computed = 0
    const value = () => cache.value('k', () => Promise.resolve(++computed))
    await value()
    clock += 4999
    await value()
    expect(computed).toBe(1)
    clock += 1
    await value()
    expect(computed).toBe(2)
  })

  it('does not rebuild while nothing changed, until the snapshot is too old', async () => {
    // The cache's own clock, moved by hand: what is too old must not depend on how busy the machine is.
    let clock = 1_000_000
    const { scans, board } = await setup({ cache: { ttlMs: 0, maxAgeMs: 150, clock: () => clock } })
    await board()
    for (let i = 0; i < 5; i++) await board()
    clock += 149
    await board()
    expect(scans()).toBe(1)
    clock += 1
    await board()
    await until(() => scans() === 2)
  })

  it('waits before a rebuild for age twenty times as long as the last build took', async () => {
    let clock = 1_000_000
    // Each scan takes 100 ms of the cache's clock: rebuilds for age wait 2,000 ms, not the 150 configured.
    const cache = { ttlMs: 0, maxAgeMs: 150, clock: () => clock }
    const { scans, board } = await setup({ cache }, () => (clock += 100))
    await board()
    clock += 1999
    await board()
    expect(scans()).toBe(1)
    clock += 1
    await board()
    await until(() => scans() === 2)
  })

  it('keeps a bounded number of small values, dropping the oldest first', async () => {
    const { raw } = await setup()
    const cfg = resolveAnalysisConfig()
    const cache = createSnapshotCache({ store: raw, builder: createSnapshotBuilder({ store: raw, cfg }) })
    let computed = 0
    const value = (key: string) => cache.value(key, () => Promise.resolve(++computed))
    for (let i = 0; i <= MAX_VALUES; i++) await value(`k${i}`)
    expect(computed).toBe(MAX_VALUES + 1)
    await value(`k${MAX_VALUES}`)
    expect(computed).toBe(MAX_VALUES + 1)
    // The first key was the oldest when one too many came: it is computed again.
    await value('k0')
    expect(computed).toBe(MAX_VALUES + 2)
  })

  it('keeps answering while a rebuild scans a large store', async () => {
    let clock = 1_000_000
    const { app, raw, board } = await setup({ cache: { ttlMs: 0, maxAgeMs: 1000, clock: () => clock } })
    // Enough results that a scan takes a while, so that requests arrive during it.
    const tests = Array.from({ length: 400 }, (_, i) => `bulk-${i}`)
    for (let r = 0; r < 40; r++) {
      const run = runMeta(`bulk-run-${r}`, new Date(NOW - (r + 1) * 3_600_000).toISOString())
      await raw.ingestReport(
        batch(
          run,
          tests.map((t) => result(t, r % 7 ? 'passed' : 'failed')),
        ),
      )
    }
    const first = await board()
    await raw.ingestReport(newcomerBatch('bulk-new'))
    // Old enough to be rebuilt in full (another instance's write alone is applied incrementally).
    clock += 1000
    await board()
    const started = performance.now()
    let answered = 0
    while (performance.now() - started < 3000) {
      const r = await app.inject({ method: 'GET', url: '/healthz' })
      expect(r.statusCode).toBe(200)
      answered++
      if ((await board()).generated_at !== first.generated_at) break
    }
    // Requests are answered while the rebuild runs (how fast is the bench's business, not the test's).
    expect(answered).toBeGreaterThan(1)
    await until(async () => (await board('?search=newcomer')).total === 1)
  })
})
