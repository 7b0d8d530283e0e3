import { createHash } from 'node:crypto'
import type { TestAnalysis } from '../analysis/types.js'
import type { VerdictKind } from '../model.js'
import { detectChanges, type CurrentTest } from '../notify/detect.js'
import type { TestState } from '../store/notifications.js'
import type { TicketRow, TicketWant } from '../store/tickets.js'
import { failedAgainComment, stateComment, type TicketLinks } from './content.js'
import type { Block } from './document.js'

/** Tickets one look opens, closes or comments on at most; the rest are planned again by the next look. */
export const MAX_TICKET_CHANGES_PER_LOOK = 500

export interface TicketPolicy {
  /** What opens a ticket. */
  openOn: ('flaky' | 'quarantined')[]
  commentOnFailure: boolean
}

/** One thing a look asks of a test's ticket. */
export interface TicketAction {
  testId: string
  action: 'open' | 'close' | 'comment'
  reason: string
}

export interface TicketPlan {
  /** The first look: every test that should have a ticket gets one. */
  baseline: boolean
  states: TestState[]
  wants: TicketWant[]
  actions: TicketAction[]
  /** Actions left for the next look, over {@link MAX_TICKET_CHANGES_PER_LOOK}. */
  deferred: number
}

export interface PlanInput {
  /** What the ticket sync last saw of each test. */
  previous: ReadonlyMap<string, TestState>
  current: CurrentTest[]
  analyses: ReadonlyMap<string, TestAnalysis>
  /** The ticket rows of the tests that have one (at least of those that should). */
  rows: ReadonlyMap<string, TicketRow>
  policy: TicketPolicy
  tracker: string
  project: string | null
  links: TicketLinks
  now: number
}

/**
 * The text that finds a test's ticket again in its tracker, the same in every process: a hash of the project and
 * the test id (a test id can be longer than any tracker's label).
 * @example ticketMarker(null, 'unit::cart::adds') // 'flakewatch-3f…'
 */
export function ticketMarker(project: string | null, testId: string): string {
  return `flakewatch-${createHash('sha256')
    .update(`${project ?? ''}\u0000${testId}`)
    .digest('hex')
    .slice(0, 24)}`
}

/** Whether a test in this state should have an open ticket. */
export function wantsTicket(policy: TicketPolicy, verdict: VerdictKind, quarantined: boolean): boolean {
  return (
    (policy.openOn.includes('flaky') && verdict === 'flaky') || (policy.openOn.includes('quarantined') && quarantined)
  )
}

/** A comment is kept in the store as its blocks: each tracker renders them in its own markup when it is sent. */
export const encodeComment = (blocks: Block[]): string => JSON.stringify(blocks)
export const decodeComment = (text: string): Block[] => JSON.parse(text) as Block[]

/**
 * What each test's ticket should be now, from the states the webhooks watch (`detectChanges`): a test that should
 * have a ticket (flaky, or quarantined, as `openOn` says) and has none, or only a closed one, gets one opened; one
 * that no longer should and is neither broken nor quarantined (released, or fixed) gets its ticket closed; an open
 * ticket whose test failed again since it was last told gets a comment. Pure: the caller records `states` and
 * `wants` in one transaction. Unlike webhooks, a first look opens tickets for the tests already flaky: a ticket is
 * a state to keep, not news.
 */
export function planTickets(input: PlanInput): TicketPlan {
  const { previous, policy } = input
  const detected = detectChanges(previous, input.current, { now: input.now, expiringWithinMs: 0 })
  const at = new Date(input.now).toISOString()
  const wants: TicketWant[] = []
  const actions: TicketAction[] = []
  let deferred = 0
  const add = (w: Omit<TicketWant, 'tracker' | 'marker' | 'at' | 'now'>, action: TicketAction) => {
    if (actions.length >= MAX_TICKET_CHANGES_PER_LOOK) {
      deferred++
      return
    }
    wants.push({ ...w, tracker: input.tracker, marker: ticketMarker(input.project, w.testId), at, now: input.now })
    actions.push(action)
  }
  for (const t of input.current) {
    const prev = previous.get(t.testId)
    const verdict = t.verdict === 'insufficient_data' && prev ? prev.verdict : t.verdict
    const quarantined = t.quarantine !== null
    const a = input.analyses.get(t.testId) ?? null
    const row = input.rows.get(t.testId) ?? null
    const open = row?.wanted === 'open'
    if (wantsTicket(policy, verdict, quarantined)) {
      if (!open) {
        const reason =
          quarantined && policy.openOn.includes('quarantined')
            ? `quarantined: ${t.quarantine!.reason}`
            : `became flaky${a ? `: ${a.reason}` : ''}`
        add(
          { testId: t.testId, wanted: { state: 'open', reason }, lastFailureAt: a?.lastFailureAt ?? null },
          { testId: t.testId, action: 'open', reason },
        )
        continue
      }
      const comment: Block[] = []
      const newlyQuarantined = quarantined && prev && !prev.quarantined
      if (newlyQuarantined) comment.push(...stateComment(`Quarantined: ${t.quarantine!.reason}`))
      const failedAgain =
        policy.commentOnFailure && a?.lastFailureAt != null && a.lastFailureAt > (row.lastFailureAt ?? 0)
      if (failedAgain) comment.push(...failedAgainComment(a, input.links))
      if (comment.length) {
        add(
          { testId: t.testId, comment: encodeComment(comment), lastFailureAt: a?.lastFailureAt ?? null },
          { testId: t.testId, action: 'comment', reason: failedAgain ? 'failed again' : 'quarantined' },
        )
      }
    } else if (open && verdict !== 'broken' && !quarantined) {
      const reason = prev?.quarantined ? 'released from quarantine' : `fixed: the test is ${verdict} now`
      add({ testId: t.testId, wanted: { state: 'closed', reason } }, { testId: t.testId, action: 'close', reason })
    }
  }
  return { baseline: detected.baseline, states: detected.states, wants, actions, deferred }
}
