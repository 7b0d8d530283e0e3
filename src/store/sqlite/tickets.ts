import type { SqliteDb } from './driver.js'
import { stateFromRow, type StateRow, type TestState } from '../notifications.js'
import {
  MAX_TICKET_PAGE,
  TICKET_DUE,
  ticketFromRow,
  type TicketDbRow,
  type TicketRow,
  type TicketStore,
  type TicketSyncOutcome,
  type TicketWant,
} from '../tickets.js'

/** The ticket tables of a SQLite store; writes go through the store's queue of this process's writes. */
export class SqliteTicketStore implements TicketStore {
  constructor(
    private readonly db: SqliteDb,
    private readonly serial: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {}

  listStates(): Promise<TestState[]> {
    return Promise.resolve((this.db.prepare('SELECT * FROM ticket_state').all() as StateRow[]).map(stateFromRow))
  }

  recordChanges(states: TestState[], wants: TicketWant[]): Promise<void> {
    return this.serial(() => {
      const upsertState = this.db.prepare(
        `INSERT INTO ticket_state (test_id, verdict, quarantined, expiry_warned_for, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (test_id) DO UPDATE SET verdict = excluded.verdict, quarantined = excluded.quarantined,
           expiry_warned_for = excluded.expiry_warned_for, updated_at = excluded.updated_at`,
      )
      const create = this.db.prepare(
        `INSERT OR IGNORE INTO tickets (test_id, tracker, marker, wanted, reason, attempts, next_attempt_at, lease_until, updated_at)
         VALUES (?, ?, ?, 'closed', '', 0, ?, 0, ?)`,
      )
      const want = this.db.prepare(
        `UPDATE tickets SET wanted = ?, reason = ?, attempts = 0, next_attempt_at = ?, updated_at = ? WHERE test_id = ?`,
      )
      const comment = this.db.prepare(
        `UPDATE tickets SET pending_comment = ?, next_attempt_at = min(next_attempt_at, ?), updated_at = ? WHERE test_id = ?`,
      )
      const seen = this.db.prepare(
        `UPDATE tickets SET last_failure_at = max(coalesce(last_failure_at, 0), ?) WHERE test_id = ?`,
      )
      this.db.transaction(() => {
        for (const s of states)
          upsertState.run(s.testId, s.verdict, s.quarantined ? 1 : 0, s.expiryWarnedFor, s.updatedAt)
        for (const w of wants) {
          create.run(w.testId, w.tracker, w.marker, w.now, w.at)
          if (w.wanted) want.run(w.wanted.state, w.wanted.reason, w.now, w.at, w.testId)
          if (w.comment !== undefined) comment.run(w.comment, w.now, w.at, w.testId)
          if (w.lastFailureAt != null) seen.run(w.lastFailureAt, w.testId)
        }
      })()
      return Promise.resolve()
    })
  }

  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<TicketRow[]> {
    // One statement in the one writer: two processes never take the same ticket.
    return this.serial(() => {
      const rows = this.db
        .prepare(
          `UPDATE tickets SET lease_owner = ?, lease_until = ?
           WHERE test_id IN (SELECT test_id FROM tickets WHERE ${TICKET_DUE} AND next_attempt_at <= ? AND lease_until <= ?
                             ORDER BY next_attempt_at, test_id LIMIT ?)
           RETURNING *`,
        )
        .all(owner, now + leaseMs, now, now, limit) as TicketDbRow[]
      return Promise.resolve(rows.map(ticketFromRow).sort((a, b) => a.testId.localeCompare(b.testId)))
    })
  }

  recordSync(testId: string, owner: string, o: TicketSyncOutcome): Promise<boolean> {
    return this.serial(() => {
      const changes = o.ok
        ? this.db
            .prepare(
              `UPDATE tickets SET key = ?, url = ?, actual = ?, attempts = 0, last_error = NULL, lease_owner = NULL,
                 lease_until = 0, updated_at = ?,
                 pending_comment = CASE WHEN pending_comment = ? THEN NULL ELSE pending_comment END
               WHERE test_id = ? AND lease_owner = ?`,
            )
            .run(o.key, o.url, o.actual, o.at, o.sentComment, testId, owner).changes
        : this.db
            .prepare(
              `UPDATE tickets SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, lease_owner = NULL,
                 lease_until = 0, updated_at = ?
               WHERE test_id = ? AND lease_owner = ?`,
            )
            .run(o.error, o.nextAttemptAt, o.at, testId, owner).changes
      return Promise.resolve(changes > 0)
    })
  }

  get(testId: string): Promise<TicketRow | null> {
    const row = this.db.prepare('SELECT * FROM tickets WHERE test_id = ?').get(testId) as TicketDbRow | undefined
    return Promise.resolve(row ? ticketFromRow(row) : null)
  }

  list(filter: { limit?: number } = {}): Promise<TicketRow[]> {
    const limit = Math.min(filter.limit ?? MAX_TICKET_PAGE, MAX_TICKET_PAGE)
    const rows = this.db
      .prepare('SELECT * FROM tickets ORDER BY updated_at DESC, test_id LIMIT ?')
      .all(limit) as TicketDbRow[]
    return Promise.resolve(rows.map(ticketFromRow))
  }
}
