import type { HistoryEntry } from '../model.js'
import { plural, pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import { hypergeometricUpperTail } from './hypergeometric-tail.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import { taroneFactor } from './tarone-factor.js'
import { timeOfDayWindow } from './time-window.js'
import type { AssociationHint } from './types.js'

interface Cell {
  n: number
  f: number
}

/**
 * Runners and env facet values that hold more of a test's failures than chance allows, and the time-of-day
 * window that does (`timeOfDayWindow`).
 * A failure is a run with a failed attempt, passed on retry or not. For a value that ran n_v of the n executions
 * and holds f of the F failures, the p-value is Fisher's exact one-sided P(X ≥ f), X ~ Hypergeometric(n, n_v, F):
 * exact for few failures, where a normal approximation is not, so that 4 failures of 4 on a runner that ran 9% of
 * 110 executions (p ≈ 2e-5) are evidence. It is multiplied by Tarone's factor (`taroneFactor`): the number of
 * values that could reach significance at all, not every value seen. Only p below its share of alpha
 * (`hintAlpha`) with at least `minFailures` failures is reported, so that a coincidence on a small sample is not.
 * @example failureAssociations(entries, resolveAnalysisConfig().hints)[0]?.message
 * // '100% of failures (4 of 4) on runner ci-rare, which ran 8% of executions (p = 0.00012; 6 values tested)'
 */
export function failureAssociations(entries: readonly HistoryEntry[], cfg: HintsConfig): AssociationHint[] {
  let total = 0
  for (const e of entries) if (hadFailure(e)) total++
  const n = entries.length
  if (total < cfg.minFailures || total === n) return []

  const facets = new Map<string, Map<string, Cell>>()
  for (const e of entries) {
    const f = hadFailure(e) ? 1 : 0
    if (e.run.runnerId !== null) count(facets, 'runner', e.run.runnerId, f)
    const env = e.run.env
    for (const key in env) count(facets, `env.${key}`, env[key]!, f)
  }

  // The smallest p-value each value could reach with its executions: all the failures it can hold, on it.
  const alpha = hintAlpha(cfg, 'association')
  const minPs: number[] = []
  for (const values of facets.values()) {
    if (values.size < 2) continue
    for (const cell of values.values()) {
      const most = Math.min(cell.n, total)
      // A value that cannot hold `minFailures` failures is never reported, so it is not a test either.
      if (most >= cfg.minFailures && most < n) minPs.push(hypergeometricUpperTail(most, n, cell.n, total))
    }
  }
  const tested = taroneFactor(minPs, alpha)
  const hints: AssociationHint[] = []
  for (const [facet, values] of facets) {
    if (values.size < 2) continue
    for (const [value, cell] of values) {
      const executionShare = cell.n / n
      const failureShare = cell.f / total
      if (cell.f < cfg.minFailures || failureShare <= executionShare) continue
      const pValue = Math.min(1, hypergeometricUpperTail(cell.f, n, cell.n, total) * tested)
      if (pValue >= alpha) continue
      const where = facet === 'runner' ? `on runner ${value}` : `with ${facet.slice(4)}=${value}`
      hints.push({
        kind: 'facet_association',
        facet,
        value,
        failures: cell.f,
        executions: cell.n,
        failureShare,
        executionShare,
        pValue,
        message: `${pct(failureShare)} of failures (${cell.f} of ${total}) ${where}, which ran ${pct(executionShare)} of executions (${pValueText(pValue)}; ${plural(tested, 'value')} tested)`,
      })
    }
  }
  const window = timeOfDayWindow(entries, cfg)
  if (window !== null) hints.push(window)
  return hints.sort((a, b) => a.pValue - b.pValue)
}

function count(facets: Map<string, Map<string, Cell>>, facet: string, value: string, failed: number): void {
  let values = facets.get(facet)
  if (values === undefined) facets.set(facet, (values = new Map<string, Cell>()))
  const cell = values.get(value)
  if (cell === undefined) values.set(value, { n: 1, f: failed })
  else {
    cell.n++
    cell.f += failed
  }
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`
}
