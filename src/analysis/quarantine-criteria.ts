import type { VerdictKind } from '../model.js'
import type { FlipClass } from './types.js'

/** The part of the quarantine policy that decides entry: the config's `quarantine` section. */
export interface QuarantineCriteria {
  /** Flip-rate classes that quarantine a flaky test. */
  classes: FlipClass[]
  minScore: number
  minConfidence: number
  /** Quarantine a flaky test on proof alone (a pass and a fail on one revision, or a pass on retry). */
  onProvenEvidence: boolean
  /** This many clean passes in a row release a test, so a test with as many never enters (hysteresis). */
  releaseAfterPasses: number
}

/** What the criteria look at, all from one test's analysis. */
export interface QuarantineCandidate {
  verdict: VerdictKind
  flipRateClass: FlipClass
  score: number
  confidence: number
  proven: boolean
  trailingPasses: number
  reason: string
}

/**
 * Why the policy quarantines this test, or null. Only a flaky verdict qualifies (a broken test needs a fix, not a
 * mute button); then its flip-rate class, its score at enough confidence, or proof. A test that already passed
 * `releaseAfterPasses` times in a row never enters, because that is the release rule: entry and release are
 * disjoint, so applying the policy twice without new data changes nothing. The recommendation uses the same
 * function, so that `recommendation.action` is `quarantine` exactly when `quarantine auto` would act.
 * @example quarantineCriterion({ verdict: 'flaky', flipRateClass: 'chronic', ... }, criteria) // 'chronic (flip rate class); …'
 */
export function quarantineCriterion(t: QuarantineCandidate, c: QuarantineCriteria): string | null {
  if (t.verdict !== 'flaky') return null
  if (t.trailingPasses >= c.releaseAfterPasses) return null
  if (c.classes.includes(t.flipRateClass)) return `${t.flipRateClass} (flip rate class); ${t.reason}`
  if (t.score >= c.minScore && t.confidence >= c.minConfidence) {
    return `flakiness score ${t.score.toFixed(2)} at confidence ${t.confidence.toFixed(2)}; ${t.reason}`
  }
  if (c.onProvenEvidence && t.proven) return `proven flaky; ${t.reason}`
  return null
}
