import type { HistoryEntry } from '../model.js'
import { failureAssociations } from './failure-associations.js'
import { numericFacetHints } from './numeric-facets.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import type { AssociationHint, NumericFacetHint } from './types.js'

/** A condition a test's failures concentrated on: a runner, env value, numeric threshold or time of day. */
export interface FailureCondition {
  /** Which hint found it. */
  kind: 'numeric_facet' | 'time_of_day' | 'facet_association'
  /** How a sentence names it: `on runner ci-7`, `with workers ≥ 8`, `between 10:00 and 14:00 UTC`. */
  where: string
  applies: (e: HistoryEntry) => boolean
}

/**
 * The conditions the failures of `entries` concentrated on, most significant first: the runner, env facet,
 * numeric threshold and time-of-day hints (a threshold replaces its facet's values). Both the earned fix (clean
 * runs must cover them) and the broken rule (a streak under them is judged at their rate) use them. None below
 * `minFailures` troubled runs, as for the hints.
 * @example failureConditions(entries, 12, cfg)[0]?.where // 'on runner ci-rare'
 */
export function failureConditions(
  entries: readonly HistoryEntry[],
  troubled: number,
  cfg: ResolvedAnalysisConfig,
): FailureCondition[] {
  if (troubled < cfg.hints.minFailures) return []
  const numeric = numericFacetHints(entries, cfg.hints)
  const thresholded = new Set(numeric.map((h) => h.facet))
  const hints: (AssociationHint | NumericFacetHint)[] = [
    ...numeric,
    ...failureAssociations(entries, cfg.hints).filter((a) => !thresholded.has(a.facet)),
  ]
  hints.sort((a, b) => a.pValue - b.pValue)
  return hints.map(condition)
}

function condition(h: AssociationHint | NumericFacetHint): FailureCondition {
  if (h.kind === 'numeric_facet') {
    const key = h.facet.slice(4)
    const ge = h.direction === '>='
    return {
      kind: 'numeric_facet',
      where: `with ${key} ${ge ? '≥' : '≤'} ${h.threshold}`,
      applies: (e) => {
        const raw = e.run.env[key]
        if (raw === undefined) return false
        const x = Number(raw)
        return ge ? x >= h.threshold : x <= h.threshold
      },
    }
  }
  if (h.kind === 'time_of_day') {
    const { fromHour, hours } = h
    return {
      kind: 'time_of_day',
      where: h.value,
      applies: (e) => (hourOfDay(e.run.at) - (fromHour ?? 0) + 24) % 24 < (hours ?? 24),
    }
  }
  const kind = 'facet_association'
  if (h.facet === 'runner') return { kind, where: `on runner ${h.value}`, applies: (e) => e.run.runnerId === h.value }
  const key = h.facet.slice(4)
  return { kind, where: `with ${key}=${h.value}`, applies: (e) => e.run.env[key] === h.value }
}

/** The UTC hour of an epoch-ms time, 0–23. */
export function hourOfDay(at: number): number {
  return Math.floor((((at % 86_400_000) + 86_400_000) % 86_400_000) / 3_600_000)
}
