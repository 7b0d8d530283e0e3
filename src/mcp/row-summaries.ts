import type { ResolvedAnalysisConfig } from '../analysis/resolve-analysis-config.js'
import { analysisFingerprint, refreshAnalyses, storeClock } from '../pipeline/persisted-analyses.js'
import { ANALYSIS_BATCH, type AnalysisStore, type WindowTestRow } from '../store/analyses.js'
import type { Store } from '../store/store.js'
import type { SummaryFilter, TestSummary } from './context.js'

/**
 * The summaries of the analysis window's tests that match `filter`, from the persisted analyses: one indexed query
 * of the rows (verdicts, suite, search and test ids narrowed in SQL), in `analyze`'s order, never a history.
 * `lastFailure` says which last failure a summary carries: the server's (`window`: the last final failure in the
 * window's countable results, as its snapshot had it) or the analysis's (`analysis`: a pass on retry included, as
 * `flakewatch mcp`'s scan has it).
 * @example await rowSummaries(store.analyses(), since, { verdicts: ['flaky'] }, 'analysis')
 */
export async function rowSummaries(
  analyses: AnalysisStore,
  since: number,
  filter: SummaryFilter,
  lastFailure: 'window' | 'analysis',
): Promise<TestSummary[]> {
  const rows = await analyses.windowTests({
    since,
    verdicts: filter.verdicts,
    suite: filter.suite,
    // SQLite folds ASCII case only: other text is matched by the caller, over the rows the other filters leave.
    search: filter.search !== undefined && /^[\x20-\x7e]*$/.test(filter.search) ? filter.search : undefined,
    // A longer list is filtered by the caller (a statement binds at most a batch).
    testIds: filter.testIds && filter.testIds.length <= ANALYSIS_BATCH ? [...filter.testIds] : undefined,
    offset: 0,
    limit: null,
  })
  return rows.map((r) => summaryOfRow(r, lastFailure))
}

function summaryOfRow(r: WindowTestRow, lastFailure: 'window' | 'analysis'): TestSummary {
  return {
    testId: r.testId,
    suite: r.suite,
    module: r.module,
    name: r.name,
    file: r.file,
    verdict: r.verdict,
    score: r.score,
    passRate: r.passRate,
    flipRate: r.flipRate,
    runs: r.runs,
    failures: r.failures,
    lastFailureAt: lastFailure === 'window' ? r.windowFailureAt : r.lastFailureAt,
  }
}

/** Rows `flakewatch mcp` re-analyses before it reads them (as `flakewatch ingest` sweeps); with more, it scans. */
export const LOCAL_REFRESH_ROWS = 5000

const DAY_MS = 86_400_000

/**
 * `flakewatch mcp`'s summaries: from the persisted analyses when they are exact at the store's clock (after
 * re-analysing up to {@link LOCAL_REFRESH_ROWS} rows that are not, when the store may be written), else from
 * `scan`, a full analysis of the history (a store just migrated, or written by a reporter-less old release).
 * @example await localSummaries(store, cfg, { verdicts: ['flaky'] }, () => scanSummaries())
 */
export async function localSummaries(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  filter: SummaryFilter,
  scan: () => Promise<readonly TestSummary[]>,
): Promise<readonly TestSummary[]> {
  const analyses = store.analyses()
  const config = analysisFingerprint(cfg)
  const clock = await storeClock(store)
  const pending = async () => (await analyses.dueAnalyses(clock)) + (await analyses.otherConfigAnalyses(config))
  let left = await pending()
  if (left > 0 && left <= LOCAL_REFRESH_ROWS) {
    // A store opened read-only, or locked by a writer, cannot take the rows: the scan answers instead.
    const refreshed = await refreshAnalyses(store, cfg, { clock, otherConfig: true, maxRows: LOCAL_REFRESH_ROWS })
      .then(() => true)
      .catch(() => false)
    if (refreshed) left = await pending()
  }
  if (left > 0) return scan()
  return rowSummaries(analyses, clock - cfg.scoring.lookbackDays * DAY_MS, filter, 'analysis')
}
