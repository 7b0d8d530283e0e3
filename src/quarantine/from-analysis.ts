import type { TestAnalysis } from '../analysis/types.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import { analyzeStore } from '../pipeline/analyze-store.js'
import type { Store } from '../store/store.js'
import type { PolicyTest } from './policy.js'

/**
 * One test as the policy sees it: every field straight from its analysis, so that `quarantine auto` acts on
 * exactly the verdicts, classes and streaks that `analyze` prints.
 */
export function policyTest(analysis: TestAnalysis): PolicyTest {
  return {
    testId: analysis.testId,
    verdict: analysis.verdict,
    classification: analysis.flipRateClass,
    score: analysis.score,
    confidence: analysis.confidence,
    proven: analysis.proven,
    trailingPasses: analysis.trailingPasses,
    reason: analysis.reason,
    timeLostMs: analysis.timeLostMs,
    failures: analysis.failures,
    lastFailureAt: analysis.lastFailureAt,
  }
}

/**
 * Every stored test as the quarantine policy sees it, from one scan of the store, at the same as-of time as
 * `analyze` (the newest run unless `asOf` names one): never the wall clock, which would leave a store that has
 * not been fed for a few weeks with no flaky test at all.
 */
export async function policyTestsFromStore(
  store: Store,
  config: Pick<ResolvedConfig, 'analysis' | 'successRate' | 'defaultBranch' | 'quarantine'>,
  asOf?: number,
  /** Sees every analysis, for a caller that needs more than the policy's view (notifications). */
  onAnalysis?: (analysis: TestAnalysis) => void,
): Promise<PolicyTest[]> {
  const tests: PolicyTest[] = []
  await analyzeStore(store, {
    config: analysisOptions(config),
    now: asOf,
    onTest: (_, a) => {
      onAnalysis?.(a)
      tests.push(policyTest(a))
    },
  })
  return tests
}
