import type { TestState } from './notifications.js'

/** A ticket's state in its tracker. */
export type TicketState = 'open' | 'closed'

/**
 * One test's ticket: what it should be (`wanted`, from the state changes flakewatch saw) and what the tracker has
 * (`actual`), so that a sync that fails is retried until they agree. One row per test: one ticket per test.
 */
export interface TicketRow {
  testId: string
  /** `github`, `gitlab` or `jira`. */
  tracker: string
  /** The text that finds the ticket again in its tracker (in its body, or a Jira label). */
  marker: string
  /** The issue number (GitHub), iid (GitLab) or key (Jira); null until the ticket is opened or found. */
  key: string | null
  url: string | null
  wanted: TicketState
  /** Null: no ticket in the tracker yet. */
  actual: TicketState | null
  /** Why `wanted` was last set (the state change), said in the ticket when it opens, reopens or closes. */
  reason: string
  /** A comment to add (the test failed again), replaced by a newer one until it is sent. */
  pendingComment: string | null
  /** The newest failure (epoch ms) the ticket has been told of. */
  lastFailureAt: number | null
  attempts: number
  /** Epoch ms. */
  nextAttemptAt: number
  lastError: string | null
  leaseOwner: string | null
  /** Epoch ms; the row is another process's until then. */
  leaseUntil: number
  updatedAt: string
}

/** A change to one test's ticket, recorded with the states it came from. */
export interface TicketWant {
  testId: string
  tracker: string
  marker: string
  /** Open or close the ticket, and why. */
  wanted?: { state: TicketState; reason: string }
  /** A comment to add. */
  comment?: string
  lastFailureAt?: number | null
  at: string
  /** Epoch ms: due from then. */
  now: number
}

/** What one sync of a claimed ticket did. */
export type TicketSyncOutcome =
  | {
      ok: true
      key: string
      url: string
      actual: TicketState
      /** The comment that was sent (cleared only if no newer one replaced it meanwhile). */
      sentComment: string | null
      at: string
    }
  | { ok: false; error: string; nextAttemptAt: number; at: string }

/**
 * Tickets in trackers, one per test (see `tickets/`). The ticket states are kept apart from the webhooks' (each
 * consumer of state changes remembers what it last acted on), and the rows are claimed under a lease, so that two
 * processes never open the same test's ticket twice.
 */
export interface TicketStore {
  /** What the ticket sync last saw of each test (the shape `notify/detect.ts` compares). */
  listStates(): Promise<TestState[]>
  /**
   * Saves changed states and the tickets' wants in one transaction. A want creates the test's row if there is
   * none; `wanted` sets what the ticket should be (due now), `comment` replaces a comment not yet sent.
   */
  recordChanges(states: TestState[], wants: TicketWant[]): Promise<void>
  /**
   * Takes up to `limit` tickets with work to do (what they should be differs from the tracker's, or a comment is
   * waiting) due at `now` and not leased to another process, and leases them to `owner` for `leaseMs`. Atomic:
   * of two processes claiming at once, each gets different tickets.
   */
  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<TicketRow[]>
  /** Records a claimed ticket's sync and ends the lease; false (nothing written) if `owner` lost the lease. */
  recordSync(testId: string, owner: string, outcome: TicketSyncOutcome): Promise<boolean>
  get(testId: string): Promise<TicketRow | null>
  /** Tickets, most recently changed first. */
  list(filter?: { limit?: number }): Promise<TicketRow[]>
}

/** The columns of `tickets`, as both backends name them. */
export interface TicketDbRow {
  test_id: string
  tracker: string
  marker: string
  key: string | null
  url: string | null
  wanted: string
  actual: string | null
  reason: string
  pending_comment: string | null
  last_failure_at: number | string | null
  attempts: number
  next_attempt_at: number | string
  last_error: string | null
  lease_owner: string | null
  lease_until: number | string
  updated_at: string
}

export function ticketFromRow(r: TicketDbRow): TicketRow {
  return {
    testId: r.test_id,
    tracker: r.tracker,
    marker: r.marker,
    key: r.key,
    url: r.url,
    wanted: r.wanted as TicketState,
    actual: r.actual as TicketState | null,
    reason: r.reason,
    pendingComment: r.pending_comment,
    lastFailureAt: r.last_failure_at === null ? null : Number(r.last_failure_at),
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error,
    leaseOwner: r.lease_owner,
    leaseUntil: Number(r.lease_until),
    updatedAt: r.updated_at,
  }
}

/** Tickets one `list` returns at most. */
export const MAX_TICKET_PAGE = 1_000

/** The SQL condition of a ticket with work to do (both backends). */
export const TICKET_DUE = `(wanted <> coalesce(actual, 'closed') OR (pending_comment IS NOT NULL AND coalesce(actual, 'closed') = 'open' AND wanted = 'open'))`
