import { isFailure, type Evidence, type HistoryEntry, type Verdict } from '../model.js'
import { day, fixed2, plural, shortRev } from './format.js'
import { earnedFix } from './earned-fix.js'
import { hadFailure } from './had-failure.js'
import { streakChance } from './streak-chance.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import type { ChangeHint } from './types.js'

export interface VerdictInput {
  /** Countable runs (in the lookback, not skipped, not excluded), oldest first. */
  entries: readonly HistoryEntry[]
  score: number
  flipRate: number
}

export interface VerdictResult extends Verdict {
  /** Set when the verdict rests on a change point: where a breakage started, or where a fix took hold. */
  change: ChangeHint | null
}

const MAX_RUN_IDS = 10

/**
 * One verdict per test, in this order:
 * 1. **broken**: the newest runs are a streak of at least `brokenMinConsecutive` failures (not counting its first
 *    runs on a revision that passed before the streak: that revision did not break the test) that is too improbable
 *    for the test as it failed before ({@link streakChance} < brokenAlpha: its recent rate, and its rate under
 *    the conditions and in the bursts its failures concentrated on, so that a flaky test's unlucky streak, a
 *    time window or a new burst is not taken for a breakage), or the test has not passed at all.
 *    A regression is never called flaky, whatever its past.
 * 2. **healthy (fixed)**: the newest runs are a clean stretch (no failed attempt) that earns a fix
 *    ({@link earnedFix}): improbable at the test's old failure rate, taken conservatively, under every condition
 *    its failures concentrated on, and longer than its earlier gaps. A shorter stretch leaves the verdict below
 *    and adds a `maybe_fixed` hint that says what is still needed.
 * 3. **flaky (proven)**: a pass and a fail on the same revision, or a pass on retry: one sighting is enough.
 * 4. **insufficient_data**: fewer than `minRunsForScoring` runs.
 * 5. **flaky (statistical)**: at least `minFailureEpisodes` separate runs of consecutive failures, and a pass.
 * 6. **healthy** otherwise.
 * @example decideVerdict({ entries, score: 0.1, flipRate: 0 }, cfg).verdict // 'healthy'
 */
