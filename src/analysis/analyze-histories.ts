import type { TestHistory } from '../model.js'
import { analyzeTest, type AnalysisContext } from './analyze-test.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import type { TestAnalysis } from './types.js'

/**
 * Analyses every history of a scan in one pass, in scan order, without any per-test I/O.
 * @example const analyses = await analyzeHistories(store.scanHistory(), cfg, { now: Date.now(), excludedRuns })
 */
export async function analyzeHistories(
  histories: AsyncIterable<TestHistory> | Iterable<TestHistory>,
  cfg: ResolvedAnalysisConfig,
  ctx: AnalysisContext,
): Promise<TestAnalysis[]> {
  const out: TestAnalysis[] = []
  if (Symbol.asyncIterator in histories) {
    for await (const h of histories) out.push(analyzeTest(h, cfg, ctx))
  } else {
    for (const h of histories) out.push(analyzeTest(h, cfg, ctx))
  }
  return out
}
