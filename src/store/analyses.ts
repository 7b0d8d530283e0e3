import type { VerdictKind } from '../model.js'
import type { FlipClass, PassRateClass } from '../analysis/types.js'

/**
 * Persisted analyses (docs/scaling.md, "Persisted analyses"): one row per test in `analyses`, exact for every
 * clock in `[validFrom, validUntil)` as long as the row is not stale. A write of results marks the rows of the
 * tests it touched, and of their file-mates, stale in its own transaction (`valid_until = 0`, `version + 1`); a
 * refresh claims rows that need work (a lease), analyses them outside any transaction and writes each one only if
 * its version is unchanged. Both backends share this one protocol.
 */

/** A lease on a row: no other refresh claims it until it ends. */
export const ANALYSIS_LEASE_MS = 60_000

/** What a refresh claimed: the row's test and the version its analysis must still match when written. */
export interface AnalysisClaim {
  testId: string
  version: number
}

/** The summary of a test's analysis that queries sort and filter on. */
export interface AnalysisSummary {
  verdict: VerdictKind
  score: number
  flipRate: number
  flipRateClass: FlipClass
  runs: number
  failures: number
  passRate: number | null
  lastStatus: string | null
  lastFailureAt: number | null
  firstRunAt: number | null
  lastRunAt: number | null
  passRateClass: PassRateClass
  timeLostMs: number
  /** The kiosk's and trends' facts over the analysis window (`windowFacts`). */
  last5: string
  streak: number
  streakSince: number | null
  windowFailureAt: number | null
  days: number[]
}

/** One row to write: the analysis of a claimed test, or null when the test has no stored results any more. */
export interface PersistedAnalysis {
  testId: string
  /** The version claimed: the write happens only if the row still has it. */
  version: number
  /** The analysis as `analyze --json` prints it (without owners), and its summary; null: no results. */
  analysis: { json: string; summary: AnalysisSummary } | null
  /** The analysis configuration it was made with (`analysisFingerprint`). */
  config: string
  asOf: number
  validFrom: number
  validUntil: number
}

/** A row read back for a clock: exact (valid at that clock, same config, not stale) or not. */
export interface AnalysisRead {
  testId: string
  suite: string
  module: string
  name: string
  file: string | null
  /** False: the row is missing, stale, of another config or not valid at the clock; analyse the test afresh. */
  exact: boolean
  /** When exact: the JSON of the analysis, or null for a test without results (nothing to print). */
  json: string | null
  verdict: VerdictKind | null
  score: number | null
  flipRate: number | null
  flipRateClass: FlipClass | null
}

/** A file of tests: what order hints compare, and what a writer's refresh goes through one at a time. */
export interface TestFile {
  suite: string
  module: string
}

/** A file of a writer's runs, with how many tests it has in all (what claiming it whole would take). */
export interface RunFile extends TestFile {
  tests: number
}

export interface AnalysisClaimOptions {
  /** The clock rows are refreshed for: a row not valid at it (stale, ended, or not begun) needs work. */
  clock: number
  /** Most rows claimed at once. */
  limit: number
  /**
   * Only rows of these files (at most {@link ANALYSIS_BATCH}), file after file: a writer's own (see `runFiles`).
   * A chunk then spans few files, so the file-mates its order hints read are few.
   */
  files?: TestFile[]
  /** Only the rows of these tests (at most {@link ANALYSIS_BATCH}): the file-mates a refresh reads anyway. */
  testIds?: string[]
  /**
   * With `testIds`: rows made with another configuration than this one are claimed too, valid or not. A refresh
   * analyses the file-mates it reads at its own configuration, so it may as well write them: left behind, each
   * would be claimed again later, scattered, and its file read again with it.
   */
  config?: string
  /**
   * With `files`: rows that another refresh has leased are claimed too. A writer's refresh of its own rows, which
   * its answer waits for: a lease is no promise that its holder writes the row (its write fails when a commit
   * marked the row meanwhile), and an upload answered before its rows are analysed is not visible.
   */
  leased?: boolean
}

