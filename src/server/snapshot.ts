import {
  analyzeTest,
  createOrderIndex,
  hintToJson,
  infraRunIds,
  toAnalysisJson,
  type OrderHint,
  type PassRateClass,
  type ResolvedAnalysisConfig,
  type TestAnalysisJson,
} from '../analysis/index.js'
import { isFailure, type HistoryEntry, type ResultStatus, type Run, type VerdictKind } from '../model.js'
import type { HistoryFilter, RunSummary, Store } from '../store/store.js'
import type { HeatCell, TrendDay } from './api-types.js'
import { runTime, selectRuns, type Selection } from './selection.js'
import { leaderboardRowBase } from './to-json.js'
import { maxOf, minOf } from '../extent.js'

const DAY_MS = 86_400_000

/** Most heatmap columns kept per snapshot: enough for the dashboard's slider, bounded in memory. */
export const HEATMAP_MAX_RUNS = 500

/** Longest stretch of synchronous work before the scan lets other requests run. */
const SLICE_MS = 8

/**
 * What a snapshot keeps of one test: the fields that sort and filter, and the analysis already serialised. A
 * snapshot may be built in a worker thread; strings cross to the main thread for the price of a copy, where
 * ten thousand analyses as object graphs would take hundreds of milliseconds to deserialise.
 */
export interface SnapshotTest {
  testId: string
  name: string
  module: string
  suite: string
  verdict: VerdictKind
  score: number
  confidence: number
  failures: number
  flipRate: number
  runs: number
  passRate: number | null
  lastStatus: ResultStatus | null
  passRateClass: PassRateClass
  /** The leaderboard row as JSON, without `quarantined` (read per request). */
  row: string
  /** The full analysis, `toAnalysisJson`, as JSON. */
  detail: string
  /** One {@link HeatCell} per heatmap run, aligned with `Snapshot.heatRuns`. */
  heat: string
  /** The last five results as cells, oldest first. */
  last5: string
  /** Failures in a row at the end of the countable history, and when that streak began. */
  streak: number
  streakSince: number | null
}

export interface SuiteHealth {
  suite: string
  lastFailureAt: number | null
  lastRunAt: number | null
}

/**
 * Everything the read endpoints need about one run selection, from one streaming scan of the store. Immutable
 * once built; answers derived from it (sorted orders, serialised bodies) are memoised in `memo`. Plain data
 * (structured-cloneable), so that a worker thread can build it.
 */
export interface Snapshot {
  selection: Selection
  computedAt: number
  /** Where the analysis windows ended: the given clock, else just after the newest selected run. */
  now: number
  /** Selected runs, newest first. */
  runs: Run[]
  /** The heatmap's runs, oldest first (the newest {@link HEATMAP_MAX_RUNS} of the selection). */
  heatRuns: Run[]
  /** Tests, most flaky first. */
  tests: SnapshotTest[]
  byId: Map<string, SnapshotTest>
  runCounts: Map<string, RunSummary>
  excludedRuns: Set<string>
  trends: TrendDay[]
  suites: SuiteHealth[]
  newestRunAt: number | null
  memo: Map<string, unknown>
}

export interface BuildSnapshotOptions {
  cfg: ResolvedAnalysisConfig
  /**
   * Where the analysis windows end. Default: just after the newest selected run, as `analyzeStore` does, so that
   * a store that has not been fed for a while still shows its last weeks.
   */
  now?: number
  /** The store the scan reads; may be a second connection so that other requests are not blocked by it. */
  scanStore?: Store
}

const VERDICT_RANK: Record<VerdictKind, number> = { flaky: 0, broken: 1, healthy: 2, insufficient_data: 3 }

type Rankable = Pick<SnapshotTest, 'verdict' | 'score' | 'failures' | 'flipRate' | 'testId'>

/** "Most flaky first": flaky verdicts, then broken ones, each by score, failures and id. */
export function compareMostFlaky(a: Rankable, b: Rankable): number {
  return (
    VERDICT_RANK[a.verdict] - VERDICT_RANK[b.verdict] ||
    b.score - a.score ||
    b.failures - a.failures ||
    b.flipRate - a.flipRate ||
    (a.testId < b.testId ? -1 : a.testId > b.testId ? 1 : 0)
  )
}

const pause = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Yields to the event loop every few milliseconds, so that a long scan never stalls other requests for long. */
function slicer(): () => Promise<void> | undefined {
  let started = performance.now()
  return () => {
    const now = performance.now()
    if (now - started < SLICE_MS) return undefined
    return pause().then(() => {
      started = performance.now()
    })
  }
}

