/**
 * The JSON the REST API speaks, shared by the server and the dashboard. Type-only imports: the dashboard bundle
 * must not pull server code in. Field names are snake_case, like the CLI's `--json` output.
 */
import type { TestAnalysisJson } from '../analysis/to-analysis-json.js'
import type { EnvFacets, Evidence, ResultStatus, RunStatus, VerdictKind } from '../model.js'

export type { TestAnalysisJson }

/** Every endpoint lives under this prefix. */
export const API_PREFIX = '/api/v1'

/** Every error response. */
export interface ErrorBody {
  error: { code: string; message: string }
}

/**
 * The run selection most read endpoints accept as query parameters. `env` repeats (`env=os=linux&env=ci=gl`);
 * `rev` is a revision range `abc123...def456` (prefixes allowed): the runs from the first to the last run of
 * those revisions, in time order. Without `last` or `rev`, the selection is the analysis lookback window.
 */
export interface SelectionParams {
  suite?: string
  branch?: string
  env?: string[]
  last?: number
  rev?: string
}

export interface RunCountsJson {
  total: number
  passed: number
  failed: number
  skipped: number
  flaky: number
}

export interface RunJson {
  run_id: string
  suite: string
  branch: string | null
  revision: string | null
  pipeline_id: string | null
  pipeline_url: string | null
  job_id: string | null
  job_url: string | null
  artifacts_url: string | null
  job_status: string | null
  pipeline_status: string | null
  runner_id: string | null
  env: EnvFacets
  started_at: string | null
  finished_at: string | null
  duration_ms: number | null
  status: RunStatus
  uploaded_at: string
  /** Result counts (null only for a run whose counts the store could not give). */
  counts: RunCountsJson | null
  /**
   * `GET /runs/:runId` only: each suite's or package's time as the report gave it (`go test -json` package
   * events), slowest first; empty when the run's reports gave none.
   */
  timings?: RunTimingJson[]
}

export interface RunTimingJson {
  name: string
  duration_ms: number
  status: 'passed' | 'failed' | 'skipped'
}

export interface RunsResponse {
  runs: RunJson[]
  offset: number
  limit: number
}

export interface TestRefJson {
  test_id: string
  suite: string
  module: string
  name: string
  file: string | null
}

export interface TestsResponse {
  tests: TestRefJson[]
  offset: number
  limit: number
}

export type EvidenceJson = TestAnalysisJson['evidence'][number]

/** Leaderboard sort keys; `flaky` is "most flaky first": flaky verdicts, then broken, then by score. */
export const SORT_KEYS = [
  'flaky',
  'score',
  'pass_rate',
  'runs',
  'flip_rate',
  'name',
  'last',
  'class',
  'verdict',
] as const
export type SortKey = (typeof SORT_KEYS)[number]

export interface LeaderboardRow {
  test_id: string
  name: string
  module: string
  suite: string
  runs: number
  passes: number
  failures: number
  pass_rate: number | null
  last_status: ResultStatus | null
  pass_rate_class: TestAnalysisJson['pass_rate_class']
  flip_rate_class: TestAnalysisJson['flip_rate_class']
  verdict: VerdictKind
  reason: string
  score: number
  confidence: number
  flip_rate: number
  evidence: EvidenceJson[]
  recommendation: TestAnalysisJson['recommendation']
  quarantined: boolean
  /** The test's code owners from CODEOWNERS (empty without one). */
  owners?: string[]
}

export interface LeaderboardSummary {
  tests: number
  flaky: number
  broken: number
  healthy: number
  insufficient_data: number
  quarantined: number
}

/**
 * Which runs an answer of a selection of results (a branch, env facets, the last N runs, a revision range) was
 * analysed from: its newest matching runs while their results add up to `max_results` (`capped` when more runs
 * matched). Absent from answers of the persisted analyses (the default selection, of every suite or of one).
 */
export interface SelectionCover {
  runs: number
  oldest_run_at: string | null
  newest_run_at: string | null
  capped: boolean
  max_results: number
}

