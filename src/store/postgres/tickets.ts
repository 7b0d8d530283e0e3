import type { PgClient, PgQueryable } from './driver.js'
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

/** The ticket tables of a PostgreSQL store. */
export class PostgresTicketStore implements TicketStore {
  constructor(
    private readonly db: PgQueryable,
    private readonly transaction: <T>(fn: (client: PgClient) => Promise<T>) => Promise<T>,
  ) {}

  async listStates(): Promise<TestState[]> {
    const { rows } = await this.db.query<StateRow>('SELECT * FROM ticket_state')
    return rows.map(stateFromRow)
  }

  recordChanges(states: TestState[], wants: TicketWant[]): Promise<void> {
    return this.transaction(async (client) => {
      for (const s of states) {
        await client.query(
          `INSERT INTO ticket_state (test_id, verdict, quarantined, expiry_warned_for, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (test_id) DO UPDATE SET verdict = EXCLUDED.verdict, quarantined = EXCLUDED.quarantined,
             expiry_warned_for = EXCLUDED.expiry_warned_for, updated_at = EXCLUDED.updated_at`,
          [s.testId, s.verdict, s.quarantined, s.expiryWarnedFor, s.updatedAt],
        )
      }
      for (const w of wants) {
        await client.query(
          `INSERT INTO tickets (test_id, tracker, marker, wanted, reason, attempts, next_attempt_at, lease_until, updated_at)
           VALUES ($1, $2, $3, 'closed', '', 0, $4, 0, $5) ON CONFLICT (test_id) DO NOTHING`,
          [w.testId, w.tracker, w.marker, w.now, w.at],
        )
        if (w.wanted) {
          await client.query(
            `UPDATE tickets SET wanted = $1, reason = $2, attempts = 0, next_attempt_at = $3, updated_at = $4 WHERE test_id = $5`,
            [w.wanted.state, w.wanted.reason, w.now, w.at, w.testId],
          )
        }
        if (w.comment !== undefined) {
          await client.query(
            `UPDATE tickets SET pending_comment = $1, next_attempt_at = least(next_attempt_at, $2), updated_at = $3
             WHERE test_id = $4`,
            [w.comment, w.now, w.at, w.testId],
          )
        }
        if (w.lastFailureAt != null) {
          await client.query(
            `UPDATE tickets SET last_failure_at = greatest(coalesce(last_failure_at, 0), $1) WHERE test_id = $2`,
            [w.lastFailureAt, w.testId],
          )
        }
      }
    })
  }

  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<TicketRow[]> {
    // SKIP LOCKED: two processes claiming at once each take different tickets instead of waiting on each other.
    const { rows } = await this.db.query<TicketDbRow>(
      `UPDATE tickets SET lease_owner = $1, lease_until = $2
       WHERE test_id IN (SELECT test_id FROM tickets WHERE ${TICKET_DUE} AND next_attempt_at <= $3 AND lease_until <= $3
                         ORDER BY next_attempt_at, test_id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [owner, now + leaseMs, now, limit],
    )
    return rows.map(ticketFromRow).sort((a, b) => a.testId.localeCompare(b.testId))
  }

  async recordSync(testId: string, owner: string, o: TicketSyncOutcome): Promise<boolean> {
    const res = o.ok
      ? await this.db.query(
          `UPDATE tickets SET key = $1, url = $2, actual = $3, attempts = 0, last_error = NULL, lease_owner = NULL,
             lease_until = 0, updated_at = $4,
             pending_comment = CASE WHEN pending_comment = $5 THEN NULL ELSE pending_comment END
           WHERE test_id = $6 AND lease_owner = $7`,
          [o.key, o.url, o.actual, o.at, o.sentComment, testId, owner],
        )
      : await this.db.query(
          `UPDATE tickets SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2, lease_owner = NULL,
             lease_until = 0, updated_at = $3
           WHERE test_id = $4 AND lease_owner = $5`,
          [o.error, o.nextAttemptAt, o.at, testId, owner],
        )
    return (res.rowCount ?? 0) > 0
  }

  async get(testId: string): Promise<TicketRow | null> {
    const { rows } = await this.db.query<TicketDbRow>('SELECT * FROM tickets WHERE test_id = $1', [testId])
    return rows[0] ? ticketFromRow(rows[0]) : null
  }

  async list(filter: { limit?: number } = {}): Promise<TicketRow[]> {
    const limit = Math.min(filter.limit ?? MAX_TICKET_PAGE, MAX_TICKET_PAGE)
    const { rows } = await this.db.query<TicketDbRow>(
      'SELECT * FROM tickets ORDER BY updated_at DESC, test_id LIMIT $1',
      [limit],
    )
    return rows.map(ticketFromRow)
  }
}
