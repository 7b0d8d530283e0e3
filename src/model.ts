/**
 * The vocabulary of flakewatch: one set of names, used by every stage (ingest, store, analysis, quarantine,
 * export, server). Types only, plus the few rules that define identity, so that there is one place for them.
 */

/** Final outcome of one test in one run, and of each attempt. */
export type ResultStatus = 'passed' | 'failed' | 'error' | 'skipped'

/** Whether the run's suite ran to the end. `interrupted` runs keep their partial results. */
export type RunStatus = 'complete' | 'interrupted' | 'unknown'

/** Environment facets: a free key/value map such as `{ browser: 'chromium', os: 'linux', gfx_api: 'vulkan' }`. */
export type EnvFacets = Record<string, string>

/**
 * What is known about a run before it is stored. Every field is optional except what ingest fills in.
 * Timestamps are ISO 8601 strings in UTC.
 */
export interface RunMeta {
  runId: string
  suite: string
  branch: string | null
  revision: string | null
  pipelineId: string | null
  pipelineUrl: string | null
  jobId: string | null
  jobUrl: string | null
  artifactsUrl: string | null
  jobStatus: string | null
  pipelineStatus: string | null
  runnerId: string | null
  env: EnvFacets
  startedAt: string | null
  finishedAt: string | null
  durationMs: number | null
  status: RunStatus
  /**
   * How long each suite or package of the run took, where the report says so apart from its tests (`go test -json`
   * package events). Absent when the report gives none; stored apart from the run row (`Store.getRunTimings`).
   */
  timings?: RunTiming[]
}

/** One suite's or package's time in a run, as its report gives it. */
export interface RunTiming {
  /** The package path (Go) or suite name. */
  name: string
  durationMs: number
  /** `passed`, `failed` or `skipped`: the package's own verdict (a package with no test files is skipped). */
  status: 'passed' | 'failed' | 'skipped'
}

/** A stored run: one execution of a suite in CI (usually one CI job). */
export interface Run extends RunMeta {
  uploadedAt: string
}

/** A test's identity and the parts kept for display. `testId` is `<suite>::<module>::<name>`. */
export interface TestRef {
  testId: string
  suite: string
  module: string
  name: string
  file: string | null
  /**
   * Set by ingest when the module is only a label the report put there (jest-junit's default templates: the
   * suite named after the first describe block, no file), not part of what tells tests apart. Not stored.
   */
  moduleIsLabel?: boolean
}

/** One execution of a test inside a run. Retry 0 is the first try. */
export interface Attempt {
  retry: number
  status: ResultStatus
  durationMs: number | null
  message: string | null
  stack: string | null
}

/** One test in one run. */
export interface Result {
  test: TestRef
  status: ResultStatus
  /** It passed only after at least one failed attempt in the same run. */
  flakyOnRetry: boolean
  durationMs: number | null
  errorType: string | null
  message: string | null
  healingOccurred: boolean
  attempts: Attempt[]
  /**
   * Where the test ran in its run's execution order (0 first): from the report's start times where the format has
   * them, else the order the report lists its tests in. Kept so that order-dependency hints can use it.
   */
  position?: number | null
}

/** Flakewatch's per-test conclusion. */
export type VerdictKind = 'healthy' | 'flaky' | 'broken' | 'insufficient_data'

export interface Evidence {
  kind:
    | 'same_revision_pass_and_fail'
    | 'pass_on_retry'
    | 'consecutive_failures'
    | 'high_flip_rate'
    | 'high_score'
    | 'healing'
    | 'runner_association'
  detail: string
  runIds?: string[]
  revision?: string
}

export interface Verdict {
  verdict: VerdictKind
  reason: string
  evidence: Evidence[]
}

/**
 * The run fields the analysis needs, shared by every history entry of the same run (one object per run, not
 * one per result, so that a scan of a million results allocates a few hundred of these).
 */
export interface RunInfo {
  runId: string
  suite: string
  at: number
  branch: string | null
  revision: string | null
  pipelineId: string | null
  jobStatus: string | null
  pipelineStatus: string | null
  runnerId: string | null
  env: EnvFacets
  status: RunStatus
  pipelineUrl: string | null
  artifactsUrl: string | null
}

/** One result as the analysis sees it, in a test's time-ordered history. */
export interface HistoryEntry {
  run: RunInfo
  status: ResultStatus
  flakyOnRetry: boolean
  durationMs: number | null
  /** Number of attempts recorded (1 when the report knew of no retries). */
  attempts: number
  /** Attempts that failed or errored, including those before a final pass. */
  failedAttempts: number
  /** Total time spent in attempts that failed or errored, for "CI time lost". */
  failedAttemptsMs: number
  errorType: string | null
  message: string | null
  healingOccurred: boolean
  /**
   * Where the test ran in its run's execution order (0 first), as stored with the result; null or absent when
   * unknown. Order-dependency hints compare it between tests of the same file.
   */
  position?: number | null
}

/** A test with its results, oldest first. */
export interface TestHistory {
  test: TestRef
  entries: HistoryEntry[]
}

/** Separator used in test ids. */
export const TEST_ID_SEPARATOR = '::'

/**
 * Builds the stable test id `<suite>::<module>::<name>`. The one place this rule lives.
 * @example makeTestId('unit', 'src/math.test.ts', 'adds') // 'unit::src/math.test.ts::adds'
 */
export function makeTestId(suite: string, module: string, name: string): string {
  return `${suite}${TEST_ID_SEPARATOR}${module}${TEST_ID_SEPARATOR}${name}`
}

/** A failing outcome: `failed` or `error`. */
export function isFailure(status: ResultStatus): boolean {
  return status === 'failed' || status === 'error'
}
