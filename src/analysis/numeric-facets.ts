import type { HistoryEntry } from '../model.js'
import { binomialUpperTail } from './binomial-tail.js'
import { pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import type { NumericFacetHint } from './types.js'

/** A facet is numeric when every value is a plain number and it takes at least this many values. */
export const MIN_NUMERIC_VALUES = 3

const NUMBER = /^-?\d+(\.\d+)?$/

/**
 * Env facets whose values are all numbers (workers, shards, cpus) tested as ordered values: for each threshold t
 * between observed values, do the executions with value ≥ t (or ≤ t) hold more of the failures than their share of
 * executions allows? p-value: P(X ≥ f), X ~ Binomial(F, share), times the number of thresholds tested across all
 * numeric facets (Bonferroni). Per facet only the most significant threshold is kept.
 * @example numericFacetHints(entries, cfg.hints)[0]?.message // 'fails when workers ≥ 6: 95% of failures, …'
 */
export function numericFacetHints(entries: readonly HistoryEntry[], cfg: HintsConfig): NumericFacetHint[] {
  const n = entries.length
  let total = 0
  for (const e of entries) if (hadFailure(e)) total++
  if (total < cfg.minFailures || total === n) return []

  // facet → value → [executions, failures]
  const facets = new Map<string, Map<number, [number, number]>>()
  const notNumeric = new Set<string>()
  for (const e of entries) {
    const f = hadFailure(e) ? 1 : 0
    const env = e.run.env
    for (const key in env) {
      if (notNumeric.has(key)) continue
      const raw = env[key]!
      if (!NUMBER.test(raw)) {
        notNumeric.add(key)
        facets.delete(key)
        continue
      }
      let values = facets.get(key)
      if (values === undefined) facets.set(key, (values = new Map<number, [number, number]>()))
      const v = Number(raw)
      const cell = values.get(v)
      if (cell === undefined) values.set(v, [1, f])
      else {
        cell[0]++
        cell[1] += f
      }
    }
  }

  let tests = 0
  const ordered: [string, [number, number, number][]][] = []
  for (const [facet, values] of facets) {
    if (values.size < MIN_NUMERIC_VALUES) continue
    const sorted = [...values]
      .map(([v, [ex, fl]]) => [v, ex, fl] as [number, number, number])
      .sort((a, b) => a[0] - b[0])
    ordered.push([facet, sorted])
    tests += 2 * (sorted.length - 1)
  }
  const hints: NumericFacetHint[] = []
  for (const [facet, sorted] of ordered) {
    const pick: { best: NumericFacetHint | null } = { best: null }
    const consider = (direction: '>=' | '<=', threshold: number, executions: number, failures: number) => {
      const executionShare = executions / n
      const failureShare = failures / total
      if (failures < cfg.minFailures || failureShare <= executionShare) return
      const pValue = Math.min(1, binomialUpperTail(failures, total, executionShare) * tests)
      if (pValue >= hintAlpha(cfg, 'numeric_facet') || (pick.best !== null && pValue >= pick.best.pValue)) return
      const sign = direction === '>=' ? '≥' : '≤'
      pick.best = {
        kind: 'numeric_facet',
        facet: `env.${facet}`,
        direction,
        threshold,
        failures,
        totalFailures: total,
        executions,
        failureShare,
        executionShare,
        pValue,
        message: `fails when ${facet} ${sign} ${threshold}: ${failures} of ${total} failures (${pct(failureShare)}) in ${pct(executionShare)} of executions (${pValueText(pValue)})`,
      }
    }
    // Suffix sums give "value ≥ t"; prefix sums give "value ≤ t".
    let ex = 0
    let fl = 0
    for (let i = sorted.length - 1; i >= 1; i--) {
      ex += sorted[i]![1]
      fl += sorted[i]![2]
      consider('>=', sorted[i]![0], ex, fl)
    }
    ex = 0
    fl = 0
    for (let i = 0; i < sorted.length - 1; i++) {
      ex += sorted[i]![1]
      fl += sorted[i]![2]
      consider('<=', sorted[i]![0], ex, fl)
    }
    if (pick.best !== null) hints.push(pick.best)
  }
  return hints.sort((a, b) => a.pValue - b.pValue)
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`
}
