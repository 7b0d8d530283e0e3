import type { VerdictKind } from '../model.js'
import type { FlipClass, PassRateClass, RecommendedAction, TestAnalysis } from './types.js'

/** Counts over a set of analyses, for summaries and the dashboard's trends. */
export interface AnalysisSummary {
  tests: number
  runs: number
  verdicts: Record<VerdictKind, number>
  flipRateClasses: Record<FlipClass, number>
  passRateClasses: Record<PassRateClass, number>
  recommendations: Record<RecommendedAction, number>
  timeLostMs: number
}

/**
 * Counts per verdict, flip-rate class, pass-rate class and recommended action, plus the CI time lost.
 * @example summarizeAnalyses(analyses).verdicts.flaky // 12
 */
export function summarizeAnalyses(analyses: Iterable<TestAnalysis>): AnalysisSummary {
  const s: AnalysisSummary = {
    tests: 0,
    runs: 0,
    verdicts: { healthy: 0, flaky: 0, broken: 0, insufficient_data: 0 },
    flipRateClasses: { stable: 0, intermittent: 0, flaky: 0, chronic: 0 },
    passRateClasses: { stable: 0, intermittent: 0, actively_flaky: 0, broken: 0 },
    recommendations: { stable: 0, monitor: 0, investigate: 0, quarantine: 0 },
    timeLostMs: 0,
  }
  for (const a of analyses) {
    s.tests++
    s.runs += a.runs
    s.verdicts[a.verdict]++
    s.flipRateClasses[a.flipRateClass]++
    s.passRateClasses[a.passRateClass]++
    s.recommendations[a.recommendation.action]++
    s.timeLostMs += a.timeLostMs
  }
  return s
}
