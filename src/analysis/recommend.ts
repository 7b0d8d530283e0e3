import type { VerdictKind } from '../model.js'
import { fixed2, plural } from './format.js'
import type { ScoringConfig } from './resolve-analysis-config.js'
import type { Priority, Recommendation, RecommendedAction } from './types.js'

export interface RecommendInput {
  score: number
  confidence: number
  /** Countable runs in the scoring window. */
  runs: number
  /** Failures within `recentFailureWindow` days. */
  recentFailures: number
  verdict: VerdictKind
  /** Why the quarantine policy would quarantine this test (`quarantineCriterion`), or null. */
  policyReason?: string | null
}

/**
 * What to do about a test, kept consistent with the verdict and the quarantine policy: `quarantine` exactly when
 * the policy would quarantine it (`policyReason`); a broken test is to be fixed, never quarantined as a flake;
 * otherwise the score and its confidence against the configured thresholds (FlakeGuard) pick investigate,
 * monitor or stable, a healthy or unknown test is at most monitored, and a proven flaky test at least monitored.
 * @example recommend({ score: 0.7, confidence: 0.9, runs: 50, recentFailures: 4, verdict: 'flaky', policyReason: 'chronic' }, cfg.scoring)
 * // { action: 'quarantine', priority: 'high', reason: 'the quarantine policy applies: chronic' }
 */
export function recommend(input: RecommendInput, cfg: ScoringConfig): Recommendation {
  const { score, confidence, verdict } = input
  const s = fixed2(score)
  const c = fixed2(confidence)
  if (verdict === 'broken') {
    return rec('investigate', 'critical', 'failing consistently: a regression to fix, not a flake to quarantine')
  }
  if (input.policyReason) {
    return rec('quarantine', score >= 0.8 ? 'critical' : 'high', `the quarantine policy applies: ${input.policyReason}`)
  }
  const capped = verdict === 'healthy' || verdict === 'insufficient_data'
  const floor = (r: Recommendation): Recommendation =>
    verdict === 'flaky' && r.action === 'stable'
      ? rec('monitor', 'low', `proven flaky, but the score is low (${s})`)
      : r
  if (input.runs < cfg.minRunsForScoring) {
    return floor(rec('stable', 'low', `only ${plural(input.runs, 'run')} to score (need ${cfg.minRunsForScoring})`))
  }
  if (confidence < cfg.minConfidenceForAction) {
    const action = score >= cfg.monitoringThreshold ? 'monitor' : 'stable'
    return floor(rec(action, 'low', `low confidence (${c}) in score ${s}`))
  }
  const q = cfg.quarantineThreshold
  if (score >= q && !capped) {
    if (confidence < cfg.minConfidenceForQuarantine) {
      return rec('investigate', 'high', `score ${s} ≥ ${q}, but confidence ${c} < ${cfg.minConfidenceForQuarantine}`)
    }
    if (input.recentFailures < cfg.minRecentFailures) {
      const recent = `${plural(input.recentFailures, 'failure')} in the last ${cfg.recentFailureWindow} days`
      return rec('investigate', 'medium', `score ${s} ≥ ${q}, but only ${recent}`)
    }
    // Only the policy quarantines (above); here it does not apply, e.g. because the test passes again.
    return rec('investigate', 'high', `flakiness score ${s} ≥ ${q} with confidence ${c}, outside the quarantine policy`)
  }
  if (score >= cfg.investigationThreshold && !capped) {
    return rec('investigate', 'medium', `flakiness score ${s} ≥ ${cfg.investigationThreshold}`)
  }
  if (score >= cfg.monitoringThreshold) {
    return rec('monitor', 'low', `flakiness score ${s} ≥ ${cfg.monitoringThreshold}`)
  }
  return floor(rec('stable', 'low', `flakiness score ${s} < ${cfg.monitoringThreshold}`))
}

function rec(action: RecommendedAction, priority: Priority, reason: string): Recommendation {
  return { action, priority, reason }
}
