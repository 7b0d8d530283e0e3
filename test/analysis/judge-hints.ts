/** Whether a test's hints name its generated cause, and whether a control test got any root-cause hint. */
import type { Hint } from '../../src/analysis/types.js'
import { windowMatches } from './evaluate-ci.js'
import { TIMEOUT_MS, SLOW_RUNNERS, type CausedTest } from './generate-causes.js'

export const ROOT_CAUSE_KINDS = new Set([
  'facet_association',
  'time_of_day',
  'numeric_facet',
  'burst',
  'timeout',
  'order_dependency',
])

export function rightHint(t: CausedTest, hints: readonly Hint[], runAt: (i: number) => number): boolean {
  return hints.some((h) => {
    switch (t.cause) {
      case 'one_runner':
        return h.kind === 'facet_association' && h.facet === 'runner' && h.value === t.truth.runner
      case 'time_window':
        // The window scan may trim an hour at either end where the sample has no failure.
        return h.kind === 'time_of_day' && windowMatches(h, { fromHour: 0, hours: 6 })
      case 'parallelism':
        return h.kind === 'numeric_facet' && h.facet === 'env.workers' && h.direction === '>=' && h.threshold === 6
      case 'bursts': {
        if (h.kind !== 'burst') return false
        // Most of the windows' failures fall inside true bursts.
        const inside = [...t.truth.burstRuns!].map(runAt)
        return h.windows.length > 0 && h.windows.every((w) => inside.some((at) => at >= w.from && at <= w.to))
      }
      case 'timeouts':
        return (
          h.kind === 'timeout' &&
          Math.abs(h.ceilingMs - TIMEOUT_MS) < TIMEOUT_MS * 0.05 &&
          h.slowRunners.length > 0 &&
          h.slowRunners.every((r) => SLOW_RUNNERS.includes(r))
        )
      case 'order':
        return h.kind === 'order_dependency' && h.polluter === t.truth.polluter
      default:
        return false
    }
  })
}

export function rootCauseHints(hints: readonly Hint[]): Hint[] {
  return hints.filter((h) => ROOT_CAUSE_KINDS.has(h.kind))
}
