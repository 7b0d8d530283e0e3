import type { QuarantineCriteria } from './quarantine-criteria.js'

/** Weights of the six score components. The first five add up; the penalty scales the sum down. */
export interface ScoringWeights {
  intermittency: number
  rerunPassRate: number
  failureClustering: number
  messageVariance: number
  failSuccessRatio: number
  consecutiveFailurePenalty: number
}

/** The seed's ScoringConfig (FlakeGuard), plus `minRecentFailures` from its quarantine policy. */
export interface ScoringConfig {
  /** Newest runs the score looks at. Also the run count at which "data quantity" confidence reaches 1. */
  rollingWindowSize: number
  /** Below this many runs there is no score-based action and no statistical verdict. */
  minRunsForScoring: number
  /** Runs older than this (relative to `ctx.now`) are ignored by the whole analysis. */
  lookbackDays: number
  /** Days that count as "recent" for the quarantine recommendation. */
  recentFailureWindow: number
  /** Failures needed inside `recentFailureWindow` before a quarantine is recommended. */
  minRecentFailures: number
  quarantineThreshold: number
  investigationThreshold: number
  monitoringThreshold: number
  minConfidenceForQuarantine: number
  minConfidenceForAction: number
  weights: ScoringWeights
}

/** Breadcrumb's flip rate and its exponentially weighted variant. */
export interface FlipRateConfig {
  window: number
  ewmaAlpha: number
  ewmaWindow: number
}

export interface VerdictConfig {
  /** A trailing run of at least this many failures may be a breakage. */
  brokenMinConsecutive: number
  /** ...and is one when a streak that long is this unlikely under the failure rate seen before it. */
  brokenAlpha: number
  /** Runs before a failure streak that give the failure rate it is compared with. */
  baselineRuns: number
  /** A trailing run of at least this many clean runs after failures may be a fix. */
  fixedMinRuns: number
  /**
   * ...and is one when a test still failing at its old rate would have had that many clean runs in a row with
   * probability at most this (and under each condition its failures concentrated on). See `earnedFix`.
   */
  fixedAlpha: number
  /** The old rate is the one-sided Clopper–Pearson lower bound at this confidence: conservative, so fixes are earned. */
  fixedRateConfidence: number
  /**
   * ...and the clean stretch is at least this many times the longest earlier gap between runs with a failure
   * (bursty tests are clean for weeks between bursts).
   */
  fixedGapFactor: number
  /**
   * When a test's failures span fewer runs than the clean stretch their rate asks for (one short episode, which a
   * first burst makes too), the fix also waits until the runs since its first failure reach this: the documented
   * release bound, so a real fix is still released within it.
   */
  fixedEpisodeRuns: number
  /** Final failures in a row on one non-default branch that make a branch breakage rather than flakiness. */
  branchBreakageMinRuns: number
  /** Separate failure episodes needed to call a test flaky without proof (same revision, retry). */
  minFailureEpisodes: number
}

export interface InfraConfig {
  /** A run in which at least this share of its tests failed is an infrastructure failure. */
  failedShare: number
  /** Runs with fewer tests than this are never called infrastructure failures. */
  minTests: number
}

export interface HintsConfig {
  /** Family-wise significance level for associations, bursts and time-of-day clustering. */
  alpha: number
  /** No association or burst is reported with fewer failures than this. */
  minFailures: number
  /** Most failure modes kept per test. */
  maxFailureModes: number
}

/** The per-test success rate of the quarantine blog. */
export interface SuccessRateConfig {
  days: number
  defaultBranch: string
  /** Job or pipeline statuses that mean "passed" (compared case-insensitively). */
  passedStatuses: string[]
}

export interface ResolvedAnalysisConfig {
  /** The quarantine policy's entry criteria, so that recommendations follow the policy (config `quarantine`). */
  quarantine: QuarantineCriteria
  flipRate: FlipRateConfig
  scoring: ScoringConfig
  verdict: VerdictConfig
  infra: InfraConfig
  hints: HintsConfig
  successRate: SuccessRateConfig
}

type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K]
}

/** What a caller may pass: any subset of {@link ResolvedAnalysisConfig}. Validation happens in `config/`. */
export type AnalysisConfigOptions = DeepPartial<ResolvedAnalysisConfig>

/** The defaults. Frozen: resolve a copy instead of changing it. */
export const DEFAULT_ANALYSIS_CONFIG: Readonly<ResolvedAnalysisConfig> = deepFreeze({
  // The same values as the config defaults' `quarantine` section; `analysisOptions` passes the configured ones.
  quarantine: {
    classes: ['flaky', 'chronic'],
    minScore: 0.6,
    minConfidence: 0.5,
    onProvenEvidence: true,
    onFlakyVerdict: true,
    releaseAfterPasses: 10,
  },
  flipRate: { window: 10, ewmaAlpha: 0.3, ewmaWindow: 20 },
  scoring: {
    rollingWindowSize: 50,
    minRunsForScoring: 5,
    lookbackDays: 30,
    recentFailureWindow: 7,
    minRecentFailures: 2,
    quarantineThreshold: 0.6,
    investigationThreshold: 0.4,
    monitoringThreshold: 0.2,
    minConfidenceForQuarantine: 0.7,
    minConfidenceForAction: 0.5,
    weights: {
      intermittency: 0.3,
      rerunPassRate: 0.25,
      failureClustering: 0.15,
      messageVariance: 0.1,
      failSuccessRatio: 0.1,
      consecutiveFailurePenalty: 0.1,
    },
  },
  verdict: {
    brokenMinConsecutive: 3,
    brokenAlpha: 0.001,
    baselineRuns: 20,
    fixedMinRuns: 10,
    fixedAlpha: 0.01,
    fixedRateConfidence: 0.9,
    fixedGapFactor: 1.5,
    fixedEpisodeRuns: 220,
    branchBreakageMinRuns: 2,
    minFailureEpisodes: 2,
  },
  infra: { failedShare: 0.8, minTests: 5 },
  hints: { alpha: 0.01, minFailures: 3, maxFailureModes: 10 },
  successRate: { days: 3, defaultBranch: 'main', passedStatuses: ['success', 'passed'] },
})

/**
 * Deep-merges options over the defaults. Arrays replace, `undefined` keeps the default. No validation: that is
 * the config module's job (zod), so that the analysis stays free of dependencies.
 * @example
 * resolveAnalysisConfig({ scoring: { weights: { intermittency: 0.4 } } }).scoring.weights.rerunPassRate // 0.25
 */
export function resolveAnalysisConfig(options: AnalysisConfigOptions = {}): ResolvedAnalysisConfig {
  return merge(DEFAULT_ANALYSIS_CONFIG, options) as ResolvedAnalysisConfig
}

function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return clone(base)
  if (!isPlainObject(base) || !isPlainObject(over)) return clone(over)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(base)) out[key] = merge(base[key], over[key])
  for (const key of Object.keys(over)) if (!(key in base)) out[key] = clone(over[key])
  return out
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]))
  return value
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