export function cellOf(e: Pick<HistoryEntry, 'status' | 'flakyOnRetry'>): HeatCell {
  switch (e.status) {
    case 'passed':
      return e.flakyOnRetry ? 'R' : 'P'
    case 'failed':
      return 'F'
    case 'error':
      return 'E'
    default:
      return 'S'
  }
}

/** Per-day counters while scanning; turned into {@link TrendDay}s at the end. */
interface DayCount {
  flaky: number
  broken: number
  tests: number
  runs: number
}

/**
 * The trend signals, one test at a time. A test counts as **flaky** on a UTC day when, in that day's countable
 * results (not skipped, not in an infrastructure-failure run), it passed only on retry, or it both passed and
 * failed on one revision: the two proofs the verdict also treats as proven flakiness. It counts as **broken** on a
 * day without any pass whose results end a streak of at least `verdict.brokenMinConsecutive` failures in a row.
 */
function countDays(entries: HistoryEntry[], excluded: Set<string>, brokenMin: number, days: Map<number, DayCount>) {
  let day = -1
  let passed = false
  let retry = false
  let mixed = false
  let streak = 0
  let revisions: Map<string, number> | null = null
  const close = () => {
    if (day < 0) return
    let d = days.get(day)
    if (!d) days.set(day, (d = { flaky: 0, broken: 0, tests: 0, runs: 0 }))
    d.tests++
    if (retry || mixed) d.flaky++
    else if (!passed && streak >= brokenMin) d.broken++
  }
  for (const e of entries) {
    if (e.status === 'skipped' || excluded.has(e.run.runId)) continue
    const d = Math.floor(e.run.at / DAY_MS)
    if (d !== day) {
      close()
      day = d
      passed = retry = mixed = false
      revisions = null
    }
    const failed = isFailure(e.status)
    if (failed) streak++
    else {
      streak = 0
      passed = true
      if (e.flakyOnRetry) retry = true
    }
    if (e.run.revision !== null && !mixed) {
      revisions ??= new Map()
      const bits = (revisions.get(e.run.revision) ?? 0) | (failed ? 2 : 1)
      revisions.set(e.run.revision, bits)
      if (bits === 3) mixed = true
    }
  }
  close()
}

export const TREND_DEFINITION = {
  flaky:
    'tests that, on that UTC day, passed only on retry or both passed and failed on one revision ' +
    '(skipped results and infrastructure-failure runs left out)',
  broken:
    'tests that did not pass that day and whose results ended a streak of at least ' +
    'verdict.brokenMinConsecutive failures in a row',
}

function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/**
 * Builds the snapshot of one selection: the runs it names, their result counts (for the infrastructure-failure
 * guard), then one scan of the store that analyses each test and fills its heatmap row, trend signals and kiosk
 * facts on the way. Yields to the event loop between slices so that the server keeps answering meanwhile.
 */
