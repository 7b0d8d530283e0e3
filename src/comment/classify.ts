import type { TestAnalysis } from '../analysis/types.js'
import { isFailure, type Evidence, type Result, type TestHistory } from '../model.js'
import type { Forgiver } from '../quarantine/gate.js'
import type { QuarantineRecord } from '../store/store.js'

export type FailureKind = 'new_failure' | 'known_flaky' | 'broken' | 'passed_on_retry'

/** One test of the run that needs a reviewer's attention, and what flakewatch knows about it. */
export interface ClassifiedFailure {
  kind: FailureKind
  testId: string
  name: string
  message: string | null
  /** The quarantine that forgives this failure, if any: the test's own, or a rule's (then `rule` names it). */
  quarantine: QuarantineNote | null
  /** For `known_flaky` and `broken`: why flakewatch thinks so. */
  evidence: Evidence[]
  /** For `broken`: the first revision of the failure streak on the default branch. */
  brokenSince: string | null
}

/** What the comment says of a quarantine. */
export interface QuarantineNote {
  reason: string
  owner: string | null
  expiresAt: string | null
  /** The rule that forgives the failure; null for a quarantine of the test itself. */
  rule: string | null
}

export interface ClassifyInput {
  results: readonly Result[]
  /** Quarantines in force, by test id (ignored when `forgiverOf` is given). */
  quarantines: ReadonlyMap<string, QuarantineRecord>
  /**
   * What forgives a result, as the gate decides it (`createForgiver`: single quarantines and rules). With it the
   * comment calls quarantined exactly what the gate lets pass.
   */
  forgiverOf?: (result: Result) => Forgiver | undefined
  /** Stored analyses and histories of the run's tests, by test id (absent without a store). */
  known?: ReadonlyMap<string, { analysis: TestAnalysis; history: TestHistory }>
  defaultBranch: string
}

/**
 * The first revision of the failures the history ends with on `branch`, or null when its last result there
 * passed. A test that already fails on the default branch is not the pull request's fault.
 */
export function brokenSinceOnBranch(history: TestHistory, branch: string): { revision: string | null } | null {
  let since: string | null | undefined
  for (let i = history.entries.length - 1; i >= 0; i--) {
    const e = history.entries[i]!
    if (e.run.branch !== branch || e.status === 'skipped') continue
    if (!isFailure(e.status)) break
    since = e.run.revision
  }
  return since === undefined ? null : { revision: since }
}

function quarantineNote(r: Result, input: ClassifyInput): QuarantineNote | null {
  if (input.forgiverOf) {
    const f = input.forgiverOf(r)
    return f ? { reason: f.reason, owner: f.owner, expiresAt: f.expires_at, rule: f.rule } : null
  }
  const q = input.quarantines.get(r.test.testId)
  return q ? { reason: q.reason, owner: q.owner, expiresAt: q.expiresAt, rule: null } : null
}

/**
 * Sorts the run's failures: passed on retry; known flaky (quarantined, or flaky by verdict); broken since a
 * revision (failing on the default branch already, or broken by verdict); or new. Pure.
 * @example classifyFailures({ results, quarantines: new Map(), defaultBranch: 'main' })
 */
export function classifyFailures(input: ClassifyInput): ClassifiedFailure[] {
  const out: ClassifiedFailure[] = []
  for (const r of input.results) {
    const failed = isFailure(r.status)
    if (!failed && !(r.status === 'passed' && r.flakyOnRetry)) continue
    const base = {
      testId: r.test.testId,
      name: r.test.name,
      message: r.message ?? r.attempts.find((a) => a.message)?.message ?? null,
      quarantine: quarantineNote(r, input),
      evidence: [] as Evidence[],
      brokenSince: null,
    }
    const known = input.known?.get(r.test.testId)
    if (!failed) {
      out.push({ ...base, kind: 'passed_on_retry', evidence: known?.analysis.evidence ?? [] })
      continue
    }
    if (base.quarantine || known?.analysis.verdict === 'flaky') {
      out.push({ ...base, kind: 'known_flaky', evidence: known?.analysis.evidence ?? [] })
      continue
    }
    const onMain = known ? brokenSinceOnBranch(known.history, input.defaultBranch) : null
    if (onMain || known?.analysis.verdict === 'broken') {
      const hint = known?.analysis.hints.find((h) => h.kind === 'broken_since')
      const brokenSince = onMain?.revision ?? (hint && 'revision' in hint ? hint.revision : null) ?? null
      out.push({ ...base, kind: 'broken', evidence: known?.analysis.evidence ?? [], brokenSince })
      continue
    }
    out.push({ ...base, kind: 'new_failure' })
  }
  return out
}
