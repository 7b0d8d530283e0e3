import type { TestHistory } from '../model.js'
import { analyzeTest, type AnalysisContext } from './analyze-test.js'
import { createOrderIndex } from './order-dependency.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import type { TestAnalysis } from './types.js'

/**
 * Analyses every history of a scan in one pass, in scan order, without any per-test I/O. Order-dependency hints,
 * which compare tests of the same file, are added once the scan is through (`withOrderHints`).
 * @example const analyses = await analyzeHistories(store.scanHistory(), cfg, { now: Date.now(), excludedRuns })
 */
export async function analyzeHistories(
  histories: AsyncIterable<TestHistory> | Iterable<TestHistory>,
  cfg: ResolvedAnalysisConfig,
  ctx: AnalysisContext,
): Promise<TestAnalysis[]> {
  const out: TestAnalysis[] = []
  const order = createOrderIndex(cfg.hints, { ...ctx, lookbackDays: cfg.scoring.lookbackDays })
  const one = (h: TestHistory) => {
    order.add(h)
    out.push(analyzeTest(h, cfg, ctx))
  }
  if (Symbol.asyncIterator in histories) {
    for await (const h of histories) one(h)
  } else {
    for (const h of histories) one(h)
  }
  return withOrderHints(out, order.hints())
}

/**
 * Adds each test's order-dependency hint (from `createOrderIndex(...).hints()`) to its analysis, in place, and
 * returns the analyses. Only tests with a hint change.
 * @example withOrderHints(analyses, order.hints())
 */
export function withOrderHints<T extends { testId: string; hints: TestAnalysis['hints'] }>(
  analyses: T[],
  found: ReadonlyMap<string, TestAnalysis['hints'][number]>,
): T[] {
  if (found.size === 0) return analyses
  for (const a of analyses) {
    const hint = found.get(a.testId)
    if (hint !== undefined) a.hints.push(hint)
  }
  return analyses
}
