import type { HistoryEntry } from '../model.js'
import { binomialUpperTail } from './binomial-tail.js'
import { pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import { timeOfDayWindow } from './time-window.js'
import type { AssociationHint } from './types.js'

interface Cell {
  n: number
  f: number
}

/**
 * Runners and env facet values that hold more of a test's failures than chance allows, and the time-of-day
 * window that does (`timeOfDayWindow`).
 * A failure is a run with a failed attempt, passed on retry or not. For a value that ran a share q of the
 * executions and holds f of the F failures, the p-value is
 * P(X ≥ f) for X ~ Binomial(F, q), multiplied by the number of values tested (Bonferroni); only p below its share of alpha (`hintAlpha`) with
 * at least `minFailures` failures is reported, so that a coincidence on a small sample is not.
 * @example failureAssociations(entries, resolveAnalysisConfig().hints)[0]?.message
 * // '87% of failures (13 of 15) on runner ci-7, which ran 12% of executions (p = 2.1e-9)'
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

  let tested = 0
  for (const values of facets.values()) if (values.size > 1) tested += values.size
  const hints: AssociationHint[] = []
  for (const [facet, values] of facets) {
    if (values.size < 2) continue
    for (const [value, cell] of values) {
      const executionShare = cell.n / n
      const failureShare = cell.f / total
      if (cell.f < cfg.minFailures || failureShare <= executionShare) continue
      const pValue = Math.min(1, binomialUpperTail(cell.f, total, executionShare) * tested)
      if (pValue >= hintAlpha(cfg, 'association')) continue
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
        message: `${pct(failureShare)} of failures (${cell.f} of ${total}) ${where}, which ran ${pct(executionShare)} of executions (${pValueText(pValue)})`,
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