export interface LeaderboardResponse {
  /** See {@link SelectionCover}. */
  covers?: SelectionCover
  /** When the analysis behind this answer was computed (ISO). */
  generated_at: string
  newest_run_at: string | null
  runs: number
  total: number
  offset: number
  limit: number
  sort: SortKey
  order: 'asc' | 'desc'
  summary: LeaderboardSummary
  /**
   * Present when some tests' stored analyses were not current at this answer's clock (more than a read
   * re-analyses before answering): they show as last analysed, and the background sweep is catching up.
   */
  pending?: number
  rows: LeaderboardRow[]
}

/**
 * One character per run in a heatmap row: P passed, R passed on retry, F failed, E error, S skipped, `.` not run.
 */
export type HeatCell = 'P' | 'R' | 'F' | 'E' | 'S' | '.'

export interface HeatmapRun {
  run_id: string
  /** The run's start (ISO). */
  at: string
  suite: string
  branch: string | null
  revision: string | null
  pipeline_id: string | null
  pipeline_url: string | null
  artifacts_url: string | null
  status: RunStatus
  env: EnvFacets
  /** Older than the artifact retention: the artifacts link has probably expired. */
  artifacts_expired: boolean
}

export interface HeatmapTest {
  test_id: string
  name: string
  module: string
  suite: string
  verdict: VerdictKind
  score: number
}

export interface HeatmapResponse {
  /** See {@link SelectionCover}. */
  covers?: SelectionCover
  generated_at: string
  artifact_expiry_days: number
  /** Oldest first: the newest run is the last column. */
  runs: HeatmapRun[]
  tests: HeatmapTest[]
  /** `cells[i]` is test i's row: one {@link HeatCell} per run, aligned with `runs`. */
  cells: string[]
  total_tests: number
  offset: number
  limit: number
}

export interface QuarantineJson {
  test_id: string
  reason: string
  owner: string | null
  issue_url: string | null
  created_at: string
  created_by: string
  expires_at: string | null
  source: 'auto' | 'manual'
  /** False once expired: an expired quarantine no longer forgives failures. */
  active: boolean
}

export interface AuditJson {
  id: number
  test_id: string
  action: 'quarantine' | 'update' | 'release' | 'expire' | 'import'
  /** The name of the write token that made the change (`api` for the single unnamed token). */
  actor: string
  at: string
  reason: string
  source: 'auto' | 'manual' | null
}

export interface QuarantineListResponse {
  quarantined: QuarantineJson[]
}

export interface AuditResponse {
  audit: AuditJson[]
}

/** A quarantine rule: the matchers use the quarantine file's snake_case keys. */
export interface RuleJson {
  id: string
  match: {
    test_id?: string
    file?: string
    title?: string
    message?: string
    branch?: string
    env?: Record<string, string>
  }
  /** What the rule matches, in one line: the words `quarantine list` uses. */
  matches: string
  reason: string
  owner: string | null
  issue_url: string | null
  created_at: string
  created_by: string
  expires_at: string | null
  /** False once expired: an expired rule forgives nothing. */
  active: boolean
}

export interface RuleListResponse {
  rules: RuleJson[]
}

export interface RuleAuditResponse {
  audit: {
    id: number
    rule_id: string
    action: AuditJson['action']
    actor: string
    at: string
    reason: string
    /** The rule after the change; null after a removal. */
    rule: RuleJson | null
  }[]
}

/** Body of `PUT /quarantine/:testId`. */
export interface QuarantineRequest {
  reason: string
  owner?: string | null
  issue_url?: string | null
  /** ISO time, or null for no expiry. Default: the policy's `expiryDays` from now. */
  expires_at?: string | null
}

/** Body (or query) of `DELETE /quarantine/:testId`. */
export interface ReleaseRequest {
  reason: string
}

export interface TestDetailResponse {
  generated_at: string
  test: TestRefJson
  /** Null when the selection holds no results of this test. */
  analysis: TestAnalysisJson | null
  quarantine: QuarantineJson | null
  audit: AuditJson[]
}

export interface AttemptJson {
  retry: number
  status: ResultStatus
  duration_ms: number | null
  message: string | null
  stack: string | null
}

