import type { TestAnalysis } from '../analysis/types.js'
import { classifyFailures, type ClassifiedFailure } from '../comment/classify.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import type { Result, TestHistory } from '../model.js'
import { createForgiver, isActive, type RunScope } from '../quarantine/gate.js'
import type { QuarantineRecord, QuarantineRule, Store } from '../store/store.js'
import { analyzeStore } from './analyze-store.js'
import { idsAsIdentitySource, resolveTests } from './reconcile-ids.js'

export interface TriageOptions {
  config: Pick<ResolvedConfig, 'analysis' | 'successRate' | 'defaultBranch'>
  /** The run of each result, for rules on branch and facets; without it, `branch` and no facets. */
  scopes?: ReadonlyMap<Result, RunScope>
  branch?: string | null
  /** Quarantines and rules from elsewhere (a quarantine file); default: the store's. */
  quarantines?: QuarantineRecord[]
  rules?: QuarantineRule[]
  now?: number
}

/**
 * Sorts a run's failures as the pull-request comment does (`classifyFailures`): passed on retry, known flaky
 * (quarantined, forgiven exactly as the gate forgives, or flaky by verdict), broken before this change, or new,
 * from the quarantines and the stored history of those tests only (read by index). Each failure is first given the
 * id its test is stored under, as ingest would match its name. `store` may be null (no history: every failure not
 * quarantined is new).
 * @example await triageFailures(store, results, { config })
 */
export async function triageFailures(
  store: Store | null,
  results: readonly Result[],
  opts: TriageOptions,
): Promise<ClassifiedFailure[]> {
  const noScope: RunScope = { branch: opts.branch ?? null, env: {} }
  const scopeOf = new Map<Result, RunScope>()
  let interesting = results.filter((r) => r.status === 'failed' || r.status === 'error' || r.flakyOnRetry)
  let quarantines = opts.quarantines ?? []
  let rules = opts.rules ?? []
  // The ids the store (or else the quarantine file) knows these tests by, matched as ingest matches a report's
  // names: a test named under another reporter's convention meets its history and its quarantine.
  const ids = store ?? (opts.quarantines?.length ? idsAsIdentitySource(opts.quarantines.map((q) => q.testId)) : null)
  if (ids && interesting.length) {
    const named = interesting.map((r) => ({ ref: r.test, project: opts.scopes?.get(r)?.env.project }))
    const { refs } = await resolveTests(ids, named)
    interesting = interesting.map((r, i) => {
      const same = refs[i]!.testId === r.test.testId ? r : { ...r, test: refs[i]! }
      scopeOf.set(same, opts.scopes?.get(r) ?? noScope)
      return same
    })
  }
  const known = new Map<string, { analysis: TestAnalysis; history: TestHistory }>()
  if (store && interesting.length) {
    if (!opts.quarantines) quarantines = await store.listQuarantines()
    if (!opts.rules) rules = await store.listQuarantineRules()
    await analyzeStore(store, {
      config: analysisOptions(opts.config),
      filter: { testIds: interesting.map((r) => r.test.testId) },
      onTest: (history, analysis) => known.set(history.test.testId, { analysis, history }),
    })
  }
  const now = opts.now ?? Date.now()
  const active = new Map(quarantines.filter((q) => isActive(q, now)).map((q) => [q.testId, q]))
  const runOf = (r: Result) => scopeOf.get(r) ?? opts.scopes?.get(r) ?? noScope
  const forgiverOf = createForgiver(active, { now, rules, runOf })
  return classifyFailures({
    results: interesting,
    quarantines: active,
    forgiverOf,
    known,
    defaultBranch: opts.config.defaultBranch,
  })
}
