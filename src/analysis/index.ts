/** The analysis engine: pure functions from test histories to metrics, evidence and verdicts. */
export { analyzeHistories } from './analyze-histories.js'
export { analyzeTest, type AnalysisContext } from './analyze-test.js'
export { binomialUpperTail } from './binomial-tail.js'
export { classifyFlipRate } from './classify-flip-rate.js'
export { decideVerdict, type VerdictInput, type VerdictResult } from './decide-verdict.js'
export { ewmaFlipRate } from './ewma-flip-rate.js'
export { failureAssociations } from './failure-associations.js'
export { failureBurst } from './failure-burst.js'
export { failureModes } from './failure-modes.js'
export { flakinessScore } from './flakiness-score.js'
export { flipRate } from './flip-rate.js'
export { hadFailure } from './had-failure.js'
export { infraRunIds, type RunFailureCounts } from './infra-run-ids.js'
export { newlyFlaky } from './newly-flaky.js'
export { normalizeMessage } from './normalize-message.js'
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
export { summarizeAnalyses, type AnalysisSummary } from './summarize-analyses.js'
export { toAnalysisJson, type TestAnalysisJson } from './to-analysis-json.js'
export type {
  AssociationHint,
  BurstHint,
  ChangeHint,
  ContextStats,
  FailureMode,
  FlakinessScore,
  FlipClass,
  Hint,
  PassRateClass,
  Priority,
  Recommendation,
  RecommendedAction,
  ScoreComponents,
  TestAnalysis,
} from './types.js'
