import type { PgClient, PgQueryable } from './driver.js'
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

/** The notification tables of a PostgreSQL store. */
export class PostgresNotificationStore implements NotificationStore {
  constructor(
    private readonly db: PgQueryable,
    private readonly transaction: <T>(fn: (client: PgClient) => Promise<T>) => Promise<T>,
  ) {}

  async listStates(): Promise<TestState[]> {
    const { rows } = await this.db.query<StateRow>('SELECT * FROM notification_state')
    return rows.map(stateFromRow)
  }

  async listRuleStates(): Promise<RuleState[]> {
    const { rows } = await this.db.query<RuleStateRow>('SELECT * FROM notification_rule_state')
    return rows.map(ruleStateFromRow)
  }

  recordChanges(states: TestState[], deliveries: NewDelivery[], rules?: RuleStateChanges): Promise<number> {
    return this.transaction(async (client) => {
      for (const r of rules?.put ?? []) {
        await client.query(
          `INSERT INTO notification_rule_state (rule_id, digest, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (rule_id) DO UPDATE SET digest = EXCLUDED.digest, updated_at = EXCLUDED.updated_at`,
          [r.ruleId, r.digest, r.updatedAt],
        )
      }
      if (rules?.remove.length) {
        await client.query('DELETE FROM notification_rule_state WHERE rule_id = ANY($1::text[])', [rules.remove])
      }
      for (const s of states) {
        await client.query(
          `INSERT INTO notification_state (test_id, verdict, quarantined, expiry_warned_for, updated_at)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (test_id) DO UPDATE SET verdict = EXCLUDED.verdict, quarantined = EXCLUDED.quarantined,
             expiry_warned_for = EXCLUDED.expiry_warned_for, updated_at = EXCLUDED.updated_at`,
          [s.testId, s.verdict, s.quarantined, s.expiryWarnedFor, s.updatedAt],
        )
      }
      let added = 0
      for (const d of deliveries) {
        const r = await client.query(
          `INSERT INTO webhook_deliveries (event_id, webhook, event, test_id, body, status, attempts, created_at, next_attempt_at)
           VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7) ON CONFLICT (webhook, event_id) DO NOTHING`,
          [d.eventId, d.webhook, d.event, d.testId, d.body, d.createdAt, d.nextAttemptAt],
        )
        added += r.rowCount ?? 0
      }
      return added
    })
  }

  async claimDue(now: number, leaseMs: number, limit: number, webhooks: WebhookSelection): Promise<Delivery[]> {
    // SKIP LOCKED: two servers claiming at once each take different deliveries instead of waiting on each other.
    const { rows } = await this.db.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET next_attempt_at = $2
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1
                      AND ${webhooks.except ? 'NOT ' : ''}(webhook = ANY($4::text[]))
                    ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [now, now + leaseMs, limit, webhooks.names],
    )
    return rows.map(deliveryFromRow).sort((a, b) => a.id - b.id)
  }

  async recordAttempt(id: number, o: AttemptOutcome): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, last_attempt_at = $2, last_status = $3,
         last_error = $4, next_attempt_at = $5, delivered_at = CASE WHEN $1 = 'delivered' THEN $2 ELSE delivered_at END
       WHERE id = $6`,
      [o.status, o.at, o.httpStatus, o.error, o.nextAttemptAt, id],
    )
  }

  async listDeliveries(filter: DeliveryFilter = {}): Promise<Delivery[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.status) {
      params.push(filter.status)
      where.push(`status = $${params.length}`)
    }
    if (filter.webhook) {
      params.push(filter.webhook)
      where.push(`webhook = $${params.length}`)
    }
    params.push(Math.min(filter.limit ?? 100, MAX_DELIVERY_LOG_PAGE))
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY id DESC LIMIT $${params.length}`,
      params,
    )
    return rows.map(deliveryFromRow)
  }
}
