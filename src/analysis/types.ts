import type { EnvFacets, Evidence, ResultStatus, TestRef, VerdictKind } from '../model.js'

/** Breadcrumb's flip-rate classes: stable (0), intermittent (≤ 0.2), flaky (≤ 0.5), chronic (> 0.5). */
export type FlipClass = 'stable' | 'intermittent' | 'flaky' | 'chronic'

/** GitLabViz pass-rate classes. */
export type PassRateClass = 'stable' | 'intermittent' | 'actively_flaky' | 'broken'

export type RecommendedAction = 'stable' | 'monitor' | 'investigate' | 'quarantine'
export type Priority = 'low' | 'medium' | 'high' | 'critical'

export interface Recommendation {
  action: RecommendedAction
  priority: Priority
  reason: string
}

/** The six components of the flakiness score, each in [0, 1]. */
export interface ScoreComponents {
  intermittency: number
  rerunPassRate: number
  failureClustering: number
  messageVariance: number
  failSuccessRatio: number
  consecutiveFailurePenalty: number
}

export interface FlakinessScore {
  score: number
  components: ScoreComponents
  confidence: number
}

/** Failures that share one normalised message. Times are epoch milliseconds. */
export interface FailureMode {
  signature: string
  count: number
  firstSeen: number
  lastSeen: number
  firstRunId: string
  lastRunId: string
  errorType: string | null
  /** One raw message, cut to 500 characters. */
  example: string | null
}

/** Failures over-represented on one runner, env facet value or time-of-day bucket. */
export interface AssociationHint {
  kind: 'facet_association' | 'time_of_day'
  /** `runner`, `env.<key>` or `time_of_day`. */
  facet: string
  value: string
  failures: number
  executions: number
  failureShare: number
  executionShare: number
  /** One-sided binomial p-value, Bonferroni-adjusted for every value tested. */
  pValue: number
  /** A time of day only: the window's first UTC hour and its width in hours (it may wrap past midnight). */
  fromHour?: number
  hours?: number
  message: string
}

/** One window of a burst: consecutive runs, oldest first. Times are epoch milliseconds. */
export interface BurstWindow {
  from: number
  to: number
  runs: number
  failures: number
}

/**
 * Failures packed into a few windows of consecutive runs, more tightly than random failures with the same rate
 * would be (a permutation test on the number of failure clusters). The top-level counts are those of the windows
 * together; `windows` lists them, biggest first.
 */
export interface BurstHint {
  kind: 'burst'
  /** Failures inside the windows. */
  failures: number
  totalFailures: number
  /** Runs the windows span, together. */
  runs: number
  /** Start of the first window and end of the last. */
  from: number
  to: number
  failureShare: number
  executionShare: number
  pValue: number
  windows: BurstWindow[]
  message: string
}

/**
 * Failures that follow another test of the same file: the test fails when `polluter` ran before it in the same run
 * far more often than its other executions allow. p-value: hypergeometric upper tail, times the number of
 * candidate polluters (Bonferroni).
 */
export interface OrderHint {
  kind: 'order_dependency'
  polluter: string
  polluterName: string
  /** Failures in runs where the polluter ran first. */
  failures: number
  totalFailures: number
  /** Executions (with a known order) where the polluter ran first, of all executions with a known order. */
  executions: number
  totalExecutions: number
  failureShare: number
  executionShare: number
  /** Failure rate when the polluter ran first, and otherwise. */
  failRateAfter: number
  failRateOtherwise: number
  candidates: number
  pValue: number
  message: string
}

/**
 * Failures at a duration ceiling (a timeout), with the runners where the test runs slowest when they hold most of
 * them, and the test's own duration trend.
 */
export interface TimeoutHint {
  kind: 'timeout'
  /** The ceiling: median duration of the failures at it, in ms. */
  ceilingMs: number
  /** Failures at the ceiling (or with a timeout message), of all failures. */
  failures: number
  totalFailures: number
  failureShare: number
  /** Share of executions at or above the ceiling's lower edge. */
  executionShare: number
  /** p-value that so many failures sit at the ceiling when passes rarely come near it (binomial). */
  pValue: number
  /** The slowest runners (by this test's median duration there) when they hold the failures, else empty. */
  slowRunners: string[]
  slowRunnerFailures: number
  slowRunnerExecutionShare: number
  /** The test's median duration on those runners, ms; null without slow runners. */
  slowRunnerMedianMs: number | null
  slowRunnerPValue: number | null
  /** Median passing duration in the first and last third of the history, ms. */
  medianFirstMs: number | null
  medianLastMs: number | null
  message: string
}

