import type { HistoryEntry } from '../model.js'
import { burstScan } from './burst-scan.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import { day, pValueText } from './format.js'
import type { BurstHint } from './types.js'

/** Most windows a burst hint lists. */
export const MAX_BURST_WINDOWS = 5

/**
 * Bursts: failures packed into a few windows of consecutive runs, tighter than random failures at the same rate
 * would be. The test is `burstScan`'s permutation test on the number of failure clusters; the hint lists the
 * clusters of two failures or more (the windows), biggest first. Returns null when nothing stands out.
 * @example failureBurst(entries, resolveAnalysisConfig().hints)?.message
 * // '9 of 11 failures in 2 bursts: 2025-01-04 to 2025-01-05 (5 of 6 runs), … (p = 0.001)'
 */
export function failureBurst(entries: readonly HistoryEntry[], cfg: HintsConfig): BurstHint | null {
  const n = entries.length
  const outcomes = new Uint8Array(n)
  let total = 0
  for (let i = 0; i < n; i++) {
    if (!hadFailure(entries[i]!)) continue
    outcomes[i] = 1
    total++
  }
  if (total < cfg.minFailures || total === n) return null
  const scan = burstScan(outcomes, hintAlpha(cfg, 'burst'))
  if (scan === null) return null

  const windows = scan.clusters
    .filter((c) => c.failures >= 2)
    .sort((a, b) => b.failures - a.failures || a.start - b.start)
    .slice(0, MAX_BURST_WINDOWS)
  let failures = 0
  let runs = 0
  for (const w of windows) {
    failures += w.failures
    runs += w.end - w.start + 1
  }
  if (failures < cfg.minFailures) return null
  const shown = windows.map((w) => ({
    from: entries[w.start]!.run.at,
    to: entries[w.end]!.run.at,
    runs: w.end - w.start + 1,
    failures: w.failures,
  }))
  const from = Math.min(...shown.map((w) => w.from))
  const to = Math.max(...shown.map((w) => w.to))
  const listed = shown
    .map(
      (w) => `${day(w.from)}${day(w.to) === day(w.from) ? '' : ` to ${day(w.to)}`} (${w.failures} of ${w.runs} runs)`,
    )
    .join(', ')
  const count = shown.length === 1 ? 'one burst' : `${shown.length} bursts`
  return {
    kind: 'burst',
    failures,
    totalFailures: total,
    runs,
    from,
    to,
    failureShare: failures / total,
    executionShare: runs / n,
    pValue: scan.pValue,
    windows: shown,
    message: `${failures} of ${total} failures in ${count}: ${listed}; the bursts hold ${Math.round((runs / n) * 100)}% of executions (${pValueText(scan.pValue)})`,
  }
}
