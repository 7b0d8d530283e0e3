import type { VerdictKind } from '../model.js'

/** The state changes a webhook can be told about. */
export const NOTIFICATION_EVENTS = [
  'became_flaky',
  'became_broken',
  'fixed',
  'quarantined',
  'released',
  'quarantine_expiring',
  'rule_created',
  'rule_replaced',
  'rule_deleted',
] as const

/** The events about quarantine rules rather than tests: their deliveries' `testId` is `rule:<rule id>`. */
export const RULE_EVENTS: readonly NotificationEvent[] = ['rule_created', 'rule_replaced', 'rule_deleted']

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number]

/** What flakewatch last told the world about one test, so that the next look can tell what changed. */
export interface TestState {
  testId: string
  /** The last definite verdict; `insufficient_data` only for a test never judged. */
  verdict: VerdictKind
  quarantined: boolean
  /** The expiry an "about to expire" notice was already sent for. */
  expiryWarnedFor: string | null
  updatedAt: string
}

/** What was last said of one quarantine rule: a digest of its content, so that a replacement is seen. */
export interface RuleState {
  ruleId: string
  digest: string
  updatedAt: string
}

/** Rule states to save with a look's changes: new and replaced rules, and deleted ones to forget. */
export interface RuleStateChanges {
  put: RuleState[]
  remove: string[]
}

/** One event for one webhook, put in the outbox with the exact body that will be sent. */
export interface NewDelivery {
  /** Stable per transition: two processes that see the same change enqueue it once. */
  eventId: string
  webhook: string
  event: NotificationEvent
  testId: string
  body: string
  createdAt: string
  /** Epoch ms. */
  nextAttemptAt: number
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One line of the delivery log. */
export interface Delivery extends NewDelivery {
  id: number
  status: DeliveryStatus
  attempts: number
  lastAttemptAt: string | null
  lastStatus: number | null
  lastError: string | null
  deliveredAt: string | null
}

export interface AttemptOutcome {
  status: DeliveryStatus
  at: string
  httpStatus: number | null
  error: string | null
  nextAttemptAt: number
}

/** Which webhooks' deliveries to claim: these names, or every name but these. */
export interface WebhookSelection {
  names: string[]
  except?: boolean
}

export interface DeliveryFilter {
  status?: DeliveryStatus
  webhook?: string
  limit?: number
}

/**
 * The notification state and the webhook outbox. Events are written to the outbox in the same transaction as the
 * state that produced them, and leave it only on a 2xx: delivery is at least once.
 */
export interface NotificationStore {
  listStates(): Promise<TestState[]>
  listRuleStates(): Promise<RuleState[]>
  /**
   * Saves changed states (of tests, and of rules when given) and enqueues deliveries in one transaction; a
   * delivery whose (webhook, event id) is already queued is skipped. Returns how many deliveries were new.
   */
  recordChanges(states: TestState[], deliveries: NewDelivery[], rules?: RuleStateChanges): Promise<number>
  /**
   * Takes up to `limit` pending deliveries due at `now`, and pushes their next attempt `leaseMs` ahead so that
   * another process does not send them meanwhile. A process that dies holding them leaves them due again later.
   */
  claimDue(now: number, leaseMs: number, limit: number, webhooks: WebhookSelection): Promise<Delivery[]>
  recordAttempt(id: number, outcome: AttemptOutcome): Promise<void>
  /** The delivery log, newest first. */
  listDeliveries(filter?: DeliveryFilter): Promise<Delivery[]>
}

/** The columns of `webhook_deliveries`, as both backends name them. */
export interface DeliveryRow {
  id: number | string
  event_id: string
  webhook: string
  event: string
  test_id: string
  body: string
  status: string
  attempts: number
  created_at: string
  next_attempt_at: number | string
  last_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  delivered_at: string | null
}

export function deliveryFromRow(r: DeliveryRow): Delivery {
  return {
    id: Number(r.id),
    eventId: r.event_id,
    webhook: r.webhook,
    event: r.event as NotificationEvent,
    testId: r.test_id,
    body: r.body,
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    createdAt: r.created_at,
    nextAttemptAt: Number(r.next_attempt_at),
    lastAttemptAt: r.last_attempt_at,
    lastStatus: r.last_status == null ? null : Number(r.last_status),
    lastError: r.last_error,
    deliveredAt: r.delivered_at,
  }
}

export interface RuleStateRow {
  rule_id: string
  digest: string
  updated_at: string
}

export function ruleStateFromRow(r: RuleStateRow): RuleState {
  return { ruleId: r.rule_id, digest: r.digest, updatedAt: r.updated_at }
}

export interface StateRow {
  test_id: string
  verdict: string
  quarantined: number | boolean
  expiry_warned_for: string | null
  updated_at: string
}

export function stateFromRow(r: StateRow): TestState {
  return {
    testId: r.test_id,
    verdict: r.verdict as VerdictKind,
    quarantined: Boolean(r.quarantined),
    expiryWarnedFor: r.expiry_warned_for,
    updatedAt: r.updated_at,
  }
}

/** The delivery log is read a page at a time. */
export const MAX_DELIVERY_LOG_PAGE = 1_000
