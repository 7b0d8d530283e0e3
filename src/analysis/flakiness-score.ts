import { isFailure, type HistoryEntry } from '../model.js'
import { normalizeMessage } from './normalize-message.js'
import type { ScoringConfig } from './resolve-analysis-config.js'
import { scoreConfidence } from './score-confidence.js'
import type { FlakinessScore, ScoreComponents } from './types.js'

/**
 * The FlakeGuard six-component flakiness score over `entries` (the scoring window, oldest first, skips and
 * excluded runs already left out), with its confidence.
 *
 * Like the seed, whose rows are attempts, the pass/fail sequence is the sequence of attempts: a run that failed
 * once and passed on retry contributes `fail, pass`. Each run is rebuilt from its counts as its failed attempts
 * followed by the final pass, if any.
 *
 * - intermittency = transitions / (attempts − 1)
 * - rerunPassRate = retries that passed / retries
 * - failureClustering = max(0, 1 − CV) of the gaps between runs with a failed attempt (needs two such runs)
 * - messageVariance = distinct normalised messages / failing runs with a message
 * - failSuccessRatio = 1 − e^(−3 · failed attempts / attempts)
 * - consecutiveFailurePenalty = min(1, 2 · longest run of failed attempts / attempts)
 * - score = clamp01((Σ weightᵢ · componentᵢ over the first five) · (1 − w_penalty · penalty))
 * @example flakinessScore(history.entries.slice(-50), resolveAnalysisConfig().scoring).score
 */
export function flakinessScore(entries: readonly HistoryEntry[], cfg: ScoringConfig): FlakinessScore {
  let attempts = 0
  let failedAttempts = 0
  let transitions = 0
  let longestFailStreak = 0
  let failStreak = 0
  let prevFailed: boolean | null = null
  let reruns = 0
  let rerunPasses = 0
  let failRuns = 0
  let prevFailAt = NaN
  let gaps = 0
  let gapSum = 0
  let gapSumSq = 0
  let withMessage = 0
  let signatures: Set<string> | null = null

  for (const e of entries) {
    const finalPass = !isFailure(e.status)
    const failed = finalPass ? Math.max(e.failedAttempts, e.flakyOnRetry ? 1 : 0) : Math.max(e.failedAttempts, 1)
    const len = finalPass ? failed + 1 : failed
    attempts += len
    failedAttempts += failed
    reruns += len - 1
    const firstFailed = failed > 0
    if (prevFailed !== null && prevFailed !== firstFailed) transitions++
    if (finalPass && failed > 0) {
      transitions++
      rerunPasses++
    }
    if (failed > 0) {
      failStreak = (prevFailed === true ? failStreak : 0) + failed
      if (failStreak > longestFailStreak) longestFailStreak = failStreak
      const at = e.run.at
      if (failRuns > 0) {
        const gap = at - prevFailAt
        gaps++
        gapSum += gap
        gapSumSq += gap * gap
      }
      prevFailAt = at
      failRuns++
      if (e.message !== null && e.message !== '') {
        withMessage++
        ;(signatures ??= new Set()).add(normalizeMessage(e.message))
      }
    }
    if (finalPass) failStreak = 0
    prevFailed = !finalPass
  }

  let failureClustering = 0
  if (failRuns >= 2) {
    const mean = gapSum / gaps
    const std = Math.sqrt(Math.max(0, gapSumSq / gaps - mean * mean))
    // The seed divides by 1 when every gap is zero (all failures at one instant): perfectly clustered.
    failureClustering = Math.max(0, 1 - std / (mean || 1))
  }
  const components: ScoreComponents = {
    intermittency: attempts > 1 ? transitions / (attempts - 1) : 0,
    rerunPassRate: reruns > 0 ? rerunPasses / reruns : 0,
    failureClustering,
    messageVariance: withMessage > 0 ? signatures!.size / withMessage : 0,
    failSuccessRatio: attempts > 0 ? 1 - Math.exp((-3 * failedAttempts) / attempts) : 0,
    consecutiveFailurePenalty: attempts > 0 ? Math.min(1, (2 * longestFailStreak) / attempts) : 0,
  }
  const w = cfg.weights
  const sum =
    w.intermittency * components.intermittency +
    w.rerunPassRate * components.rerunPassRate +
    w.failureClustering * components.failureClustering +
    w.messageVariance * components.messageVariance +
    w.failSuccessRatio * components.failSuccessRatio
  const score = Math.min(1, Math.max(0, sum * (1 - w.consecutiveFailurePenalty * components.consecutiveFailurePenalty)))
  return { score, components, confidence: scoreConfidence(entries, cfg) }
}
