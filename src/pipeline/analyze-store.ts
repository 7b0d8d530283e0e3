import { withOrderHints } from '../analysis/analyze-histories.js'
import { asOfTime } from '../analysis/as-of.js'
import { analyzeTest } from '../analysis/analyze-test.js'
import { infraRunIds } from '../analysis/infra-run-ids.js'
import { createOrderIndex } from '../analysis/order-dependency.js'
import { resolveAnalysisConfig, type AnalysisConfigOptions } from '../analysis/resolve-analysis-config.js'
import type { OrderHint, TestAnalysis } from '../analysis/types.js'
import type { TestHistory } from '../model.js'
import type { HistoryFilter, RunSummary, Store } from '../store/store.js'

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
  /** Sees the selected runs, and those left out as infrastructure failures, before the first test. */
  onRuns?: (runs: readonly RunSummary[], excludedRuns: ReadonlySet<string>) => void
}

/**
 * Analyses every test in the store with one aggregate query (per-run counts, for the infrastructure-failure
 * guard) and one streaming scan: never a query per test.
 * @example const analyses = await analyzeStore(store, { filter: { suite: 'unit' } })
 */
export async function analyzeStore(store: Store, opts: AnalyzeStoreOptions = {}): Promise<TestAnalysis[]> {
  const out: TestAnalysis[] = []
  const orderHints = await forEachAnalysis(store, { ...opts, orderHints: true }, (history, analysis) => {
    opts.onTest?.(history, analysis)
    out.push(analysis)
  })
  return withOrderHints(out, orderHints)
}

/**
 * The analyses of `analyzeStore`, handed to `onTest` one at a time and kept by no one: memory stays flat however
 * many tests the store holds. Order-dependency hints need every test of a file, so they are not in the analyses
 * handed over: with `orderHints`, they are returned once the scan is through (test id → hint, added last to that
 * test's hints by `analyzeStore`); without, they are not computed. Everything else, verdicts included, is the same.
 * @example await forEachAnalysis(store, {}, (history, a) => rates.set(a.testId, a.successRate))
 */
export async function forEachAnalysis(
  store: Store,
  opts: Omit<AnalyzeStoreOptions, 'onTest'> & { orderHints?: boolean },
  onTest: (history: TestHistory, analysis: TestAnalysis) => void,
): Promise<Map<string, OrderHint>> {
  const { cfg, filter, now, excludedRuns, summaries } = await scanSetup(store, opts)
  opts.onRuns?.(summaries, excludedRuns)
  const order = opts.orderHints
    ? createOrderIndex(cfg.hints, { now, excludedRuns, lookbackDays: cfg.scoring.lookbackDays })
    : null
  for await (const history of store.scanHistory(filter)) {
    order?.add(history)
    onTest(history, analyzeTest(history, cfg, { now, excludedRuns }))
  }
  return order === null ? new Map() : order.hints()
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
  return { cfg, filter, now, excludedRuns: infraRunIds(summaries, cfg), summaries }
}
