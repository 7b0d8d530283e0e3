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
import { cellOf, entryFacts } from '../analysis/window-facts.js'
import { type ResultStatus, type Run, type TestHistory, type TestRef, type VerdictKind } from '../model.js'
import type { HistoryFilter, RunSummary, Store } from '../store/store.js'
import type { SelectionCover, TrendDay } from './api-types.js'
import { runTime, SELECTION_MAX_RESULTS, selectRuns, selectsResults, type Selection } from './selection.js'
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
  /** The rest of its ref, so that a test's detail needs no query for it. */
  file: string | null
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
  /**
   * One {@link HeatCell} per heatmap run from column `heatAt` on; read it through {@link heatOf}, which aligns it
   * with `Snapshot.heatRuns`.
   */
  heat: string
  /**
   * The snapshot column, counted from the `heatOffset` of the build this snapshot descends from, at which `heat`
   * begins. An upload that adds a column and drops the oldest leaves an untouched test's object as it is: only the
   * snapshot's offset moves, instead of a new object and string per test of the store on every upload.
   */
  heatAt: number
  /** The last five results as cells, oldest first. */
  last5: string
  /** Failures in a row at the end of the countable history, and when that streak began. */
  streak: number
  streakSince: number | null
  /** When it last failed (countable results only), for its suite's health. */
  lastFailure: number | null
  /**
   * Its share of the trends, flat: `[day, flaky, broken, day, flaky, broken, …]` (flaky and broken are 0 or 1), so
   * that an incremental update can take a re-analysed test's old share out before adding its new one.
   */
  days: number[]
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
  /** The column number of `heatRuns[0]`, as tests' `heatAt` count them. */
  heatOffset: number
  /** Tests, most flaky first. */
  tests: SnapshotTest[]
  byId: Map<string, SnapshotTest>
  runCounts: Map<string, RunSummary>
  excludedRuns: Set<string>
  trends: TrendDay[]
  suites: SuiteHealth[]
  newestRunAt: number | null
  /** Whether the selection matched more runs than it analyses (see `SELECTION_MAX_RESULTS`). */
  capped: boolean
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

export { cellOf }

/** Per-day counters while scanning; turned into {@link TrendDay}s at the end. */
interface DayCount {
  flaky: number
  broken: number
  tests: number
  runs: number
}

/** Adds (`sign` 1) or takes out (`sign` -1) one test's share of the trends. */
function addDays(days: Map<number, DayCount>, share: number[], sign: 1 | -1): void {
  for (let i = 0; i < share.length; i += 3) {
    const day = share[i]!
    let d = days.get(day)
    if (!d) days.set(day, (d = { flaky: 0, broken: 0, tests: 0, runs: 0 }))
    d.tests += sign
    d.flaky += sign * share[i + 1]!
    d.broken += sign * share[i + 2]!
  }
}

/** The trend signals in words, with the configured streak, never a config key: the legend a manager reads. */
export function trendDefinition(brokenMinConsecutive: number): { flaky: string; broken: string } {
  return {
    flaky:
      'tests that, on that UTC day, passed only on retry or both passed and failed on one revision ' +
      '(skipped results and infrastructure-failure runs left out)',
    broken: `tests that did not pass that day and whose results ended a streak of ${brokenMinConsecutive} or more failures in a row`,
  }
}

function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** What a snapshot knows of its runs: which are selected, their counts, and the analysis clock. */
export interface RunState {
  now: number
  runs: Run[]
  selected: Set<string>
  runCounts: Map<string, RunSummary>
  excludedRuns: Set<string>
  /** Each selected run's stored time. */
  runAt: Map<string, number>
  newestRunAt: number | null
  heatRuns: Run[]
  /** The history scan's bounds: only an optimisation, entries are matched by run id. */
  filter: HistoryFilter
  /** Whether the selection matched more runs than it analyses (see `SELECTION_MAX_RESULTS`). */
  capped: boolean
}

