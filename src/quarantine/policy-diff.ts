import type { VerdictKind } from '../model.js'
import type { QuarantineRecord } from '../store/store.js'
import { compareText } from '../compare-text.js'
import { decideQuarantine, type PolicyDecision, type PolicyTest, type QuarantinePolicy } from './policy.js'

/** What the quarantine policy would do to one test now: its decision, or `none` (left as it is). */
export type PolicyAction = 'quarantine' | 'release' | 'expire' | 'over_cap' | 'none'

/** One test as a policy judges it: its verdict, with why, and what the quarantine policy would do. */
export interface PolicyOutcome {
  verdict: VerdictKind
  /** The verdict's reason, as `analyze` prints it. */
  reason: string
  action: PolicyAction
  /** The policy's reason for the action; null for `none`. */
  actionReason: string | null
}

/** A test whose verdict or quarantine action differs under the candidate. */
export interface PolicyChange {
  testId: string
  quarantined: boolean
  current: PolicyOutcome
  candidate: PolicyOutcome
  /** One sentence each: the verdict's change and the action's change, with their reasons. */
  why: string[]
}

export interface PolicyDiff {
  /** Tests judged under both policies. */
  tests: number
  changes: PolicyChange[]
  /** Counts of the candidate's changes, as a reader first wants them. */
  totals: {
    verdictChanged: number
    wouldQuarantine: number
    wouldNoLongerQuarantine: number
    wouldRelease: number
    wouldNoLongerRelease: number
  }
}

function actionsOf(decision: PolicyDecision): Map<string, { action: PolicyAction; reason: string }> {
  const out = new Map<string, { action: PolicyAction; reason: string }>()
  for (const [action, list] of [
    ['quarantine', decision.quarantine],
    ['release', decision.release],
    ['expire', decision.expire],
    ['over_cap', decision.overCap],
  ] as const) {
    for (const d of list) out.set(d.testId, { action, reason: d.reason })
  }
  return out
}

const ACTION_WORDS: Record<PolicyAction, string> = {
  quarantine: 'quarantine it',
  release: 'release it',
  expire: 'let its quarantine expire',
  over_cap: 'quarantine it but for the cap (maxQuarantined)',
  none: 'leave it as it is',
}

/**
 * Which tests would change verdict, be quarantined or released under a candidate policy, and why: the same
 * `decideQuarantine` that `quarantine auto` runs, on each policy's analyses, against the quarantines in force.
 * Pure; `current` and `candidate` hold the same tests (a test missing from one is judged `insufficient_data`
 * there).
 * @example diffPolicies({ current, candidate, quarantines, currentPolicy, candidatePolicy, now }).changes
 */
export function diffPolicies(input: {
  current: readonly PolicyTest[]
  candidate: readonly PolicyTest[]
  quarantines: QuarantineRecord[]
  currentPolicy: QuarantinePolicy
  candidatePolicy: QuarantinePolicy
  now: number
}): PolicyDiff {
  const before = actionsOf(decideQuarantine([...input.current], input.quarantines, input.currentPolicy, input.now))
  const after = actionsOf(decideQuarantine([...input.candidate], input.quarantines, input.candidatePolicy, input.now))
  const cur = new Map(input.current.map((t) => [t.testId, t]))
  const cand = new Map(input.candidate.map((t) => [t.testId, t]))
  const quarantined = new Set(input.quarantines.map((q) => q.testId))
  const totals = {
    verdictChanged: 0,
    wouldQuarantine: 0,
    wouldNoLongerQuarantine: 0,
    wouldRelease: 0,
    wouldNoLongerRelease: 0,
  }
  const outcome = (t: PolicyTest | undefined, acts: typeof before, id: string): PolicyOutcome => {
    const a = acts.get(id)
    return {
      verdict: t?.verdict ?? 'insufficient_data',
      reason: t?.reason ?? 'no results under this policy',
      action: a?.action ?? 'none',
      actionReason: a?.reason ?? null,
    }
  }
  const changes: PolicyChange[] = []
  for (const id of new Set([...cur.keys(), ...cand.keys()])) {
    const c = outcome(cur.get(id), before, id)
    const n = outcome(cand.get(id), after, id)
    if (c.verdict === n.verdict && c.action === n.action) continue
    const why: string[] = []
    if (c.verdict !== n.verdict) {
      totals.verdictChanged++
      why.push(`verdict ${c.verdict} → ${n.verdict}: ${n.reason}`)
    }
    if (c.action !== n.action) {
      if (n.action === 'quarantine') totals.wouldQuarantine++
      if (c.action === 'quarantine') totals.wouldNoLongerQuarantine++
      if (n.action === 'release') totals.wouldRelease++
      if (c.action === 'release') totals.wouldNoLongerRelease++
      const because = n.actionReason ?? c.actionReason
      why.push(
        `the policy would ${ACTION_WORDS[n.action]} (now: ${ACTION_WORDS[c.action]})${because ? `: ${because}` : ''}`,
      )
    }
    changes.push({ testId: id, quarantined: quarantined.has(id), current: c, candidate: n, why })
  }
  changes.sort((a, b) => changeRank(a) - changeRank(b) || compareText(a.testId, b.testId))
  return { tests: new Set([...cur.keys(), ...cand.keys()]).size, changes, totals }
}

/** Quarantine and release changes first (they change builds), then verdict changes. */
function changeRank(c: PolicyChange): number {
  if (c.current.action !== c.candidate.action) return c.candidate.action === 'none' ? 1 : 0
  return 2
}
