import { isFailure, type RunInfo, type TestHistory } from '../model.js'
import type { SuccessRateConfig } from './resolve-analysis-config.js'
import type { TestAnalysis } from './types.js'

const DAY_MS = 86_400_000

/**
 * The quarantine blog's per-test success rate: passes / (passes + failures) over the last `days` days, counting
 * only relevant runs, where a failure says something about the test rather than the change under test: runs on
 * the default branch, runs whose job passed, and runs of a pipeline that passed. Null without such runs.
 * Skipped results and excluded (infrastructure) runs do not count.
 * @example successRate(history, resolveAnalysisConfig().successRate, { now: Date.now() }) // 0.75
 */
export function successRate(
  history: TestHistory,
  cfg: SuccessRateConfig,
  ctx: { now: number; excludedRuns?: ReadonlySet<string> },
): number | null {
  const since = ctx.now - cfg.days * DAY_MS
  let passes = 0
  let failures = 0
  for (const e of history.entries) {
    if (e.run.at < since || e.status === 'skipped') continue
    if (ctx.excludedRuns?.has(e.run.runId) || !isRelevantRun(e.run, cfg)) continue
    if (isFailure(e.status)) failures++
    else passes++
  }
  return passes + failures === 0 ? null : passes / (passes + failures)
}

/**
 * Whether a run counts for the success rate. The one place this rule lives.
 * @example isRelevantRun({ ...run, branch: 'main' }, cfg.successRate) // true
 */
export function isRelevantRun(run: RunInfo, cfg: SuccessRateConfig): boolean {
  if (run.branch !== null && run.branch === cfg.defaultBranch) return true
  return isPassed(run.jobStatus, cfg.passedStatuses) || isPassed(run.pipelineStatus, cfg.passedStatuses)
}

function isPassed(status: string | null, passed: readonly string[]): boolean {
  if (status === null) return false
  const s = status.toLowerCase()
  return passed.some((p) => p.toLowerCase() === s)
}

/**
 * The success rates as the blog exports them: `{ "test id": 0.75 }`, leaving out tests without relevant runs.
 * @example successRateMap(analyses) // { 'unit::a.test.ts::adds': 0.75 }
 */
export function successRateMap(
  analyses: Iterable<Pick<TestAnalysis, 'testId' | 'successRate'>>,
): Record<string, number> {
  const out: Record<string, number> = {}
  for (const a of analyses) if (a.successRate !== null) out[a.testId] = a.successRate
  return out
}