/**
 * The runs a selection names and their per-run counts (the store keeps them, so this reads runs, not results): the
 * infrastructure-failure guard's input and each run's exact stored time. `now` fixes the analysis clock; without
 * it the windows end just after the newest selected run.
 */
export async function runState(
  store: Store,
  selection: Selection,
  cfg: ResolvedAnalysisConfig,
  now?: number,
  maxResults = SELECTION_MAX_RESULTS,
): Promise<RunState> {
  const picked = await selectRuns(store, selection, { now, lookbackDays: cfg.scoring.lookbackDays })
  let runs = picked.runs
  let capped = picked.capped
  let selected = new Set(runs.map((r) => r.runId))
  const base: HistoryFilter = { suite: selection.suite, branch: selection.branch }
  let runCounts = new Map<string, RunSummary>()
  if (runs.length) {
    // Run metadata only approximates the stored time, hence the margin.
    const times = runs.map(runTime)
    const near = { ...base, since: minOf(times) - DAY_MS, until: maxOf(times) + DAY_MS }
    for (const s of await store.runSummaries(near)) if (selected.has(s.runId)) runCounts.set(s.runId, s)
    if (runCounts.size < selected.size) {
      for (const s of await store.runSummaries(base)) if (selected.has(s.runId)) runCounts.set(s.runId, s)
    }
  }
  const bounded = selectsResults(selection)
  if (bounded) {
    // The newest runs while their results fit the bound (at least one): what the analysis reads is bounded.
    let results = 0
    let keep = 0
    while (keep < runs.length) {
      results += runCounts.get(runs[keep]!.runId)?.total ?? 0
      if (keep > 0 && results > maxResults) break
      keep++
    }
    if (keep < runs.length) {
      runs = runs.slice(0, keep)
      capped = true
      selected = new Set(runs.map((r) => r.runId))
      runCounts = new Map([...runCounts].filter(([id]) => selected.has(id)))
    }
  }
  const excludedRuns = infraRunIds(runCounts.values(), cfg)
  const runAt = new Map<string, number>()
  for (const r of runs) runAt.set(r.runId, runCounts.get(r.runId)?.at ?? runTime(r))
  const ats = [...runAt.values()]
  const newestRunAt = ats.length ? maxOf(ats) : null
  const filter: HistoryFilter = ats.length ? { ...base, since: minOf(ats), until: newestRunAt! } : base
  return {
    now: now ?? (newestRunAt === null ? Date.now() : newestRunAt + 1),
    runs,
    selected,
    runCounts,
    excludedRuns,
    runAt,
    newestRunAt,
    heatRuns: runs.slice(0, HEATMAP_MAX_RUNS).reverse(),
    // A selection of results reads its own runs' results only, by run: not every result of their time span.
    filter: bounded && runs.length ? { ...filter, runIds: runs.map((r) => r.runId) } : filter,
    capped,
  }
}

/** A test's history cut to the selected runs; null when none of it is selected. */
export function selectedHistory(h: TestHistory, selected: Set<string>): TestHistory | null {
  let entries = h.entries
  if (entries.some((e) => !selected.has(e.run.runId))) entries = entries.filter((e) => selected.has(e.run.runId))
  return entries.length ? { test: h.test, entries } : null
}

/** One test as a snapshot keeps it, from its selected history (without order hints: see `addOrderHints`). */
function snapshotTestOf(
  h: TestHistory,
  state: RunState,
  heatCol: Map<string, number>,
  cfg: ResolvedAnalysisConfig,
): SnapshotTest {
  const { excludedRuns, now } = state
  const entries = h.entries
  const analysis = analyzeTest({ test: h.test, entries }, cfg, { now, excludedRuns })

  const row = Buffer.alloc(state.heatRuns.length, '.')
  for (const e of entries) {
    const col = heatCol.get(e.run.runId)
    if (col !== undefined) row[col] = cellOf(e).charCodeAt(0)
  }
  const facts = entryFacts(entries, excludedRuns, cfg)
  return {
    testId: analysis.testId,
    name: analysis.test.name,
    module: analysis.test.module,
    suite: analysis.test.suite,
    file: analysis.test.file,
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
    heatAt: 0,
    last5: facts.last5,
    streak: facts.streak,
    streakSince: facts.streakSince,
    lastFailure: facts.windowFailureAt,
    days: facts.days,
  }
}

