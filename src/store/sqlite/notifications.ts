import type { SqliteDb } from './driver.js'
import {
  MAX_DELIVERY_LOG_PAGE,
  deliveryFromRow,
  ruleStateFromRow,
  stateFromRow,
  type AttemptOutcome,
  type Delivery,
  type DeliveryFilter,
  type DeliveryRow,
  type NewDelivery,
  type NotificationStore,
  type RuleState,
  type RuleStateChanges,
  type RuleStateRow,
  type StateRow,
  type TestState,
  type WebhookSelection,
} from '../notifications.js'

/** The notification tables of a SQLite store; writes go through the store's queue of this process's writes. */
export class SqliteNotificationStore implements NotificationStore {
  constructor(
    private readonly db: SqliteDb,
    private readonly serial: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {}

  listStates(): Promise<TestState[]> {
    const rows = this.db.prepare('SELECT * FROM notification_state').all() as StateRow[]
    return Promise.resolve(rows.map(stateFromRow))
  }

  listRuleStates(): Promise<RuleState[]> {
    const rows = this.db.prepare('SELECT * FROM notification_rule_state').all() as RuleStateRow[]
    return Promise.resolve(rows.map(ruleStateFromRow))
  }

  recordChanges(states: TestState[], deliveries: NewDelivery[], rules?: RuleStateChanges): Promise<number> {
    return this.serial(() => {
      const putRule = this.db.prepare(
        `INSERT INTO notification_rule_state (rule_id, digest, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (rule_id) DO UPDATE SET digest = excluded.digest, updated_at = excluded.updated_at`,
      )
      const forgetRule = this.db.prepare('DELETE FROM notification_rule_state WHERE rule_id = ?')
      const upsert = this.db.prepare(
        `INSERT INTO notification_state (test_id, verdict, quarantined, expiry_warned_for, updated_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (test_id) DO UPDATE SET verdict = excluded.verdict, quarantined = excluded.quarantined,
           expiry_warned_for = excluded.expiry_warned_for, updated_at = excluded.updated_at`,
      )
      const enqueue = this.db.prepare(
        `INSERT OR IGNORE INTO webhook_deliveries (event_id, webhook, event, test_id, body, status, attempts, created_at, next_attempt_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
      )
      const added = this.db
        .transaction(() => {
          for (const s of states) upsert.run(s.testId, s.verdict, s.quarantined ? 1 : 0, s.expiryWarnedFor, s.updatedAt)
          for (const r of rules?.put ?? []) putRule.run(r.ruleId, r.digest, r.updatedAt)
          for (const id of rules?.remove ?? []) forgetRule.run(id)
          let n = 0
          for (const d of deliveries) {
            n += enqueue.run(d.eventId, d.webhook, d.event, d.testId, d.body, d.createdAt, d.nextAttemptAt).changes
          }
          return n
        })
        .immediate()
      return Promise.resolve(added)
    })
  }

  claimDue(now: number, leaseMs: number, limit: number, webhooks: WebhookSelection): Promise<Delivery[]> {
    return this.serial(() => {
      const rows = this.db
        .transaction(() => {
          const due = this.db
            .prepare(
              `SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
                 AND webhook ${webhooks.except ? 'NOT IN' : 'IN'} (SELECT value FROM json_each(?))
               ORDER BY next_attempt_at, id LIMIT ?`,
            )
            .all(now, JSON.stringify(webhooks.names), limit) as DeliveryRow[]
          const lease = this.db.prepare('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?')
          for (const r of due) lease.run(now + leaseMs, r.id)
          return due
        })
        .immediate()
      return Promise.resolve(rows.map(deliveryFromRow))
    })
  }

  recordAttempt(id: number, o: AttemptOutcome): Promise<void> {
    return this.serial(() => {
      this.db
        .prepare(
          `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_status = ?,
             last_error = ?, next_attempt_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
           WHERE id = ?`,
        )
        .run(o.status, o.at, o.httpStatus, o.error, o.nextAttemptAt, o.status, o.at, id)
      return Promise.resolve()
    })
  }

  listDeliveries(filter: DeliveryFilter = {}): Promise<Delivery[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.status) {
      where.push('status = ?')
      params.push(filter.status)
    }
    if (filter.webhook) {
      where.push('webhook = ?')
      params.push(filter.webhook)
    }
    const limit = Math.min(filter.limit ?? 100, MAX_DELIVERY_LOG_PAGE)
    const rows = this.db
      .prepare(
        `SELECT * FROM webhook_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      )
      .all(...params, limit) as DeliveryRow[]
    return Promise.resolve(rows.map(deliveryFromRow))
  }
}
