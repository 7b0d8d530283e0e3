import { isFailure, type HistoryEntry } from '../model.js'
import type { ScoringConfig } from './resolve-analysis-config.js'

const DAY_MS = 86_400_000

/**
 * How far to trust a score: the geometric mean of data quantity (runs / rolling window, capped at 1), time span
 * (days covered / 14, capped at 1) and data quality (0.5, +0.2 with failure messages, +0.2 with retries, +0.1 with
 * timings). The geometric mean keeps it low when any one factor is low.
 * @example scoreConfidence(entries, resolveAnalysisConfig().scoring) // 0.84 for 50 runs over 14 days, no retries
 */
export function scoreConfidence(
  entries: readonly HistoryEntry[],
  cfg: Pick<ScoringConfig, 'rollingWindowSize'>,
): number {
  const n = entries.length
  if (n === 0) return 0
  let messages = false
  let retries = false
  let timings = false
  for (const e of entries) {
    if (!messages && e.message && (isFailure(e.status) || e.failedAttempts > 0)) messages = true
    if (!retries && (e.attempts > 1 || e.flakyOnRetry)) retries = true
    if (!timings && e.durationMs !== null && e.durationMs > 0) timings = true
  }
  const quantity = Math.min(1, n / Math.max(1, cfg.rollingWindowSize))
  const span = n < 2 ? 0 : Math.min(1, (entries[n - 1]!.run.at - entries[0]!.run.at) / DAY_MS / 14)
  const quality = 0.5 + (messages ? 0.2 : 0) + (retries ? 0.2 : 0) + (timings ? 0.1 : 0)
  return Math.cbrt(quantity * Math.max(0, span) * quality)
}
