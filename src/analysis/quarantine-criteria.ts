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
  /**
   * Quarantine every test with a flaky verdict (the default): a flaky verdict already means the test failed
   * intermittently and has not earned a fix. False narrows entry to the class, score and proof routes.
   */
  onFlakyVerdict: boolean
  /** Release needs at least this many clean passes in a row as well as a verdict that is no longer flaky. */
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
 * mute button); then its flip-rate class, its score at enough confidence, proof, or the verdict itself
 * (`onFlakyVerdict`, the default). A clean streak does not keep a flaky test out: the verdict stays flaky until
 * the streak has earned a fix (`earnedFix`), and the release rule is that verdict changing, so entry and release
 * are disjoint and applying the policy twice without new data changes nothing. The recommendation uses the same
 * function, so that `recommendation.action` is `quarantine` exactly when `quarantine auto` would act.
 * @example quarantineCriterion({ verdict: 'flaky', flipRateClass: 'chronic', ... }, criteria) // 'chronic (flip rate class); …'
 */
export function quarantineCriterion(t: QuarantineCandidate, c: QuarantineCriteria): string | null {
  if (t.verdict !== 'flaky') return null
  if (c.classes.includes(t.flipRateClass)) return `${t.flipRateClass} (flip rate class); ${t.reason}`
  if (t.score >= c.minScore && t.confidence >= c.minConfidence) {
    return `flakiness score ${t.score.toFixed(2)} at confidence ${t.confidence.toFixed(2)}; ${t.reason}`
  }
  if (c.onProvenEvidence && t.proven) return `proven flaky; ${t.reason}`
  if (c.onFlakyVerdict) return `flaky verdict; ${t.reason}`
  return null
}
