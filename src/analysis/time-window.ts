import type { HistoryEntry } from '../model.js'
import { binomialUpperTail } from './binomial-tail.js'
import { pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import type { AssociationHint } from './types.js'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
/** Windows tried: every start hour and every width from 1 to 23 hours (24 would be the whole day). */
export const TIME_WINDOWS_TRIED = 24 * 23

/**
 * The UTC time-of-day window that holds more of a test's failures than its share of executions allows, wherever
 * it lies: a circular scan over every start hour and every width of 1–23 hours, so that a 10:00–14:00 window is
 * found whole rather than split across fixed buckets, and one that wraps past midnight (22:00–02:00) too. For a
 * window with a share q of the executions and f of the F failures, the p-value is P(X ≥ f), X ~ Binomial(F, q),
 * times the 552 windows tried (Bonferroni); the most significant window below its share of alpha, with at least
 * `minFailures` failures, is the hint. Ties go to the narrower window.
 * @example timeOfDayWindow(entries, resolveAnalysisConfig().hints)?.value // 'between 10:00 and 14:00 UTC'
 */
export function timeOfDayWindow(entries: readonly HistoryEntry[], cfg: HintsConfig): AssociationHint | null {
  const runs = new Float64Array(24)
  const fails = new Float64Array(24)
  let total = 0
  for (const e of entries) {
    const hour = Math.floor((((e.run.at % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS)
    runs[hour]!++
    if (hadFailure(e)) {
      fails[hour]!++
      total++
    }
  }
  const n = entries.length
  if (total < cfg.minFailures || total === n) return null
  let best: { from: number; hours: number; f: number; ex: number; p: number } | null = null
  for (let from = 0; from < 24; from++) {
    let ex = 0
    let f = 0
    for (let hours = 1; hours < 24; hours++) {
      const hour = (from + hours - 1) % 24
      ex += runs[hour]!
      f += fails[hour]!
      // A window that adds an hour without failures only dilutes the one before it; skip the work.
      if (fails[hour] === 0 && hours > 1) continue
      if (f < cfg.minFailures || f / total <= ex / n) continue
      const p = binomialUpperTail(f, total, ex / n)
      if (best === null || p < best.p || (p === best.p && hours < best.hours)) best = { from, hours, f, ex, p }
    }
  }
  if (best === null) return null
  const pValue = Math.min(1, best.p * TIME_WINDOWS_TRIED)
  if (pValue >= hintAlpha(cfg, 'time_of_day')) return null
  const label = windowLabel(best.from, best.hours)
  const failureShare = best.f / total
  const executionShare = best.ex / n
  return {
    kind: 'time_of_day',
    facet: 'time_of_day',
    value: label,
    failures: best.f,
    executions: best.ex,
    failureShare,
    executionShare,
    pValue,
    fromHour: best.from,
    hours: best.hours,
    message: `${pct(failureShare)} of failures (${best.f} of ${total}) ${label}, which had ${pct(executionShare)} of executions (${pValueText(pValue)}; ${TIME_WINDOWS_TRIED} windows tried)`,
  }
}

function windowLabel(from: number, hours: number): string {
  const hh = (h: number) => `${String(h % 24).padStart(2, '0')}:00`
  return `between ${hh(from)} and ${hh(from + hours)} UTC`
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`
}
