import type { TestAnalysis } from '../analysis/types.js'
import { compareText } from '../compare-text.js'
import type { Store } from '../store/store.js'
import type { TestSummary } from './context.js'

const VERDICT_ORDER = { flaky: 0, broken: 1, healthy: 2, insufficient_data: 3 } as const

/** `analyze`'s order: flaky, then broken, each by score, then by id. */
export function compareSummaries(a: TestSummary, b: TestSummary): number {
  return (
    VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] ||
    b.score - a.score ||
    b.flipRate - a.flipRate ||
    compareText(a.testId, b.testId)
  )
}

export function summaryOf(a: TestAnalysis): TestSummary {
  return {
    ...a.test,
    verdict: a.verdict,
    score: a.score,
    passRate: a.passRate,
    flipRate: a.flipRate,
    runs: a.runs,
    failures: a.failures,
    lastFailureAt: a.lastFailureAt,
  }
}

/**
 * Summaries from a scan of the store, kept until a run is written: a probe of the runs written since the last scan
 * (one indexed query) decides whether the next call scans again. For `flakewatch mcp` over stdio, which has no
 * server snapshot to read.
 * @example const summaries = cachedSummaries(store, () => analyzeStore(store)); await summaries()
 */
export function cachedSummaries(
  store: Store,
  analyze: (onTest: (a: TestAnalysis) => void) => Promise<void>,
): () => Promise<readonly TestSummary[]> {
  let cached: { at: number; value: TestSummary[] } | null = null
  let pending: Promise<TestSummary[]> | null = null
  return async () => {
    if (cached && (await store.runsWrittenSince(cached.at, 1)).length === 0) return cached.value
    pending ??= (async () => {
      // Stamped before the scan: a run written during it is seen by the next probe.
      const at = Date.now()
      const value: TestSummary[] = []
      await analyze((a) => value.push(summaryOf(a)))
      value.sort(compareSummaries)
      cached = { at, value }
      return value
    })().finally(() => (pending = null))
    return pending
  }
}
