import { ImpactTally } from '../analysis/impact.js'
import { impactToJson } from '../pipeline/impact.js'
import { ANALYSIS_BATCH } from '../store/analyses.js'
import type { ImpactResponse } from './api-types.js'
import type { ServerContext } from './context.js'
import { maxOf, minOf } from '../extent.js'
import { runState, selectedHistory } from './snapshot.js'
import { iso } from './to-json.js'
import { READ_REFRESH_ROWS } from './persisted-reads.js'

/**
 * The default selection's impact (`GET /impact` with no branch, env, last or rev; of one suite or of all) from the
 * persisted analyses, without the whole history:
 *
 * - the window's runs and their counts (the weeks' run counts and the infrastructure-failure guard) from `runs`;
 * - the tests that cost nothing and add no week signal (not flaky, no countable failure or failed attempt in the
 *   window: most of a store) only counted, per file and verdict, in one grouped query of `analyses`;
 * - the others (`costly` rows: the flaky tests, and any test that failed in the window) read by test id, their
 *   results in the window only, and tallied as the snapshot's impact tallies them.
 *
 * So its cost follows the failing tests' results in the window, not the store, and it equals the snapshot's answer
 * (a property test compares them on random histories). Null while more rows are pending than a read re-analyses (a
 * store just migrated, a changed configuration): their tests would count with no verdict, so the caller answers
 * from the snapshot, as before the rows, until the sweep catches up.
 */
export async function impactFromRows(
  ctx: ServerContext,
  limit: number,
  suite: string | undefined,
): Promise<ImpactResponse | null> {
  const w = await ctx.reads.window()
  if (w.pending > READ_REFRESH_ROWS) return null
  const brokenMin = ctx.analysis.verdict.brokenMinConsecutive
  const key = `impact:${limit}:${suite ?? ''}`
  return ctx.reads.keep(key, async (analyses) => {
    const store = ctx.store
    const state = await runState(store, { suite, env: [] }, ctx.analysis, w.clock)
    const times = [...state.runAt.values()]
    const tally = new ImpactTally({ excludedRuns: state.excludedRuns, runTimes: times, brokenMin, limit })
    if (times.length) {
      for (const g of await analyses.windowFiles({ since: w.since, suite, costly: false })) {
        tally.addQuiet({ suite: g.suite, owners: ctx.owners(g), verdict: g.verdict }, g.tests)
      }
      const costly = await analyses.windowTests({ since: w.since, suite, costly: true, offset: 0, limit: null })
      const since = minOf(times)
      const until = maxOf(times)
      for (let i = 0; i < costly.length; i += ANALYSIS_BATCH) {
        const rows = new Map(costly.slice(i, i + ANALYSIS_BATCH).map((r) => [r.testId, r]))
        for await (const h of store.scanHistory({ testIds: [...rows.keys()], since, until })) {
          const t = rows.get(h.test.testId)
          const selected = t && selectedHistory(h, state.selected)
          if (!t || !selected) continue
          rows.delete(t.testId)
          tally.add({
            testId: t.testId,
            name: t.name,
            suite: t.suite,
            owners: ctx.owners(t),
            verdict: t.verdict,
            entries: selected.entries,
          })
        }
        // Only a pending row (its results moved since it was analysed) has none: counted as last analysed.
        for (const t of rows.values()) tally.addQuiet({ suite: t.suite, owners: ctx.owners(t), verdict: t.verdict }, 1)
      }
    }
    const body = impactToJson(tally.result(), { brokenMin, generatedAt: iso(w.computedAt) })
    return w.pending > 0 ? { ...body, pending: w.pending } : body
  })
}