/** The persisted analyses of a store (see the module comment). */
export interface AnalysisStore {
  /**
   * Claims up to `limit` rows that need work (stale, or not valid at `clock`) and are not leased, oldest
   * validity first, leasing them for {@link ANALYSIS_LEASE_MS}. On PostgreSQL two claims at once take different
   * rows (`FOR UPDATE SKIP LOCKED`).
   */
  claimAnalyses(opts: AnalysisClaimOptions): Promise<AnalysisClaim[]>
  /**
   * Claims rows made with another analysis configuration than `config`, as {@link claimAnalyses} does: after a
   * configuration change every row needs work, but not on every sweep (this one cannot use an index). The rows
   * of whole files (those of the first rows found), in file order: a refresh reads the file-mates of what it
   * claims, so rows taken anywhere made each chunk of 500 read up to 5,000 histories.
   */
  claimOtherConfig(config: string, limit: number): Promise<AnalysisClaim[]>
  /** Writes each row whose version is still the one claimed, and ends its lease; returns how many were written. */
  writeAnalyses(rows: PersistedAnalysis[]): Promise<number>
  /**
   * Ends the leases of claimed rows that will not be written (rows whose version moved since are left alone), so
   * that the next refresh may claim them instead of waiting for the leases to run out.
   */
  releaseClaims(claims: AnalysisClaim[]): Promise<void>
  /**
   * The files of the tests with results in these runs (at most {@link ANALYSIS_BATCH} runs), in order, `limit` at a
   * time after `after`: what a writer re-analyses, read a page at a time (a report may hold 150,000 files).
   */
  runFiles(runIds: string[], after: TestFile | null, limit: number): Promise<RunFile[]>
  /**
   * The files of the `limit` rows that need work at `clock` and are not leased, oldest validity first: where the
   * sweep claims next, file by file (rows in key order span every file of a report whose classes interleave).
   */
  dueFiles(clock: number, limit: number): Promise<RunFile[]>
  /** The tests of the files (suite and module) of these tests, themselves included. */
  fileMates(testIds: string[]): Promise<string[]>
  /** Per-run counts of the infrastructure-failure guard, for these runs only. */
  runCounts(runIds: string[]): Promise<{ runId: string; total: number; failed: number }[]>
  /**
   * Every test (of `suite`, if given) with its row when that row is exact at `clock` for `config`: one indexed
   * pass over tests and analyses.
   */
  readAnalyses(opts: { clock: number; config: string; suite?: string }): AsyncIterable<AnalysisRead>
  /** How many tests (of `suite`) there are, and how many of them have a row exact at `clock` for `config`. */
  countExact(opts: { clock: number; config: string; suite?: string }): Promise<{ tests: number; exact: number }>
  /** How many rows are stale or need work at `clock`, and how many there are: for `/healthz` and the benches. */
  analysisBacklog(clock: number): Promise<{ rows: number; due: number }>
  /**
   * The tests of the analysis window that match `filter`, sorted and paged, with their rows as they are (exact or
   * not: see {@link AnalysisStore.dueAnalyses}). Index reads of `analyses` and `tests`, never of results.
   */
  pageAnalyses(filter: AnalysisPage): Promise<AnalysisPageRow[]>
  /** How many tests of the analysis window match `filter`, per verdict. */
  countAnalyses(filter: AnalysisFilter): Promise<Record<VerdictKind, number>>
  /** How many rows are not exact at `clock` (stale, or outside their validity): two index ranges. */
  dueAnalyses(clock: number): Promise<number>
  /** How many rows were made with another configuration than `config` (after an upgrade or a config change). */
  otherConfigAnalyses(config: string): Promise<number>
  /**
   * Per suite of the window's tests (of `suite` only, if given): when one last failed (countable results), and its
   * newest run since `since`.
   */
  suiteHealth(
    since: number,
    suite?: string,
  ): Promise<{ suite: string; lastFailureAt: number | null; lastRunAt: number | null }[]>
  /** The CI time the tests matching `filter` lost (`time_lost_ms` of their analyses), summed. */
  timeLost(filter: AnalysisFilter): Promise<number>
  /** The suites with a broken test in the window (`suite` only, if given). */
  brokenSuites(since: number, suite?: string): Promise<string[]>
  /**
   * The trends' per-day sums over the window's tests (`days` of each row), and the window's runs per day: of `suite`
   * only, if given.
   */
  trendDays(
    since: number,
    suite?: string,
  ): Promise<{ day: number; flaky: number; broken: number; tests: number; runs: number }[]>
  /** How many runs (of `suite`, if given) there are since `since`, and when the newest one is. */
  windowRuns(since: number, suite?: string): Promise<{ runs: number; newest: number | null }>
  /**
   * The tests of the analysis window that match `filter`, with the figures the MCP tools list and the impact page
   * groups by, in `analyze`'s order (flaky, then broken, each by score, then flip rate, then id), paged.
   */
  windowTests(filter: WindowTestFilter & { offset: number; limit: number | null }): Promise<WindowTestRow[]>
  /** How many tests of the analysis window match `filter`. */
  countWindowTests(filter: WindowTestFilter): Promise<number>
  /**
   * The window's tests that match `filter` counted per file and verdict: what the impact page's owner and suite
   * counts need of the tests that cost nothing (owners follow the file), in one grouped pass.
   */
  windowFiles(filter: WindowTestFilter): Promise<WindowFileCount[]>
}

