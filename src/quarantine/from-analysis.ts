import type { TestAnalysis } from '../analysis/types.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import type { TestHistory } from '../model.js'
import { analyzeStore } from '../pipeline/analyze-store.js'
import type { Store } from '../store/store.js'
import type { PolicyTest } from './policy.js'

/** Passes in a row at the end of a history; a pass only on retry breaks the streak, skips are ignored. */
export function trailingPasses(history: TestHistory): number {
  let n = 0
  for (let i = history.entries.length - 1; i >= 0; i--) {
    const e = history.entries[i]!
    if (e.status === 'skipped') continue
    if (e.status !== 'passed' || e.flakyOnRetry) break
    n++
  }
  return n
}

export function policyTest(analysis: TestAnalysis, history: TestHistory): PolicyTest {
  return {
    testId: analysis.testId,
    verdict: analysis.verdict,
    classification: analysis.classification,
    score: analysis.score,
    confidence: analysis.confidence,
    proven: analysis.evidence.some((e) => e.kind === 'same_revision_pass_and_fail' || e.kind === 'pass_on_retry'),
    trailingPasses: trailingPasses(history),
    reason: analysis.reason,
  }
}

/** Every stored test as the quarantine policy sees it, from one scan of the store. */
export async function policyTestsFromStore(
  store: Store,
  config: Pick<ResolvedConfig, 'analysis' | 'successRate' | 'defaultBranch'>,
  now = Date.now(),
): Promise<PolicyTest[]> {
  const tests: PolicyTest[] = []
  await analyzeStore(store, { config: analysisOptions(config), now, onTest: (h, a) => tests.push(policyTest(a, h)) })
  return tests
}
