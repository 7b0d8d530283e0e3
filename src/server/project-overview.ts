import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import { analyzeStore } from '../pipeline/analyze-store.js'
import type { Store } from '../store/store.js'
import type { ProjectOverview } from './api-types.js'

/** Flaky tests listed per project on the overview. */
const TOP_FLAKY = 5

/**
 * One project's figures for the organisation overview: a whole-store analysis, so it runs where analysis
 * snapshots are built (the analysis worker, when there is one), never on the thread that answers requests.
 * @example const figures = await projectOverview(store, config)
 */
export async function projectOverview(store: Store, config: ResolvedConfig): Promise<ProjectOverview> {
  const analyses = await analyzeStore(store, { config: analysisOptions(config) })
  const quarantined = new Set((await store.listQuarantines()).map((q) => q.testId))
  const flaky = analyses.filter((a) => a.verdict === 'flaky').sort((a, b) => b.score - a.score)
  let lost = 0
  for (const a of analyses) lost += a.timeLostMs
  return {
    tests: analyses.length,
    flaky: flaky.length,
    broken: analyses.filter((a) => a.verdict === 'broken').length,
    quarantined: quarantined.size,
    ci_time_lost_ms: lost,
    top_flaky: flaky.slice(0, TOP_FLAKY).map((a) => ({
      test_id: a.testId,
      score: a.score,
      pass_rate: a.passRate,
      time_lost_ms: a.timeLostMs,
    })),
  }
}
