import { quarantineCriterion } from '../analysis/quarantine-criteria.js'
import type { FlipClass } from '../analysis/types.js'
import type { QuarantineRecord } from '../store/store.js'
import { compareText } from '../compare-text.js'

export type { FlipClass }

/** What the policy needs to know of one test, taken from its analysis. */
export interface PolicyTest {
  testId: string
  verdict: 'healthy' | 'flaky' | 'broken' | 'insufficient_data'
  classification: FlipClass
  score: number
  confidence: number
  /** Proven flakiness: a pass and a fail on one revision, or a pass on retry. */
  proven: boolean
  /** Passes in a row at the end of the history (a pass on retry does not count). */
  trailingPasses: number
  reason: string
  /** Harm, for choosing under the cap: CI time lost in failed attempts, failures, and the newest failure. */
  timeLostMs?: number
  failures?: number
  lastFailureAt?: number | null
}

export interface QuarantinePolicy {
  classes: FlipClass[]
  minScore: number
  minConfidence: number
  onProvenEvidence: boolean
  onFlakyVerdict: boolean
  releaseAfterPasses: number
  releaseClasses: FlipClass[]
  maxQuarantined: number
  expiryDays: number
}

export interface PolicyDecision {
  quarantine: { testId: string; reason: string }[]
  release: { testId: string; reason: string }[]
  expire: { testId: string; reason: string }[]
  /** Tests that qualified but were left out because the cap was reached: said loudly by every caller. */
  overCap: { testId: string; reason: string }[]
}

/**
 * Why a test qualifies for quarantine, or null: the analysis' `quarantineCriterion`, the same function that makes
 * `recommendation.action` say `quarantine`. Only a flaky verdict qualifies, and release needs the verdict to
 * change: entry and release are disjoint.
 */
export function quarantineReason(t: PolicyTest, p: QuarantinePolicy): string | null {
  return quarantineCriterion({ ...t, flipRateClass: t.classification }, p)
}

/** Most harmful first: CI time lost, then failures, then the most recent failure, then the id for a stable order. */
export function harmOrder(a: PolicyTest, b: PolicyTest): number {
  return (
    (b.timeLostMs ?? 0) - (a.timeLostMs ?? 0) ||
    (b.failures ?? 0) - (a.failures ?? 0) ||
    (b.lastFailureAt ?? -Infinity) - (a.lastFailureAt ?? -Infinity) ||
    b.score - a.score ||
    compareText(a.testId, b.testId)
  )
}

/**
 * Decides which tests to quarantine and which to release, given every test's analysis and the current records.
 * Manual quarantines are pinned: only their expiry ends them. Pure, so the rules are tested with plain arrays.
 * @example decideQuarantine(tests, current, policy, Date.now()).quarantine
 */
export function decideQuarantine(
  tests: PolicyTest[],
  current: QuarantineRecord[],
  policy: QuarantinePolicy,
  now: number,
): PolicyDecision {
  const decision: PolicyDecision = { quarantine: [], release: [], expire: [], overCap: [] }
  const byId = new Map(current.map((q) => [q.testId, q]))
  let active = 0
  for (const q of current) {
    if (q.expiresAt && Date.parse(q.expiresAt) <= now) {
      decision.expire.push({ testId: q.testId, reason: `expired at ${q.expiresAt}` })
    } else active++
  }
  const expired = new Set(decision.expire.map((e) => e.testId))
  for (const t of tests) {
    const q = byId.get(t.testId)
    if (q && !expired.has(t.testId)) {
      if (q.source !== 'auto') continue
      if (t.verdict === 'broken') {
        // A quarantined test that now fails every time is broken, not flaky: it must be seen.
        decision.release.push({ testId: t.testId, reason: `now broken: ${t.reason}` })
        active--
      } else if (t.verdict !== 'flaky' && t.trailingPasses >= policy.releaseAfterPasses) {
        // The same rule as the verdict: released once the clean stretch has earned a fix (or the failures left the
        // lookback), never on a streak that a test still failing at its old rate would have by chance.
        decision.release.push({ testId: t.testId, reason: t.reason })
        active--
      } else if (policy.releaseClasses.includes(t.classification) && quarantineReason(t, policy) === null) {
        // Only when it no longer qualifies, so that a test is not released and re-quarantined on alternate runs.
        decision.release.push({ testId: t.testId, reason: `flip rate class fell to ${t.classification}` })
        active--
      }
    }
  }
  const candidates = tests
    .filter((t) => !byId.has(t.testId) || expired.has(t.testId))
    .map((t) => ({ t, reason: quarantineReason(t, policy) }))
    .filter((c): c is { t: PolicyTest; reason: string } => c.reason !== null)
    // Most harmful first, so that under the cap the tests that cost the most CI time are quarantined.
    .sort((a, b) => harmOrder(a.t, b.t))
  for (const { t, reason } of candidates) {
    if (active >= policy.maxQuarantined) decision.overCap.push({ testId: t.testId, reason })
    else {
      decision.quarantine.push({ testId: t.testId, reason })
      active++
    }
  }
  return decision
}