export interface HistoryEntryJson {
  run_id: string
  at: string
  suite: string
  branch: string | null
  revision: string | null
  pipeline_id: string | null
  pipeline_url: string | null
  artifacts_url: string | null
  run_status: RunStatus
  env: EnvFacets
  status: ResultStatus
  flaky_on_retry: boolean
  duration_ms: number | null
  attempts: number
  failed_attempts: number
  error_type: string | null
  message: string | null
  healing_occurred: boolean
  /** Only with `?attempts=true`. */
  attempt_details?: AttemptJson[]
}

export interface HistoryResponse {
  test_id: string
  /** Oldest first. */
  entries: HistoryEntryJson[]
}

export interface AttemptsResponse {
  test_id: string
  run_id: string
  attempts: AttemptJson[]
}

export interface TrendDay {
  /** UTC day, `YYYY-MM-DD`. */
  day: string
  /** Tests that showed a flaky signal that day (see `definition`). */
  flaky: number
  /** Tests that were broken that day (see `definition`). */
  broken: number
  /** Tests with at least one countable result that day. */
  tests: number
  runs: number
}

export interface TrendsResponse {
  /** See {@link SelectionCover}. */
  covers?: SelectionCover
  generated_at: string
  definition: { flaky: string; broken: string }
  days: TrendDay[]
}

/** What flaky tests cost, as every impact figure carries it (docs/impact.md defines each). */
export interface ImpactCostJson {
  time_lost_ms: number
  failures: number
  failed_attempts: number
  passes_on_retry: number
}

export interface ImpactWeekJson extends ImpactCostJson {
  /** The UTC Monday that begins the week, `YYYY-MM-DD`. */
  week: string
  runs: number
  flaky_tests: number
  broken_tests: number
}

export interface ImpactGroupCounts {
  tests: number
  /** Tests whose verdict is flaky now. */
  flaky: number
  broken: number
}

export interface ImpactOwnerJson extends ImpactCostJson, ImpactGroupCounts {
  /** Null for the tests that no CODEOWNERS rule owns. */
  owner: string | null
}

export interface ImpactSuiteJson extends ImpactCostJson, ImpactGroupCounts {
  suite: string
}

export interface ImpactTestJson extends ImpactCostJson {
  test_id: string
  name: string
  suite: string
  owners: string[]
  runs: number
}

/** `GET /impact`: CI time lost and failures caused by flaky tests, per week, owner, suite and test. */
export interface ImpactResponse {
  /** See {@link SelectionCover}. */
  covers?: SelectionCover
  generated_at: string
  definition: { time_lost: string; failures: string; flaky_tests: string; broken_tests: string }
  totals: ImpactCostJson & ImpactGroupCounts & { runs: number }
  weeks: ImpactWeekJson[]
  /** Most CI time lost first, at most 100; `owners_total` counts them all. */
  owners: ImpactOwnerJson[]
  owners_total: number
  suites: ImpactSuiteJson[]
  suites_total: number
  /** The most costly flaky tests, at most `limit`; `costly_tests` counts every flaky test that cost anything. */
  tests: ImpactTestJson[]
  costly_tests: number
  /**
   * Present when some tests' stored analyses were not current at this answer's clock (as the leaderboard's
   * `pending`): those tests count with their last verdicts while the sweep catches up.
   */
  pending?: number
}

export interface KioskBroken {
  test_id: string
  name: string
  suite: string
  /** Failures in a row at the end of the history. */
  streak: number
  since: string | null
}

export interface KioskFlaky {
  test_id: string
  name: string
  suite: string
  score: number
  /** The last five results, oldest first, as {@link HeatCell}s. */
  last5: string
}

export interface KioskSuite {
  suite: string
  /** Whole days since the suite's last failed result; null when it never failed in the selection. */
  days_without_failure: number | null
  last_failure_at: string | null
  last_run_at: string | null
}

export interface KioskResponse {
  /** See {@link SelectionCover}. */
  covers?: SelectionCover
  generated_at: string
  /** The one time every panel is evaluated at: the analysis as-of time (just after the newest selected run). */
  as_of: string
  newest_run_at: string | null
  /** All broken tests, of which `broken` lists the most recently broken. */
  broken_total: number
  broken: KioskBroken[]
  flaky: KioskFlaky[]
  suites: KioskSuite[]
}