/** A numeric env facet (workers, shards, cpus) whose failures sit at or beyond a threshold. */
export interface NumericFacetHint {
  kind: 'numeric_facet'
  facet: string
  /** `>=` or `<=`. */
  direction: '>=' | '<='
  threshold: number
  failures: number
  totalFailures: number
  executions: number
  failureShare: number
  executionShare: number
  /** One-sided binomial p-value, Bonferroni-adjusted for every threshold tested. */
  pValue: number
  message: string
}

/** One requirement of an earned fix (see `earnedFix`): clean runs under a condition at the old rate there. */
export interface FixRequirement {
  /** `on runner ci-7`, `with workers ≥ 6`, `between 10:00 and 14:00 UTC`; null for every run. */
  where: string | null
  /** Runs before the clean stretch that meet the condition, and those of them with a failure. */
  runs: number
  failures: number
  /** The conservative old failure rate: the one-sided lower confidence bound (`fixedRateConfidence`). */
  rateBound: number
  /** Clean runs under the condition that make the stretch improbable at `rateBound`: (1 − rateBound)^needed ≤ α. */
  needed: number
  /** Clean runs in the stretch that meet the condition. */
  clean: number
  /** (1 − rateBound)^clean: how likely the test, still failing at `rateBound`, would be this clean by chance. */
  chance: number
}

/**
 * A change point: the test started failing intermittently (newly flaky) or for good (broken), or stopped (fixed).
 * `maybe_fixed` is a clean stretch that has not yet earned a fix: `missing` says what it still needs.
 */
export interface ChangeHint {
  kind: 'newly_flaky' | 'broken_since' | 'fixed' | 'maybe_fixed'
  since: number
  runId: string
  revision: string | null
  /** Runs before and after the change. */
  runsBefore: number
  runsAfter: number
  failuresBefore: number
  failuresAfter: number
  /** fixed and maybe_fixed: the significance a fix needs, the largest chance of its requirements, the requirements. */
  alpha?: number
  chance?: number
  requirements?: FixRequirement[]
  /** maybe_fixed: what the stretch still needs. */
  missing?: string
  message: string
}

/** Failures confined to one non-default branch and consistent there: that branch's breakage, not flakiness. */
export interface BranchBreakageHint {
  kind: 'branch_breakage'
  branch: string
  /** The first failing run on the branch. */
  since: number
  runId: string
  revision: string | null
  /** Failing runs set aside. */
  runs: number
  /** Whether the branch still fails at its newest run. */
  ongoing: boolean
  message: string
}

export type Hint =
  AssociationHint | BurstHint | ChangeHint | BranchBreakageHint | OrderHint | TimeoutHint | NumericFacetHint

/** Outcomes in one environment (env facet combination); `context` is `key=value,…` or `default`. */
export interface ContextStats {
  context: string
  facets: EnvFacets
  passes: number
  failures: number
  passRate: number | null
  passRateClass: PassRateClass
}

/** Everything the analysis says about one test. The CLI prints it through `toAnalysisJson`. */
export interface TestAnalysis {
  testId: string
  test: TestRef
  /** Countable runs: in the lookback, not skipped, not in an excluded (infrastructure) run. */
  runs: number
  passes: number
  failures: number
  skipped: number
  excludedRuns: number
  /** Failing runs of one non-default branch set aside as that branch's breakage (see `branch_breakage` hints). */
  branchBreakageRuns: number
  passRate: number | null
  flipRate: number
  ewmaFlipRate: number
  /** Breadcrumb's class of the flip rate: one name everywhere (`flip_rate_class` in JSON). */
  flipRateClass: FlipClass
  score: number
  components: ScoreComponents
  confidence: number
  recommendation: Recommendation
  passRateClass: PassRateClass
  /** Quarantine-blog success rate over relevant runs of the last few days, null without such runs. */
  successRate: number | null
  verdict: VerdictKind
  reason: string
  evidence: Evidence[]
  failureModes: FailureMode[]
  hints: Hint[]
  contexts: ContextStats[]
  /** Time spent in failed attempts (CI time lost), over countable runs. */
  timeLostMs: number
  /** Clean runs in a row at the end of the countable runs (a pass on retry breaks the streak). */
  trailingPasses: number
  /** Proven flaky: a pass and a fail on one revision, or a pass on retry, in the countable runs. */
  proven: boolean
  /** The newest countable run with a failed attempt, epoch ms. */
  lastFailureAt: number | null
  lastStatus: ResultStatus | null
  firstRunAt: number | null
  lastRunAt: number | null
}