/**
 * Which tests of the analysis window {@link AnalysisStore.windowTests} returns: its window's start, narrowed as
 * asked. `costly` narrows to the tests whose history in the window can count in the impact page beyond their
 * verdict (see {@link COSTLY_SQL}), and `costly: false` to the others.
 */
export interface WindowTestFilter {
  since: number
  verdicts?: readonly VerdictKind[]
  /** Only the tests of this suite. */
  suite?: string
  /** Case-insensitive substring of the test id. */
  search?: string
  /** Only these tests (at most {@link ANALYSIS_BATCH}). */
  testIds?: string[]
  costly?: boolean
}

/** One row of {@link AnalysisStore.windowTests}. */
export interface WindowTestRow {
  testId: string
  suite: string
  module: string
  name: string
  file: string | null
  verdict: VerdictKind
  score: number
  passRate: number | null
  flipRate: number
  runs: number
  failures: number
  /** Its last failure, a pass on retry included (the analysis's `last_failure_at`). */
  lastFailureAt: number | null
  /** Its last final failure in the window's countable results (the kiosk's, and the server snapshot's). */
  windowFailureAt: number | null
}

/** One group of {@link AnalysisStore.windowFiles}. */
export interface WindowFileCount {
  suite: string
  module: string
  file: string | null
  verdict: VerdictKind
  tests: number
}

/**
 * Whether a row's history in the window can count in the impact page beyond its verdict: a flaky verdict (its
 * results cost), or any countable failure or failed attempt in the window (a week's flaky or broken signal needs
 * one; a branch breakage set aside is made of final failures, which `window_failure_at` keeps). The others add
 * one test to their suite's and owners' counts, nothing more.
 */
export const COSTLY_SQL =
  "(a.verdict = 'flaky' OR a.window_failure_at IS NOT NULL OR a.last_failure_at IS NOT NULL OR coalesce(a.time_lost_ms, 0) > 0)"

/** `analyze`'s order ("most harmful first"), as the MCP tools list tests. */
export function analyzeOrderSql(binary: string): string {
  return `${VERDICT_ORDER} ASC, a.score DESC, a.flip_rate DESC, t.test_id${binary} ASC`
}

/** The sort keys of {@link AnalysisStore.pageAnalyses}: the leaderboard's (`SORT_KEYS`), and the kiosk's `since`. */
export type AnalysisSortKey =
  'flaky' | 'score' | 'pass_rate' | 'runs' | 'flip_rate' | 'name' | 'last' | 'class' | 'verdict' | 'streak_since'

/** Which tests the server's reads of persisted analyses show. */
export interface AnalysisFilter {
  /** The analysis window's start: only tests with a result since then. */
  since: number
  /** Case-insensitive substring of the test id (ASCII case folding on SQLite). */
  search?: string
  verdict?: VerdictKind
  /**
   * Only the tests of this suite. A test's runs are all of its suite (its id begins with it), so its analysis is
   * the same whichever suite the reader narrows to: `?suite=` only narrows which rows are shown.
   */
  suite?: string
  /** Only these tests (at most {@link ANALYSIS_BATCH}). */
  testIds?: string[]
}

export interface AnalysisPage extends AnalysisFilter {
  sort: AnalysisSortKey
  order: 'asc' | 'desc'
  offset: number
  /** Most rows; null: all of them. */
  limit: number | null
  /** Leave out the analysis JSON (a caller after refs and sort fields only). */
  refsOnly?: boolean
}

/** One row of {@link AnalysisStore.pageAnalyses}. */
export interface AnalysisPageRow {
  testId: string
  suite: string
  module: string
  name: string
  file: string | null
  /** The analysis as `analyze --json` prints it (null with `refsOnly`). */
  json: string | null
  verdict: VerdictKind
  score: number
  last5: string
  streak: number
  streakSince: number | null
}

const VERDICT_ORDER = `CASE a.verdict WHEN 'flaky' THEN 0 WHEN 'broken' THEN 1 WHEN 'healthy' THEN 2 ELSE 3 END`

/**
 * The ORDER BY of {@link AnalysisStore.pageAnalyses}, the same on both backends: the key, then "most flaky first"
 * (flaky, then broken, each by score, failures, flip rate and id) so that pages are stable. `binary` is the
 * collation that compares text byte by byte (test ids and names sort as the dashboard's code points do).
 */
