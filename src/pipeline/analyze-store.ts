import { withOrderHints } from '../analysis/analyze-histories.js'
import { asOfTime } from '../analysis/as-of.js'
import { analyzeTest } from '../analysis/analyze-test.js'
import { infraRunIds } from '../analysis/infra-run-ids.js'
import { createOrderIndex } from '../analysis/order-dependency.js'
import { resolveAnalysisConfig, type AnalysisConfigOptions } from '../analysis/resolve-analysis-config.js'
import type { TestAnalysis } from '../analysis/types.js'
import type { TestHistory } from '../model.js'
import type { HistoryFilter, Store } from '../store/store.js'

export interface AnalyzeStoreOptions {
  config?: AnalysisConfigOptions
  filter?: HistoryFilter
  /**
   * Where the analysis windows (lookback, "recent", success-rate days) end. Default: the newest selected run
   * (`asOfTime`), so that a store that has not been fed for a while still shows its last weeks instead of nothing.
   */
  now?: number
  /** Sees each history beside its analysis, for callers that need more than the analysis keeps. */
  onTest?: (history: TestHistory, analysis: TestAnalysis) => void
}

/**
 * Analyses every test in the store with one aggregate query (per-run counts, for the infrastructure-failure
 * guard) and one streaming scan: never a query per test.
 * @example const analyses = await analyzeStore(store, { filter: { suite: 'unit' } })
 */
export async function analyzeStore(store: Store, opts: AnalyzeStoreOptions = {}): Promise<TestAnalysis[]> {
  const { cfg, filter, now, excludedRuns } = await scanSetup(store, opts)
  const out: TestAnalysis[] = []
  const order = createOrderIndex(cfg.hints, { now, excludedRuns, lookbackDays: cfg.scoring.lookbackDays })
  for await (const history of store.scanHistory(filter)) {
    order.add(history)
    const analysis = analyzeTest(history, cfg, { now, excludedRuns })
    opts.onTest?.(history, analysis)
    out.push(analysis)
  }
  return withOrderHints(out, order.hints())
}

/**
 * The analyses of `analyzeStore`, handed to `onTest` one at a time and kept by no one: memory stays flat however
 * many tests the store holds. Order-dependency hints, which need every test of a file, are left out; everything
 * else, verdicts included, is the same.
 * @example await forEachAnalysis(store, {}, (history, a) => rates.set(a.testId, a.successRate))
 */
export async function forEachAnalysis(
  store: Store,
  opts: Omit<AnalyzeStoreOptions, 'onTest'>,
  onTest: (history: TestHistory, analysis: TestAnalysis) => void,
): Promise<void> {
  const { cfg, filter, now, excludedRuns } = await scanSetup(store, opts)
  for await (const history of store.scanHistory(filter))
    onTest(history, analyzeTest(history, cfg, { now, excludedRuns }))
}

async function scanSetup(store: Store, opts: AnalyzeStoreOptions) {
  const cfg = resolveAnalysisConfig(opts.config)
  const filter = opts.filter ?? {}
  const summaries = await store.runSummaries({
    suite: filter.suite,
    branch: filter.branch,
    since: filter.since,
    until: filter.until,
  })
  const now = asOfTime(summaries, opts.now, Date.now())
  return { cfg, filter, now, excludedRuns: infraRunIds(summaries, cfg) }
}
