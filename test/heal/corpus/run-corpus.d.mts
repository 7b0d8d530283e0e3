/** Types of run-corpus.mjs, for the TypeScript tests. */
import type { Page } from 'playwright-core'
import type { HealCase } from './cases.mjs'
export { CASES } from './cases.mjs'
export interface CaseResult {
  id: string
  category: string
  expect: string
  outcome: 'correct' | 'wrong' | 'refused'
  error: unknown
  elapsedMs: number
  logs: string[]
}
export interface CorpusSummary {
  cases: number
  healAccuracy: number
  wrongRate: number
  refusalRate: number
  misses: string[]
}
export declare function locate(page: unknown, steps: HealCase['locator']): unknown
export declare function runFlakewatch(
  deps: { raw: Page; createHealingPage: unknown; createMemoryHealStore: unknown },
  opts?: { timeout?: number; only?: string[]; cases?: HealCase[]; settings?: Record<string, unknown> },
): Promise<CaseResult[]>
export declare function runBaseline(
  deps: { raw: Page; fingerprint: unknown; similarity: unknown },
  opts?: { only?: string[]; cases?: HealCase[] },
): Promise<CaseResult[]>
export declare function summarize(results: CaseResult[]): CorpusSummary