export function analysisOrderSql(sort: AnalysisSortKey, order: 'asc' | 'desc', binary: string): string {
  const mostFlaky = [
    `${VERDICT_ORDER} ASC`,
    'a.score DESC',
    'a.failures DESC',
    'a.flip_rate DESC',
    `t.test_id${binary} ASC`,
  ]
  if (sort === 'flaky') {
    if (order === 'desc') return mostFlaky.join(', ')
    return mostFlaky
      .map((k) => (k.endsWith(' ASC') ? k.replace(/ ASC$/, ' DESC') : k.replace(/ DESC$/, ' ASC')))
      .join(', ')
  }
  const dir = order === 'asc' ? 'ASC' : 'DESC'
  const key: Record<Exclude<AnalysisSortKey, 'flaky'>, string> = {
    score: 'a.score',
    pass_rate: 'coalesce(a.pass_rate, 2)',
    runs: 'a.runs',
    flip_rate: 'a.flip_rate',
    name: `t.name${binary} ${dir}, t.test_id${binary}`,
    last: `CASE a.last_status WHEN 'skipped' THEN 0 WHEN 'passed' THEN 1 WHEN 'failed' THEN 2 WHEN 'error' THEN 3 ELSE -1 END`,
    class: `CASE a.pass_rate_class WHEN 'stable' THEN 0 WHEN 'intermittent' THEN 1 WHEN 'actively_flaky' THEN 2 ELSE 3 END`,
    verdict: `CASE a.verdict WHEN 'insufficient_data' THEN 0 WHEN 'healthy' THEN 1 WHEN 'broken' THEN 2 ELSE 3 END`,
    streak_since: 'coalesce(a.streak_since, 0)',
  }
  return [`${key[sort]} ${dir}`, ...mostFlaky].join(', ')
}

/**
 * Migration 0021, the same on both backends: a suite's runs since a time (the window's run count and newest run,
 * the heatmap's columns, the trends' runs per day) as one index range.
 */
export const RUNS_SUITE_INDEX = 'CREATE INDEX runs_suite ON runs (suite, at)'

/** Most test ids one statement of the analyses concern binds at once. */
export const ANALYSIS_BATCH = 500

/** Per-verdict counts from `GROUP BY verdict` rows, every verdict present. */
export function verdictCounts(rows: { verdict: VerdictKind; n: number | string }[]): Record<VerdictKind, number> {
  const out: Record<VerdictKind, number> = { flaky: 0, broken: 0, healthy: 0, insufficient_data: 0 }
  for (const r of rows) if (r.verdict in out) out[r.verdict] = Number(r.n)
  return out
}

/** Each suite's newest countable failure (of its tests) and newest run, sorted by suite. */
export function suiteHealthOf(
  failures: { suite: string; at: number | string | null }[],
  runs: { suite: string; at: number | string | null }[],
): { suite: string; lastFailureAt: number | null; lastRunAt: number | null }[] {
  const failed = new Map(failures.map((f) => [f.suite, f.at === null ? null : Number(f.at)]))
  const ran = new Map(runs.map((r) => [r.suite, r.at === null ? null : Number(r.at)]))
  const suites = new Set<string>()
  for (const [suite, at] of failed) if (at !== null) suites.add(suite)
  for (const suite of ran.keys()) suites.add(suite)
  return [...suites].sort().map((suite) => ({
    suite,
    lastFailureAt: failed.get(suite) ?? null,
    lastRunAt: ran.get(suite) ?? null,
  }))
}

const DAY_MS = 86_400_000

/**
 * The trends' days from each test's share (`[day, flaky, broken, …]` as JSON) and the window's run times: days
 * before the window's start are left out, and only days with a test or a run are kept, oldest first.
 */
export function sumTrendDays(
  shares: Iterable<string>,
  runAts: Iterable<number | string>,
  since: number,
): { day: number; flaky: number; broken: number; tests: number; runs: number }[] {
  const first = Math.floor(since / DAY_MS)
  const days = new Map<number, { day: number; flaky: number; broken: number; tests: number; runs: number }>()
  const at = (day: number) => {
    let d = days.get(day)
    if (!d) days.set(day, (d = { day, flaky: 0, broken: 0, tests: 0, runs: 0 }))
    return d
  }
  for (const json of shares) {
    const share = JSON.parse(json) as number[]
    for (let i = 0; i + 2 < share.length; i += 3) {
      if (share[i]! < first) continue
      const d = at(share[i]!)
      d.tests++
      d.flaky += share[i + 1]!
      d.broken += share[i + 2]!
    }
  }
  for (const ms of runAts) at(Math.floor(Number(ms) / DAY_MS)).runs++
  return [...days.values()].sort((a, b) => a.day - b.day)
}

/**
 * The join a window read needs only when it narrows by a test's ref (search, suite, or a list of tests): counts
 * skip it.
 */
export function testsJoin(f: Pick<AnalysisFilter, 'search' | 'suite' | 'testIds'>): string {
  return f.search !== undefined || f.testIds !== undefined || f.suite !== undefined
    ? 'JOIN tests t ON t.id = a.test'
    : ''
}
