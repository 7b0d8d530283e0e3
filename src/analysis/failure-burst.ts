import type { HistoryEntry } from '../model.js'
import { binomialUpperTail } from './binomial-tail.js'
import { hadFailure } from './had-failure.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import { day } from './format.js'
import type { BurstHint } from './types.js'

/**
 * The densest window of failures, when it is too dense for chance: over windows of max(5, 10% of runs) consecutive
 * runs, the window with the most failures k is tested with P(X ≥ k), X ~ Binomial(window, overall failure rate),
 * times the number of windows (Bonferroni). Returns null when nothing stands out.
 * @example failureBurst(entries, resolveAnalysisConfig().hints)?.message // '8 of 10 failures within 10 runs (…)'
 */
export function failureBurst(entries: readonly HistoryEntry[], cfg: HintsConfig): BurstHint | null {
  const n = entries.length
  const w = Math.max(5, Math.ceil(n / 10))
  if (n < 2 * w) return null
  let total = 0
  for (const e of entries) if (hadFailure(e)) total++
  if (total < cfg.minFailures || total === n) return null

  let inWindow = 0
  for (let i = 0; i < w; i++) if (hadFailure(entries[i]!)) inWindow++
  let best = inWindow
  let bestStart = 0
  for (let i = w; i < n; i++) {
    inWindow += (hadFailure(entries[i]!) ? 1 : 0) - (hadFailure(entries[i - w]!) ? 1 : 0)
    if (inWindow > best) {
      best = inWindow
      bestStart = i - w + 1
    }
  }
  if (best < cfg.minFailures) return null
  const pValue = Math.min(1, binomialUpperTail(best, w, total / n) * (n - w + 1))
  if (pValue >= cfg.alpha) return null
  const from = entries[bestStart]!.run.at
  const to = entries[bestStart + w - 1]!.run.at
  return {
    kind: 'burst',
    failures: best,
    totalFailures: total,
    runs: w,
    from,
    to,
    pValue,
    message: `${best} of ${total} failures within ${w} runs (${day(from)} to ${day(to)})`,
  }
}
