import type { TicketState } from '../../store/tickets.js'
import type { Block, Markup } from '../document.js'
import type { RateLimitState } from './http.js'

/** A ticket as its tracker has it. */
export interface TrackerTicket {
  /** The issue number (GitHub), iid (GitLab) or key (Jira). */
  key: string
  url: string
  state: TicketState
}

export interface NewTicket {
  title: string
  blocks: Block[]
  /** Finds the ticket again: hidden in the body (GitHub, GitLab) or a label (Jira). */
  marker: string
  labels: string[]
  /** Code owners of the test, as CODEOWNERS writes them (`@user`, `@org/team`, `user@example.com`). */
  owners: string[]
}

/**
 * One tracker, as the ticket sync uses it. Every method throws a `TrackerError` when the tracker refuses, after the
 * connection's own retries of 5xx, 429 and network errors.
 */
export interface TicketTracker {
  readonly kind: 'github' | 'gitlab' | 'jira'
  readonly markup: Markup
  /** What the tracker said of its rate limit on this connection. */
  readonly rateLimit: RateLimitState
  /** The ticket carrying `marker`, in any state, or null. */
  find(marker: string): Promise<TrackerTicket | null>
  open(ticket: NewTicket): Promise<TrackerTicket>
  comment(key: string, blocks: Block[]): Promise<void>
  setState(key: string, state: TicketState): Promise<void>
}

/** Every ticket carries this label, and the trackers that hide the marker in the body are searched by it. */
export const TICKET_LABEL = 'flakewatch'

/** Pages of 100 tickets read to find a marker: a bound, so that a misbehaving tracker cannot loop us forever. */
export const FIND_MAX_PAGES = 50

/** The hidden line of a Markdown body that finds the ticket again. */
export function markerLine(marker: string): string {
  return `<!-- ${marker} -->`
}

/** `@alice` → `alice`; teams (`@org/team`) and e-mail addresses are not user names. */
export function ownerUsers(owners: string[]): string[] {
  return [...new Set(owners.filter((o) => /^@[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(o)).map((o) => o.slice(1)))]
}

/** Owners that cannot be assignees, as labels (`owner:org/team`), within the trackers' 50 characters. */
export function ownerLabels(owners: string[], assigned: string[]): string[] {
  const users = new Set(assigned.map((u) => `@${u}`))
  return [
    ...new Set(
      owners
        .filter((o) => !users.has(o))
        .map((o) => `owner:${o.replace(/^@/, '').replace(/[\s,]+/g, '_')}`.slice(0, 50)),
    ),
  ]
}