export function decideVerdict(input: VerdictInput, cfg: ResolvedAnalysisConfig): VerdictResult {
  const { entries } = input
  const n = entries.length
  const v = cfg.verdict
  if (n === 0) return { verdict: 'insufficient_data', reason: 'no countable runs', evidence: [], change: null }

  let failures = 0
  let episodes = 0
  let prevFailed = false
  for (const e of entries) {
    const failed = isFailure(e.status)
    if (failed) {
      failures++
      if (!prevFailed) episodes++
    }
    prevFailed = failed
  }
  const passes = n - failures

  let trailingFails = 0
  while (trailingFails < n && isFailure(entries[n - 1 - trailingFails]!.status)) trailingFails++
  // A streak that begins on a revision that also passed before it was not broken by that revision: its failures
  // there are the test's flakiness, and a breakage can begin at the next revision at the earliest.
  let before = n - trailingFails
  const startRev = trailingFails > 0 ? entries[before]!.run.revision : null
  if (startRev !== null && passedOn(entries, before, startRev)) {
    while (before < n && entries[before]!.run.revision === startRev) before++
  }
  const streak = n - before
  if (streak >= v.brokenMinConsecutive) {
    if (before === 0 || streakChance(entries, before, cfg) < v.brokenAlpha) {
      const start = entries[before]!
      const runIds = []
      for (let i = before; i < n && runIds.length < MAX_RUN_IDS; i++) runIds.push(entries[i]!.run.runId)
      const since = `since revision ${shortRev(start.run.revision)} (${day(start.run.at)})`
      const detail =
        before === 0
          ? `failed all ${plural(n, 'run')}, ${since}`
          : `failed the last ${streak} runs in a row ${since}; it passed ${passes} of ${before} runs before`
      const evidence: Evidence = { kind: 'consecutive_failures', detail, runIds }
      if (start.run.revision !== null) evidence.revision = start.run.revision
      return {
        verdict: 'broken',
        reason: detail,
        evidence: [evidence],
        change: {
          kind: 'broken_since',
          since: start.run.at,
          runId: start.run.runId,
          revision: start.run.revision,
          runsBefore: before,
          runsAfter: streak,
          failuresBefore: failures - streak,
          failuresAfter: streak,
          message: `broken ${since}`,
        },
      }
    }
  }

  // A fix needs clean runs: a pass on retry is still a failure here, and counts as one before the fix.
  let trailingClean = 0
  while (trailingClean < n && !hadFailure(entries[n - 1 - trailingClean]!)) trailingClean++
  const beforeFix = n - trailingClean
  let maybeFixed: ChangeHint | null = null
  const fix = trailingClean >= v.fixedMinRuns && beforeFix > 0 ? earnedFix(entries, beforeFix, cfg) : null
  if (fix !== null) {
    const start = entries[beforeFix]!
    const since = `since revision ${shortRev(start.run.revision)} (${day(start.run.at)})`
    const before = `it failed in ${fix.troubled} of ${beforeFix} runs before`
    const hint = (kind: 'fixed' | 'maybe_fixed', message: string): ChangeHint => ({
      kind,
      since: start.run.at,
      runId: start.run.runId,
      revision: start.run.revision,
      runsBefore: beforeFix,
      runsAfter: trailingClean,
      failuresBefore: fix.troubled,
      failuresAfter: 0,
      alpha: v.fixedAlpha,
      chance: fix.chance,
      requirements: fix.terms,
      ...(kind === 'maybe_fixed' ? { missing: fix.missing } : {}),
      message,
    })
    // One run with a failure is no flakiness to be fixed of: without proof the test is healthy anyway (a single
    // episode), and a single pass on retry stays proof until it leaves the lookback.
    if (fix.earned && fix.troubled >= 2) {
      const message = `fixed: no failures in the last ${trailingClean} runs, ${since}; ${before}. ${fix.evidence}`
      return { verdict: 'healthy', reason: message, evidence: [], change: hint('fixed', message) }
    }
    // Not earned: the verdict below stands, and when it is flaky the hint says what the fix still needs.
    const message = `maybe fixed: no failures in the last ${trailingClean} runs, ${since}; ${before}; ${fix.missing}. ${fix.evidence}`
    if (!fix.earned) maybeFixed = hint('maybe_fixed', message)
  }

  const evidence: Evidence[] = []
  const reasons: string[] = []
  if (failures > 0 && passes > 0) {
    const proof = sameRevisionProof(entries)
    if (proof !== null) {
      const more = proof.revisions > 1 ? ` (and on ${plural(proof.revisions - 1, 'other revision')})` : ''
      const detail = `passed and failed on the same revision ${shortRev(proof.revision)}${more}`
      evidence.push({ kind: 'same_revision_pass_and_fail', detail, runIds: proof.runIds, revision: proof.revision })
      reasons.push(detail)
    }
  }
  const retryRuns: string[] = []
  let retryPasses = 0
  for (const e of entries) {
    if (!isFailure(e.status) && (e.flakyOnRetry || e.failedAttempts > 0)) {
      retryPasses++
      if (retryRuns.length < MAX_RUN_IDS) retryRuns.push(e.run.runId)
    }
  }
  if (retryPasses > 0) {
    const detail = `passed on retry in ${retryPasses} of ${plural(n, 'run')}`
    evidence.push({ kind: 'pass_on_retry', detail, runIds: retryRuns })
    reasons.push(detail)
  }

  if (evidence.length === 0 && n < cfg.scoring.minRunsForScoring) {
    return {
      verdict: 'insufficient_data',
      reason: `only ${plural(n, 'run')} (need ${cfg.scoring.minRunsForScoring})`,
      evidence: [],
      change: null,
    }
  }
  if (episodes >= v.minFailureEpisodes && passes > 0) {
    const rate = fixed2(input.flipRate)
    const detail = `failed in ${episodes} separate episodes over ${n} runs (${failures} failures, flip rate ${rate})`
    evidence.push({ kind: 'high_flip_rate', detail })
    reasons.push(detail)
  }
  if (evidence.length > 0) {
    if (input.score >= cfg.scoring.investigationThreshold) {
      evidence.push({ kind: 'high_score', detail: `flakiness score ${fixed2(input.score)}` })
    }
    return { verdict: 'flaky', reason: reasons[0]!, evidence, change: maybeFixed }
  }
  const reason =
    failures === 0
      ? `passed all ${plural(n, 'run')}`
      : `${plural(failures, 'failure')} in ${n} runs, in a single episode: not enough to call it flaky`
  return { verdict: 'healthy', reason, evidence: [], change: null }
}

/** Whether a run before `before` passed on `revision`. */
function passedOn(entries: readonly HistoryEntry[], before: number, revision: string): boolean {
  for (let i = before - 1; i >= 0; i--) {
    const e = entries[i]!
    if (e.run.revision === revision && !isFailure(e.status)) return true
  }
  return false
}

interface SameRevisionProof {
  revision: string
  runIds: string[]
  /** Revisions with both a pass and a fail. */
  revisions: number
}

/** The newest revision that has both a pass and a fail, and how many such revisions there are. */
function sameRevisionProof(entries: readonly HistoryEntry[]): SameRevisionProof | null {
  // One map of bit flags (1: passed, 2: failed) per revision; run ids are looked up only for the winner.
  const seen = new Map<string, number>()
  for (const e of entries) {
    const rev = e.run.revision
    if (rev === null) continue
    seen.set(rev, (seen.get(rev) ?? 0) | (isFailure(e.status) ? 2 : 1))
  }
  let revisions = 0
  let newest: string | null = null
  for (let i = entries.length - 1; i >= 0; i--) {
    const rev = entries[i]!.run.revision
    if (rev === null || seen.get(rev) !== 3) continue
    revisions++
    newest ??= rev
    // Count each revision once.
    seen.set(rev, 0)
  }
  if (newest === null) return null
  let pass: string | null = null
  let fail: string | null = null
  for (const e of entries) {
    if (e.run.revision !== newest) continue
    if (isFailure(e.status)) fail ??= e.run.runId
    else pass ??= e.run.runId
  }
  return { revision: newest, runIds: [pass!, fail!], revisions }
}