/** The test a snapshot analysed, as the store names it. */
export function testRefOf(t: SnapshotTest): TestRef {
  return { testId: t.testId, suite: t.suite, module: t.module, name: t.name, file: t.file }
}

/** A test's heatmap row, one cell per `snapshot.heatRuns`; '.' where it has no result. */
export function heatOf(snapshot: Pick<Snapshot, 'heatOffset' | 'heatRuns'>, t: SnapshotTest): string {
  const skip = snapshot.heatOffset - t.heatAt
  const columns = snapshot.heatRuns.length
  if (skip === 0 && t.heat.length === columns) return t.heat
  const kept = t.heat.slice(skip, skip + columns)
  return kept + '.'.repeat(columns - kept.length)
}

function heatColumns(state: RunState): Map<string, number> {
  return new Map(state.heatRuns.map((r, i) => [r.runId, i]))
}

/** The parts derived from all tests and runs: order, trends and suite health. */
function assemble(
  selection: Selection,
  state: Omit<RunState, 'selected' | 'filter'>,
  tests: SnapshotTest[],
  days: Map<number, DayCount>,
  heatOffset = 0,
): Snapshot {
  tests.sort(compareMostFlaky)
  for (const d of days.values()) d.runs = 0
  for (const at of state.runAt.values()) {
    const d = Math.floor(at / DAY_MS)
    let c = days.get(d)
    if (!c) days.set(d, (c = { flaky: 0, broken: 0, tests: 0, runs: 0 }))
    c.runs++
  }
  const trends = [...days.entries()]
    .filter(([, c]) => c.tests > 0 || c.runs > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([d, c]) => ({ day: dayString(d), ...c }))

  const suiteFailure = new Map<string, number>()
  for (const t of tests) {
    if (t.lastFailure !== null)
      suiteFailure.set(t.suite, Math.max(suiteFailure.get(t.suite) ?? -Infinity, t.lastFailure))
  }
  const suiteRun = new Map<string, number>()
  for (const r of state.runs) {
    suiteRun.set(r.suite, Math.max(suiteRun.get(r.suite) ?? -Infinity, state.runAt.get(r.runId)!))
  }
  const suites = [...new Set([...suiteRun.keys(), ...suiteFailure.keys()])].sort().map((suite) => ({
    suite,
    lastFailureAt: suiteFailure.get(suite) ?? null,
    lastRunAt: suiteRun.get(suite) ?? null,
  }))
  const computedAt = Date.now()
  const byId = new Map<string, SnapshotTest>()
  for (const t of tests) byId.set(t.testId, t)
  return {
    selection,
    computedAt,
    now: state.now,
    runs: state.runs,
    heatRuns: state.heatRuns,
    heatOffset,
    tests,
    byId,
    runCounts: state.runCounts,
    excludedRuns: state.excludedRuns,
    trends,
    suites,
    newestRunAt: state.newestRunAt,
    capped: state.capped,
    memo: new Map(),
  }
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
  const state = await runState(store, selection, cfg, opts.now)
  const heatCol = heatColumns(state)
  const days = new Map<number, DayCount>()
  const tests: SnapshotTest[] = []
  // Order dependency compares tests of one file, so it is found once the scan has seen them all.
  const order = orderIndex(state, cfg)
  if (state.runs.length) {
    for await (const h of scanStore.scanHistory(state.filter)) {
      const selected = selectedHistory(h, state.selected)
      if (selected === null) continue
      order.add(selected)
      const t = snapshotTestOf(selected, state, heatCol, cfg)
      addDays(days, t.days, 1)
      tests.push(t)
      await maybePause()
    }
  }
  addOrderHints(tests, order.hints())
  return assemble(selection, state, tests, days)
}

