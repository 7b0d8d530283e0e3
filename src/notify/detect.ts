import { createHash } from 'node:crypto'
import type { VerdictKind } from '../model.js'
import type { NotificationEvent, TestState } from '../store/notifications.js'
import type { QuarantineRecord } from '../store/store.js'

/** One test as it stands now: its verdict and its quarantine. */
export interface CurrentTest {
  testId: string
  verdict: VerdictKind
  quarantine: QuarantineRecord | null
}

/**
 * Every test as it stands now, for `detectChanges`: each analysed test with its quarantine, a quarantine of a test
 * with no history in the analysis (pruned, or added by hand ahead of time), and a test that left quarantine and has
 * no history any more (it would otherwise never be seen as released).
 */
export function currentTests(
  analyses: Iterable<{ testId: string; verdict: VerdictKind }>,
  quarantines: ReadonlyMap<string, QuarantineRecord>,
  previous: ReadonlyMap<string, TestState>,
): CurrentTest[] {
  const current: CurrentTest[] = []
  const seen = new Set<string>()
  for (const a of analyses) {
    seen.add(a.testId)
    current.push({ testId: a.testId, verdict: a.verdict, quarantine: quarantines.get(a.testId) ?? null })
  }
  for (const [testId, q] of quarantines) {
    if (!seen.has(testId)) current.push({ testId, verdict: 'insufficient_data', quarantine: q })
  }
  for (const s of previous.values()) {
    if (s.quarantined && !seen.has(s.testId) && !quarantines.has(s.testId)) {
      current.push({ testId: s.testId, verdict: 'insufficient_data', quarantine: null })
    }
  }
  return current
}

export interface StateChange {
  /** Stable for one transition (see {@link eventId}). */
  id: string
  event: NotificationEvent
  testId: string
  previous: { verdict: VerdictKind; quarantined: boolean } | null
  current: { verdict: VerdictKind; quarantined: boolean }
}

export interface DetectResult {
  changes: StateChange[]
  /** States to save: those that changed, and every test on a first look. */
  states: TestState[]
  /** The first look at this store: states recorded, nothing announced. */
  baseline: boolean
}

export interface DetectOptions {
  now: number
  /** Quarantines expiring within this many ms are announced once. */
  expiringWithinMs: number
}

/**
 * The same transition seen by two processes gets the same id, so the outbox keeps it once: it is keyed by the
 * state it left (its `updatedAt`), or by the expiry it warns about.
 */
export function eventId(event: NotificationEvent, testId: string, from: string): string {
  return createHash('sha256').update(`${event}\u0000${testId}\u0000${from}`).digest('hex').slice(0, 32)
}

/**
 * Compares what was last recorded of each test with how it stands now. Pure: the caller saves `states` and
 * enqueues `changes` in one transaction.
 *
 * - `insufficient_data` never overwrites a definite verdict, so a flaky test that stops running and comes back
 *   healthy is still announced as fixed.
 * - A first look (nothing recorded yet) records every test and announces nothing: turning webhooks on must not
 *   send one message per test already flaky.
 * @example detectChanges(new Map(), [{ testId: 'a', verdict: 'flaky', quarantine: null }], { now, expiringWithinMs })
 */
export function detectChanges(
  previous: ReadonlyMap<string, TestState>,
  current: Iterable<CurrentTest>,
  opts: DetectOptions,
): DetectResult {
  const baseline = previous.size === 0
  const at = new Date(opts.now).toISOString()
  const changes: StateChange[] = []
  const states: TestState[] = []
  for (const t of current) {
    const prev = previous.get(t.testId)
    const quarantined = t.quarantine !== null
    const verdict = t.verdict === 'insufficient_data' && prev ? prev.verdict : t.verdict
    const expiresAt = t.quarantine?.expiresAt ?? null
    const expiring =
      expiresAt !== null &&
      Date.parse(expiresAt) > opts.now &&
      Date.parse(expiresAt) - opts.now <= opts.expiringWithinMs
    const next: TestState = {
      testId: t.testId,
      verdict,
      quarantined,
      expiryWarnedFor: expiring ? expiresAt : quarantined ? (prev?.expiryWarnedFor ?? null) : null,
      updatedAt: at,
    }
    const same =
      prev &&
      prev.verdict === next.verdict &&
      prev.quarantined === next.quarantined &&
      prev.expiryWarnedFor === next.expiryWarnedFor
    if (same) continue
    states.push(next)
    if (baseline) continue
    const before = prev ? { verdict: prev.verdict, quarantined: prev.quarantined } : null
    const after = { verdict, quarantined }
    const from = prev?.updatedAt ?? 'new'
    const add = (event: NotificationEvent, key = from) =>
      changes.push({ id: eventId(event, t.testId, key), event, testId: t.testId, previous: before, current: after })
    const was = prev?.verdict ?? 'insufficient_data'
    if (verdict !== was) {
      if (verdict === 'flaky') add('became_flaky')
      else if (verdict === 'broken') add('became_broken')
      else if (verdict === 'healthy' && (was === 'flaky' || was === 'broken')) add('fixed')
    }
    const wasQuarantined = prev?.quarantined ?? false
    if (quarantined && !wasQuarantined) add('quarantined')
    if (!quarantined && wasQuarantined) add('released')
    if (expiring && prev?.expiryWarnedFor !== expiresAt) add('quarantine_expiring', expiresAt)
  }
  return { changes, states, baseline }
}