export async function buildSnapshot(store: Store, selection: Selection, opts: BuildSnapshotOptions): Promise<Snapshot> {
  const { cfg } = opts
  const scanStore = opts.scanStore ?? store
  const maybePause = slicer()
  const runs = await selectRuns(store, selection, { now: opts.now, lookbackDays: cfg.scoring.lookbackDays })
  const selected = new Set(runs.map((r) => r.runId))
  const base: HistoryFilter = { suite: selection.suite, branch: selection.branch }

  // Per-run counts (the store keeps them, so this reads runs, not results) give the infrastructure-failure guard
  // its input and each run's exact stored time. Run metadata only approximates that time, hence the margin.
  const runCounts = new Map<string, RunSummary>()
  if (runs.length) {
    const times = runs.map(runTime)
    const near = { ...base, since: minOf(times) - DAY_MS, until: maxOf(times) + DAY_MS }
    for (const s of await store.runSummaries(near)) if (selected.has(s.runId)) runCounts.set(s.runId, s)
    if (runCounts.size < selected.size) {
      for (const s of await store.runSummaries(base)) if (selected.has(s.runId)) runCounts.set(s.runId, s)
    }
  }
  const excludedRuns = infraRunIds(runCounts.values(), cfg)
  const runAt = new Map<string, number>()
  for (const r of runs) runAt.set(r.runId, runCounts.get(r.runId)?.at ?? runTime(r))
  const ats = [...runAt.values()]
  const newestRunAt = ats.length ? maxOf(ats) : null
  const now = opts.now ?? (newestRunAt === null ? Date.now() : newestRunAt + 1)
  // Bounds are only an optimisation: entries are matched by run id below.
  const filter: HistoryFilter = ats.length ? { ...base, since: minOf(ats), until: newestRunAt! } : base

  const heatRuns = runs.slice(0, HEATMAP_MAX_RUNS).reverse()
  const heatCol = new Map(heatRuns.map((r, i) => [r.runId, i]))
  const blankRow = Buffer.alloc(heatRuns.length, '.')
  const days = new Map<number, DayCount>()
  const suiteFailure = new Map<string, number>()
  const brokenMin = cfg.verdict.brokenMinConsecutive
  const tests: SnapshotTest[] = []
  // Order dependency compares tests of one file, so it is found once the scan has seen them all.
  const order = createOrderIndex(cfg.hints, { now, excludedRuns, lookbackDays: cfg.scoring.lookbackDays })

  if (runs.length) {
    for await (const h of scanStore.scanHistory(filter)) {
      let entries = h.entries
      if (entries.some((e) => !selected.has(e.run.runId))) entries = entries.filter((e) => selected.has(e.run.runId))
      if (entries.length === 0) continue
      const analysis = analyzeTest({ test: h.test, entries }, cfg, { now, excludedRuns })
      order.add({ test: h.test, entries })

      const row = Buffer.from(blankRow)
      let streak = 0
      let streakSince: number | null = null
      let lastFailure = -Infinity
      for (const e of entries) {
        const col = heatCol.get(e.run.runId)
        if (col !== undefined) row[col] = cellOf(e).charCodeAt(0)
        if (e.status === 'skipped' || excludedRuns.has(e.run.runId)) continue
        if (isFailure(e.status)) {
          if (streak++ === 0) streakSince = e.run.at
          if (e.run.at > lastFailure) lastFailure = e.run.at
        } else {
          streak = 0
          streakSince = null
        }
      }
      if (lastFailure > -Infinity) {
        const suite = h.test.suite
        suiteFailure.set(suite, Math.max(suiteFailure.get(suite) ?? -Infinity, lastFailure))
      }
      countDays(entries, excludedRuns, brokenMin, days)
      const last5 = entries
        .slice(-5)
        .map((e) => cellOf(e))
        .join('')
      tests.push({
        testId: analysis.testId,
        name: analysis.test.name,
        module: analysis.test.module,
        suite: analysis.test.suite,
        verdict: analysis.verdict,
        score: analysis.score,
        confidence: analysis.confidence,
        failures: analysis.failures,
        flipRate: analysis.flipRate,
        runs: analysis.runs,
        passRate: analysis.passRate,
        lastStatus: analysis.lastStatus,
        passRateClass: analysis.passRateClass,
        row: JSON.stringify(leaderboardRowBase(analysis)),
        detail: JSON.stringify(toAnalysisJson(analysis)),
        heat: row.toString('latin1'),
        last5,
        streak,
        streakSince,
      })
      await maybePause()
    }
  }
  addOrderHints(tests, order.hints())
  tests.sort(compareMostFlaky)

  for (const at of ats) {
    const d = Math.floor(at / DAY_MS)
    let c = days.get(d)
    if (!c) days.set(d, (c = { flaky: 0, broken: 0, tests: 0, runs: 0 }))
    c.runs++
  }
  const trends = [...days.entries()].sort((a, b) => a[0] - b[0]).map(([d, c]) => ({ day: dayString(d), ...c }))

  const suiteRun = new Map<string, number>()
  for (const r of runs) suiteRun.set(r.suite, Math.max(suiteRun.get(r.suite) ?? -Infinity, runAt.get(r.runId)!))
  const suites = [...new Set([...suiteRun.keys(), ...suiteFailure.keys()])].sort().map((suite) => ({
    suite,
    lastFailureAt: suiteFailure.get(suite) ?? null,
    lastRunAt: suiteRun.get(suite) ?? null,
  }))

  return {
    selection,
    computedAt: Date.now(),
    now,
    runs,
    heatRuns,
    tests,
    byId: new Map(tests.map((t) => [t.testId, t])),
    runCounts,
    excludedRuns,
    trends,
    suites,
    newestRunAt,
    memo: new Map(),
  }
}

/** The few tests with an order-dependency hint get it added to their serialised detail. */
function addOrderHints(tests: SnapshotTest[], found: Map<string, OrderHint>): void {
  if (found.size === 0) return
  for (const t of tests) {
    const hint = found.get(t.testId)
    if (hint === undefined) continue
    const detail = JSON.parse(t.detail) as TestAnalysisJson
    detail.hints.push(hintToJson(hint))
    t.detail = JSON.stringify(detail)
  }
}

/**
 * Memoises a value derived from a snapshot (a sorted order, a serialised body). Bounded, because request
 * parameters are attacker-chosen.
 */
export function memoize<T>(snapshot: Snapshot, key: string, compute: () => T): T {
  const hit = snapshot.memo.get(key)
  if (hit !== undefined) return hit as T
  const value = compute()
  if (snapshot.memo.size >= 64) snapshot.memo.delete(snapshot.memo.keys().next().value!)
  snapshot.memo.set(key, value)
  return value
}