/** Most runs one incremental update may touch; more (a large prune, a replaced history) is a full rebuild. */
export const DELTA_MAX_RUNS = 64

/** What an incremental update needs to know of the snapshot it updates: its clock and its runs. */
export interface DeltaBase {
  now: number
  runIds: string[]
  heatRunIds: string[]
}

/** A snapshot's changes after writes to some runs: every run-level fact anew, and the tests those runs touch. */
export interface SnapshotDelta {
  runs: Run[]
  heatRuns: Run[]
  runCounts: Map<string, RunSummary>
  excludedRuns: Set<string>
  runAt: Map<string, number>
  newestRunAt: number | null
  now: number
  capped: boolean
  /** Every test re-analysed, including those now outside the selection (absent from `tests`). */
  touched: string[]
  tests: SnapshotTest[]
}

export function deltaBaseOf(snapshot: Snapshot): DeltaBase {
  return {
    now: snapshot.now,
    runIds: snapshot.runs.map((r) => r.runId),
    heatRunIds: snapshot.heatRuns.map((r) => r.runId),
  }
}

/**
 * Re-analyses only what writes to `changedRuns` can have changed, at the snapshot's own clock: the tests with a
 * result in a written run, or in a run that entered or left the selection, each from its own history read by
 * index. The result, applied with {@link applyDelta}, equals a full build at that clock. Null when an update
 * would not be cheap or could not be exact (too many runs changed, or an old run came into the heatmap), so that
 * the caller builds in full instead.
 */
export async function snapshotDelta(
  store: Store,
  selection: Selection,
  base: DeltaBase,
  changedRuns: string[],
  cfg: ResolvedAnalysisConfig,
): Promise<SnapshotDelta | null> {
  const state = await runState(store, selection, cfg, base.now)
  const before = new Set(base.runIds)
  const changed = new Set(changedRuns.filter((id) => state.selected.has(id) || before.has(id)))
  for (const id of state.selected) if (!before.has(id)) changed.add(id)
  for (const id of before) if (!state.selected.has(id)) changed.add(id)
  if (changed.size > DELTA_MAX_RUNS) return null
  // Untouched tests' heat rows are re-aligned, not re-read: every column must be one they had or a changed run.
  const heatBefore = new Set(base.heatRunIds)
  if (state.heatRuns.some((r) => !heatBefore.has(r.runId) && !changed.has(r.runId))) return null
  const tests: SnapshotTest[] = []
  const touched: string[] = []
  if (changed.size && state.runs.length) {
    const heatCol = heatColumns(state)
    const order = orderIndex(state, cfg)
    const read = async (testIds: string[]) => {
      const refs: TestRef[] = []
      for await (const h of store.scanHistory({ ...state.filter, testIds })) {
        refs.push(h.test)
        const selected = selectedHistory(h, state.selected)
        if (selected === null) continue
        order.add(selected)
        tests.push(snapshotTestOf(selected, state, heatCol, cfg))
      }
      return refs
    }
    const first = await store.testsInRuns([...changed])
    const mates = await fileMates(store, await read(first), new Set(first))
    if (mates.length) await read(mates)
    for (const id of first) touched.push(id)
    for (const id of mates) touched.push(id)
    addOrderHints(tests, order.hints())
  }
  return {
    runs: state.runs,
    heatRuns: state.heatRuns,
    runCounts: state.runCounts,
    excludedRuns: state.excludedRuns,
    runAt: state.runAt,
    newestRunAt: state.newestRunAt,
    now: state.now,
    capped: state.capped,
    touched,
    tests,
  }
}

function orderIndex(state: RunState, cfg: ResolvedAnalysisConfig) {
  const ctx = { now: state.now, excludedRuns: state.excludedRuns, lookbackDays: cfg.scoring.lookbackDays }
  return createOrderIndex(cfg.hints, ctx)
}

