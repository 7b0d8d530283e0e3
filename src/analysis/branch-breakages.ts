import { isFailure, type HistoryEntry } from '../model.js'
import { day, plural, shortRev } from './format.js'
import { hadFailure } from './had-failure.js'
import type { BranchBreakageHint } from './types.js'

export interface BranchSplit {
  /** The entries the verdict, flip rate and score look at: every entry but the branch breakages. */
  kept: HistoryEntry[]
  /** Entries set aside as branch breakages (like infrastructure runs, they count nowhere else). */
  setAside: number
  hints: BranchBreakageHint[]
}

interface BranchRuns {
  entries: HistoryEntry[]
}

/**
 * Failures confined to one non-default branch and consistent there are that branch's breakage, not flakiness:
 * on branch B, the runs that saw a failure are one unbroken streak of at least `minRuns` final failures (no pass
 * on retry), every later run of B is clean, and none of the failing revisions ever passed (a pass and a fail on
 * one revision is proof of flakiness on any branch), and the default branch passed after the streak began (else
 * the failures are not confined to the branch). Such streaks are set aside, so that their interleaving with
 * the default branch's passes makes neither flips nor episodes. Only when the test also runs on the default
 * branch (or on runs without a branch): a store fed from one branch alone keeps every result.
 * @example branchBreakages(entries, 'main', 2).hints[0]?.message // 'fails on every run of fix/search since abc123 …'
 */
export function branchBreakages(entries: readonly HistoryEntry[], defaultBranch: string, minRuns: number): BranchSplit {
  let onDefault = false
  // The newest clean pass on the default branch: failures are confined to a branch only while the default
  // branch still passes; a test broken everywhere (branches forked from a broken default) is not set aside.
  let lastDefaultPassAt = -Infinity
  let branches: Map<string, BranchRuns> | null = null
  for (const e of entries) {
    const b = e.run.branch
    if (b === null || b === defaultBranch) {
      onDefault = true
      if (!hadFailure(e)) lastDefaultPassAt = e.run.at
      continue
    }
    branches ??= new Map()
    const runs = branches.get(b)
    if (runs === undefined) branches.set(b, { entries: [e] })
    else runs.entries.push(e)
  }
  const none = { kept: entries as HistoryEntry[], setAside: 0, hints: [] }
  if (!onDefault || branches === null) return none

  let passedRevisions: Set<string> | null = null
  const hints: BranchBreakageHint[] = []
  let drop: Set<HistoryEntry> | null = null
  for (const [branch, { entries: runs }] of branches) {
    let first = 0
    while (first < runs.length && !hadFailure(runs[first]!)) first++
    if (first === runs.length) continue
    let end = first
    // A pass on retry is proof of flakiness, so the streak is of final failures only.
    while (end < runs.length && isFailure(runs[end]!.status)) end++
    if (end - first < minRuns) continue
    if (lastDefaultPassAt < runs[first]!.run.at) continue
    let cleanAfter = true
    for (let i = end; i < runs.length && cleanAfter; i++) if (hadFailure(runs[i]!)) cleanAfter = false
    if (!cleanAfter) continue
    passedRevisions ??= revisionsThatPassed(entries)
    let proof = false
    for (let i = first; i < end && !proof; i++) {
      const rev = runs[i]!.run.revision
      if (rev !== null && passedRevisions.has(rev)) proof = true
    }
    if (proof) continue
    drop ??= new Set()
    for (let i = first; i < end; i++) drop.add(runs[i]!)
    const start = runs[first]!
    const last = runs[end - 1]!
    const since = `since ${shortRev(start.run.revision)} (${day(start.run.at)})`
    const message =
      end === runs.length
        ? `fails on every run of ${branch} ${since}: ${plural(end - first, 'run')}, a breakage on that branch, not flakiness`
        : `failed every run of ${branch} ${since} until ${day(last.run.at)} (${plural(end - first, 'run')}), then passed there: a breakage on that branch, not flakiness`
    hints.push({
      kind: 'branch_breakage',
      branch,
      since: start.run.at,
      runId: start.run.runId,
      revision: start.run.revision,
      runs: end - first,
      ongoing: end === runs.length,
      message,
    })
  }
  if (drop === null) return none
  const kept: HistoryEntry[] = []
  for (const e of entries) if (!drop.has(e)) kept.push(e)
  return { kept, setAside: drop.size, hints }
}

function revisionsThatPassed(entries: readonly HistoryEntry[]): Set<string> {
  const out = new Set<string>()
  for (const e of entries) if (e.run.revision !== null && !isFailure(e.status)) out.add(e.run.revision)
  return out
}