export interface FacetsResponse {
  suites: string[]
  branches: string[]
  env: Record<string, string[]>
  runs: number
  newest_run_at: string | null
  /** Every code owner (CODEOWNERS) of a stored test, for the owner filter. */
  owners?: string[]
}

export interface HealthResponse {
  status: 'ok'
  store: 'sqlite' | 'postgres'
  /** The upload queue: uploads accepted and not yet answered, those being stored now, and the most accepted. */
  uploads: { accepted: number; running: number; capacity: number; workers: number }
  /**
   * Present when this server looks for notification state changes (webhooks configured, under `serve`): where the
   * looks run (`worker`: the analysis worker thread), how many finished, and when the last one did.
   */
  notifications?: { runs_in: 'worker' | 'in-process'; looks: number; last_look_at: string | null }
  /** Present when reads go to a replica (`serve --read-db`): how far behind it is, or why it is not used. */
  replica?: ReplicaHealth
}

/** A read replica as `/healthz` reports it. */
export interface ReplicaHealth {
  /** The replica's URL, without a password. */
  location: string
  /** False when it cannot be reached or is not a standby: reads then go to the primary. */
  reachable: boolean
  /** How far its replayed state trails the primary, in ms (null when unknown). */
  lag_ms: number | null
  /** WAL bytes the primary has written that the replica has not replayed yet (null when unknown). */
  lag_bytes: number | null
  /** The last WAL position it replayed, as PostgreSQL prints it. */
  replayed_lsn: string | null
  /** Why it is not used, when it is not. */
  error?: string
}

/** `GET /api/v1/projects` (multi-project servers): the projects the presented token reaches. */
export interface ProjectListResponse {
  default: string | null
  projects: { key: string }[]
}

/** One project's figures on the organisation overview. */
export interface ProjectOverview {
  tests: number
  flaky: number
  broken: number
  quarantined: number
  /** Time spent in failed attempts over the analysis window, all tests. */
  ci_time_lost_ms: number
  top_flaky: { test_id: string; score: number; pass_rate: number | null; time_lost_ms: number }[]
}

/** `GET /api/v1/overview` (organisation token): every project, most CI time lost first. */
export interface OverviewResponse {
  projects: (ProjectOverview & { project: string })[]
}

/** What an upload stored: the same JSON as `flakewatch ingest --json`. */
export interface UploadResponse {
  ingested: {
    file: string
    run_id: string
    tests: number
    results: number
    attempts: number
    /** What ingest did not trust in the report and replaced (present only when something was). */
    warnings?: string[]
  }[]
  duplicates: { file: string; run_id: string }[]
  failed: { file: string; error: string }[]
  /**
   * With a read replica (`serve --read-db`): the primary's WAL position after this upload committed. A read that
   * presents it (`X-Flakewatch-Written`, or the cookie the answer sets) sees the upload.
   */
  written_lsn?: string
}

export type { Evidence }

/** One policy setting, by its config key (`quarantine.minScore`), with its value now and under a candidate. */
export interface PolicySettingJson {
  key: string
  current: unknown
  candidate: unknown
}

/** What a policy would do to one test: its verdict and why, and the quarantine policy's action and why. */
export interface PolicyOutcomeJson {
  verdict: VerdictKind
  reason: string
  action: 'quarantine' | 'release' | 'expire' | 'over_cap' | 'none'
  action_reason: string | null
}

/**
 * `POST /api/v1/policy/preview` and `flakewatch analyze --policy <file> --diff --json`: the tests whose verdict,
 * quarantine or release a candidate policy would change, and why. Nothing is saved.
 */
export interface PolicyPreviewResponse {
  settings: PolicySettingJson[]
  tests: number
  totals: {
    verdict_changed: number
    would_quarantine: number
    would_no_longer_quarantine: number
    would_release: number
    would_no_longer_release: number
  }
  changes: {
    test_id: string
    quarantined: boolean
    current: PolicyOutcomeJson
    candidate: PolicyOutcomeJson
    why: string[]
  }[]
}

/**
 * `GET /api/v1/policy`: the policy in force, one setting per config key (`quarantine.minScore`, the key as the
 * config file spells it), analysis settings with the engine's defaults filled in.
 */
export interface PolicyResponse {
  settings: { key: string; value: unknown }[]
}