/**
 * The other tests of these tests' files (suite and module): an order-dependency hint compares the tests of one
 * file, so re-analysing one test means re-analysing its file. Reads the tests table, not results.
 */
async function fileMates(store: Store, refs: TestRef[], known: Set<string>): Promise<string[]> {
  const modulesOf = new Map<string, Set<string>>()
  for (const t of refs) {
    let modules = modulesOf.get(t.suite)
    if (!modules) modulesOf.set(t.suite, (modules = new Set()))
    modules.add(t.module)
  }
  const out: string[] = []
  // Only the touched files' tests: a suite of 100,000 tests would otherwise be read whole on every upload.
  for (const [suite, modules] of modulesOf) {
    for (const t of await store.listTests({ suite, modules: [...modules] })) {
      if (!known.has(t.testId)) out.push(t.testId)
    }
  }
  return out
}

/** The snapshot after a {@link snapshotDelta}: touched tests replaced, the others' heat rows re-aligned. */
export function applyDelta(snapshot: Snapshot, delta: SnapshotDelta): Snapshot {
  const touched = new Set(delta.touched)
  const days = new Map<number, DayCount>()
  for (const t of snapshot.trends) days.set(Math.floor(Date.parse(t.day) / DAY_MS), { ...t, runs: 0 })
  for (const id of touched) {
    const old = snapshot.byId.get(id)
    if (old) addDays(days, old.days, -1)
  }
  for (const t of delta.tests) addDays(days, t.days, 1)

  const oldCol = new Map(snapshot.heatRuns.map((r, i) => [r.runId, i]))
  const sameColumns =
    delta.heatRuns.length === snapshot.heatRuns.length && delta.heatRuns.every((r, i) => oldCol.get(r.runId) === i)
  const from = delta.heatRuns.map((r) => oldCol.get(r.runId) ?? -1)
  // The usual change (a new run: the oldest column goes, one comes at the end) keeps the old columns from `first`
  // to the end, then only new ones, where untouched tests have no result: their rows stay as they are, and only the
  // snapshot's offset moves (see `heatOf`). On every upload this would otherwise be an object per test of the store.
  const first = from[0] ?? -1
  let kept = 0
  while (kept < from.length && from[kept] === first + kept) kept++
  const shifted = first >= 0 && first + kept === snapshot.heatRuns.length && from.slice(kept).every((i) => i < 0)
  const offset = sameColumns ? snapshot.heatOffset : shifted ? snapshot.heatOffset + first : 0
  const realign = (heat: string) => {
    let out = ''
    for (const i of from) out += i < 0 ? '.' : heat[i]
    return out
  }
  const tests: SnapshotTest[] = []
  for (const t of snapshot.tests) {
    if (touched.has(t.testId)) continue
    tests.push(sameColumns || shifted ? t : { ...t, heat: realign(heatOf(snapshot, t)), heatAt: 0 })
  }
  // Fresh from the builder, aligned with `delta.heatRuns`: theirs to number.
  for (const t of delta.tests) {
    t.heatAt = offset
    tests.push(t)
  }
  return assemble(snapshot.selection, delta, tests, days, offset)
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

/** Which runs a snapshot of a selection of results was analysed from, as a part of its answers (none otherwise). */
export function coversOf(snapshot: Snapshot): { covers?: SelectionCover } {
  if (!selectsResults(snapshot.selection)) return {}
  const ats = snapshot.runs.map((r) => runTime(r))
  const covers: SelectionCover = {
    runs: snapshot.runs.length,
    oldest_run_at: ats.length ? new Date(minOf(ats)).toISOString() : null,
    newest_run_at: snapshot.newestRunAt === null ? null : new Date(snapshot.newestRunAt).toISOString(),
    capped: snapshot.capped,
    max_results: SELECTION_MAX_RESULTS,
  }
  return { covers }
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
