/** The analysis engine: pure functions from test histories to metrics, evidence and verdicts. */
export { analyzeHistories, withOrderHints } from './analyze-histories.js'
export { analyzeTest, type AnalysisContext } from './analyze-test.js'
export { binomialUpperTail } from './binomial-tail.js'
export { burstScan, type BurstScan, type FailureCluster } from './burst-scan.js'
export { classifyFlipRate } from './classify-flip-rate.js'
export { clusterCountTail } from './cluster-count-tail.js'
export { decideVerdict, type VerdictInput, type VerdictResult } from './decide-verdict.js'
export { ewmaFlipRate } from './ewma-flip-rate.js'
export { failureAssociations } from './failure-associations.js'
export { failureBurst } from './failure-burst.js'
export { failureModes } from './failure-modes.js'
export { flakinessScore } from './flakiness-score.js'
export { flipRate } from './flip-rate.js'
export { hadFailure } from './had-failure.js'
export { hypergeometricUpperTail } from './hypergeometric-tail.js'
export { infraRunIds, type RunFailureCounts } from './infra-run-ids.js'
export { newlyFlaky } from './newly-flaky.js'
export { normalizeMessage } from './normalize-message.js'
export { numericFacetHints } from './numeric-facets.js'
export {
  createOrderIndex,
  orderDependency,
  type OrderIndex,
  type OrderIndexContext,
  type OrderSeries,
} from './order-dependency.js'
export { passRateClass } from './pass-rate-class.js'
export { recommend, type RecommendInput } from './recommend.js'
export {
  DEFAULT_ANALYSIS_CONFIG,
  resolveAnalysisConfig,
  type AnalysisConfigOptions,
  type FlipRateConfig,
  type HintsConfig,
  type InfraConfig,
  type ResolvedAnalysisConfig,
  type ScoringConfig,
  type ScoringWeights,
  type SuccessRateConfig,
  type VerdictConfig,
} from './resolve-analysis-config.js'
export { scoreConfidence } from './score-confidence.js'
export { isRelevantRun, successRate, successRateMap } from './success-rate.js'
export { timeoutHint } from './timeouts.js'
export { summarizeAnalyses, type AnalysisSummary } from './summarize-analyses.js'
export { hintToJson, toAnalysisJson, type TestAnalysisJson } from './to-analysis-json.js'
export type {
  AssociationHint,
  BurstHint,
  BurstWindow,
  ChangeHint,
  ContextStats,
  FailureMode,
  FlakinessScore,
  FlipClass,
  Hint,
  NumericFacetHint,
  OrderHint,
  PassRateClass,
  Priority,
  Recommendation,
  RecommendedAction,
  ScoreComponents,
  TestAnalysis,
  TimeoutHint,
} from './types.js'
