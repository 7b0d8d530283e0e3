import type { TestAnalysisJson } from '../analysis/index.js'
import type { Store } from '../store/store.js'
import type { ProjectOverview } from './api-types.js'
import type { PersistedReads } from './persisted-reads.js'

/** Flaky tests listed per project on the overview. */
const TOP_FLAKY = 5

/**
 * One project's figures for the organisation overview, from its persisted analyses (every analysed test, as
 * `analyze` counts them): counts, one sum and one short page, each an indexed query.
 * @example const figures = await projectOverview({ store, reads })
 */
export async function projectOverview(ctx: { store: Store; reads: PersistedReads }): Promise<ProjectOverview> {
  // The window's clock keeps the rows current; the figures cover every analysed test, in the window or not.
  const w = await ctx.reads.window()
  const all = { since: Number.MIN_SAFE_INTEGER }
  const analyses = ctx.reads.analyses(w)
  const [counts, lost, top, quarantines] = await Promise.all([
    analyses.countAnalyses(all),
    analyses.timeLost(all),
    analyses.pageAnalyses({ ...all, verdict: 'flaky', sort: 'score', order: 'desc', offset: 0, limit: TOP_FLAKY }),
    ctx.store.listQuarantines(),
  ])
  return {
    tests: counts.flaky + counts.broken + counts.healthy + counts.insufficient_data,
    flaky: counts.flaky,
    broken: counts.broken,
    quarantined: new Set(quarantines.map((q) => q.testId)).size,
    ci_time_lost_ms: lost,
    top_flaky: top.map((t) => {
      const a = JSON.parse(t.json!) as TestAnalysisJson
      return { test_id: t.testId, score: a.score, pass_rate: a.pass_rate, time_lost_ms: a.time_lost_ms }
    }),
  }
}
