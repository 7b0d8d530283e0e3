import type { TicketStore, TicketRow, TicketState } from '../store/tickets.js'
import { stateComment } from './content.js'
import type { Block } from './document.js'
import { decodeComment } from './plan.js'
import type { NewTicket, TicketTracker, TrackerTicket } from './trackers/tracker.js'

/** A claimed ticket is left alone by other processes this long; a crash makes it due again after it. */
export const TICKET_LEASE_MS = 5 * 60_000
/** The longest delay between two attempts of one ticket. */
export const MAX_TICKET_BACKOFF_MS = 6 * 3_600_000
const CLAIM_BATCH = 25

export interface SyncOptions {
  tickets: TicketStore
  tracker: TicketTracker
  /** This process, as the lease's owner. */
  owner: string
  /** What a new ticket says (title, body, owners), from the test's explanation; null when the test is unknown. */
  content: (row: TicketRow) => Promise<Omit<NewTicket, 'marker' | 'labels'> | null>
  labels: string[]
  /** Tickets this pass works on at most. */
  limit: number
  /** Told of each ticket opened or found, so that its link goes on the test's quarantine. */
  onLinked?: (testId: string, url: string) => Promise<void>
  now?: () => number
}

export interface SyncedTicket {
  testId: string
  key: string | null
  url: string | null
  /** What was done: opened, found (again, by its marker), commented, closed, reopened. */
  did: string[]
  error: string | null
}

export interface SyncSummary {
  tickets: SyncedTicket[]
  opened: number
  closed: number
  commented: number
  failed: number
  /** The tracker asked to be left alone until then (epoch ms); the pass stopped there. */
  rateLimitedUntil: number | null
}

/** The delay before attempt n+1 after n failed ones: a minute, doubling, capped. */
export function ticketBackoffMs(attemptsMade: number): number {
  return Math.min(60_000 * 2 ** Math.max(0, attemptsMade - 1), MAX_TICKET_BACKOFF_MS)
}

/** Brings one claimed ticket to what it should be. Returns what the tracker has now and the comment sent. */
async function syncOne(row: TicketRow, o: SyncOptions, did: string[]) {
  const { tracker } = o
  let ticket: TrackerTicket | null =
    row.key && row.url ? { key: row.key, url: row.url, state: row.actual ?? 'open' } : null
  // Not opened yet as far as the store knows: a run that opened it and died before recording it left its marker.
  if (!ticket) {
    ticket = await tracker.find(row.marker)
    if (ticket) did.push('found')
  }
  let created = false
  if (!ticket) {
    if (row.wanted === 'closed') return { ticket: null, sent: row.pendingComment }
    const content = await o.content(row)
    if (!content) throw new Error('the test has no results in the store any more')
    ticket = await tracker.open({ ...content, marker: row.marker, labels: o.labels })
    created = true
    did.push('opened')
  }
  if (ticket.state !== row.wanted) {
    const state: TicketState = row.wanted
    const said = state === 'closed' ? `Closed by flakewatch: ${row.reason}.` : `Reopened by flakewatch: ${row.reason}.`
    await tracker.comment(ticket.key, stateComment(said))
    await tracker.setState(ticket.key, state)
    ticket = { ...ticket, state }
    did.push(state === 'closed' ? 'closed' : 'reopened')
  }
  // A new ticket already says what the comment would.
  if (row.pendingComment !== null && ticket.state === 'open' && !created) {
    let blocks: Block[]
    try {
      blocks = decodeComment(row.pendingComment)
    } catch {
      blocks = stateComment(row.pendingComment)
    }
    await tracker.comment(ticket.key, blocks)
    did.push('commented')
  }
  return { ticket, sent: row.pendingComment }
}

/**
 * Works through the tickets with something to do (open, close, reopen, comment), each under a lease so that two
 * processes never work on one test's ticket at once, and records what the tracker has now. A failure is retried by
 * a later pass with backoff; a rate limit ends the pass and defers the ticket to the limit's reset. Never throws for
 * a tracker's failure.
 */
export async function syncTickets(o: SyncOptions): Promise<SyncSummary> {
  const now = o.now ?? Date.now
  const summary: SyncSummary = { tickets: [], opened: 0, closed: 0, commented: 0, failed: 0, rateLimitedUntil: null }
  const cutoff = now()
  while (summary.tickets.length < o.limit) {
    const batch = await o.tickets.claimDue(
      o.owner,
      cutoff,
      TICKET_LEASE_MS,
      Math.min(CLAIM_BATCH, o.limit - summary.tickets.length),
    )
    if (batch.length === 0) break
    for (const row of batch) {
      const did: string[] = []
      const at = () => new Date(now()).toISOString()
      // Rate limited: the rest of the batch waits for the reset, untouched.
      if (summary.rateLimitedUntil !== null) {
        await o.tickets.recordSync(row.testId, o.owner, {
          ok: false,
          error: row.lastError ?? 'waiting for the rate limit',
          nextAttemptAt: summary.rateLimitedUntil,
          at: at(),
        })
        continue
      }
      try {
        const { ticket, sent } = await syncOne(row, o, did)
        if (ticket) {
          await o.tickets.recordSync(row.testId, o.owner, {
            ok: true,
            key: ticket.key,
            url: ticket.url,
            actual: ticket.state,
            sentComment: sent,
            at: at(),
          })
          if (did.includes('opened') || did.includes('found')) await o.onLinked?.(row.testId, ticket.url)
        } else {
          // Never opened and no longer wanted: nothing in the tracker to change.
          await o.tickets.recordSync(row.testId, o.owner, {
            ok: true,
            key: '',
            url: '',
            actual: 'closed',
            sentComment: sent,
            at: at(),
          })
        }
        summary.opened += did.includes('opened') ? 1 : 0
        summary.closed += did.includes('closed') ? 1 : 0
        summary.commented += did.includes('commented') ? 1 : 0
        summary.tickets.push({
          testId: row.testId,
          key: ticket?.key ?? null,
          url: ticket?.url ?? null,
          did,
          error: null,
        })
      } catch (error) {
        const message = (error as Error).message
        const limited = o.tracker.rateLimit.until
        if (limited !== null && limited > now()) summary.rateLimitedUntil = limited
        await o.tickets.recordSync(row.testId, o.owner, {
          ok: false,
          error: message,
          nextAttemptAt: summary.rateLimitedUntil ?? now() + ticketBackoffMs(row.attempts + 1),
          at: at(),
        })
        summary.failed++
        summary.tickets.push({ testId: row.testId, key: row.key, url: row.url, did, error: message })
      }
    }
    if (summary.rateLimitedUntil !== null) break
  }
  return summary
}
