import type { VerdictKind } from '../model.js'
import { fixed2, plural } from './format.js'
import type { ScoringConfig } from './resolve-analysis-config.js'
import type { Recommendation } from './types.js'

export interface RecommendInput {
  score: number
  confidence: number
  /** Countable runs in the scoring window. */
  runs: number
  /** Failures within `recentFailureWindow` days. */
  recentFailures: number
  verdict: VerdictKind
}

/**
 * What to do about a test, from its score and confidence against the configured thresholds (FlakeGuard), kept
 * consistent with the verdict: a broken test is to be fixed, never quarantined as a flake; a healthy or
 * unknown test is at most monitored; a proven flaky test is at least monitored.
 * @example recommend({ score: 0.7, confidence: 0.9, runs: 50, recentFailures: 4, verdict: 'flaky' }, cfg.scoring)
 * // { action: 'quarantine', priority: 'high', reason: 'flakiness score 0.70 ≥ 0.6 with confidence 0.90' }
 */
export function recommend(input: RecommendInput, cfg: ScoringConfig): Recommendation {
  const { score, confidence, verdict } = input
  const s = fixed2(score)
  if (verdict === 'broken') {
    return { action: 'investigate', priority: 'critical', reason: 'failing consistently: a regression to fix, not a flake to quarantine' }
  }
  const capped = verdict === 'healthy' || verdict === 'insufficient_data'
  const floor = (r: Recommendation): Recommendation =>
    verdict === 'flaky' && r.action === 'stable'
      ? { action: 'monitor', priority: 'low', reason: `proven flaky, but the score is low (${s})` }
      : r
  if (input.runs < cfg.minRunsForScoring) {
    return floor({ action: 'stable', priority: 'low', reason: `only ${plural(input.runs, 'run')} to score (need ${cfg.minRunsForScoring})` })
  }
  if (confidence < cfg.minConfidenceForAction) {
    const action = score >= cfg.monitoringThreshold ? 'monitor' : 'stable'
    return floor({ action, priority: 'low', reason: `low confidence (${fixed2(confidence)}) in score ${s}` })
  }
  if (score >= cfg.quarantineThreshold && !capped) {
    if (confidence < cfg.minConfidenceForQuarantine) {
      return { action: 'investigate', priority: 'high', reason: `score ${s} ≥ ${cfg.quarantineThreshold}, but confidence ${fixed2(confidence)} < ${cfg.minConfidenceForQuarantine}` }
    }
    if (input.recentFailures < cfg.minRecentFailures) {
      return { action: 'investigate', priority: 'medium', reason: `score ${s} ≥ ${cfg.quarantineThreshold}, but only ${plural(input.recentFailures, 'failure')} in the last ${cfg.recentFailureWindow} days` }
    }
    return { action: 'quarantine', priority: score >= 0.8 ? 'critical' : 'high', reason: `flakiness score ${s} ≥ ${cfg.quarantineThreshold} with confidence ${fixed2(confidence)}` }
  }
  if (score >= cfg.investigationThreshold && !capped) {
    return { action: 'investigate', priority: 'medium', reason: `flakiness score ${s} ≥ ${cfg.investigationThreshold}` }
  }
  if (score >= cfg.monitoringThreshold) {
    return { action: 'monitor', priority: 'low', reason: `flakiness score ${s} ≥ ${cfg.monitoringThreshold}` }
  }
  return floor({ action: 'stable', priority: 'low', reason: `flakiness score ${s} < ${cfg.monitoringThreshold}` })
}
