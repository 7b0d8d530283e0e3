import { createHash } from 'node:crypto'
import type { NotificationEvent, RuleState, RuleStateChanges } from '../store/notifications.js'
import type { QuarantineRule } from '../store/store.js'
import { eventId } from './detect.js'

/** A quarantine rule created, replaced or deleted since the last look. */
export interface RuleChange {
  /** Stable for one change, whoever sees it (see `eventId`). */
  id: string
  event: Extract<NotificationEvent, 'rule_created' | 'rule_replaced' | 'rule_deleted'>
  ruleId: string
  /** The rule now; null once deleted. */
  rule: QuarantineRule | null
}

export interface RuleDetectResult {
  changes: RuleChange[]
  states: RuleStateChanges
}

/** Everything a person can change in a rule: a replacement with the same content is no change. */
export function ruleDigest(r: QuarantineRule): string {
  const content = [r.match, r.reason, r.owner, r.issueUrl, r.expiresAt, r.createdAt, r.createdBy]
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 32)
}

/** The subject of a rule's events where a test id would be (the delivery log's `test` column). */
export const ruleSubject = (ruleId: string) => `rule:${ruleId}`

/**
 * Compares the rules as last recorded with the rules now, as `detectChanges` does for tests. Pure: the caller
 * saves `states` with the deliveries in one transaction. A first look (`baseline`) records every rule and
 * announces nothing.
 * @example detectRuleChanges(new Map(), rules, { now: Date.now(), baseline: false })
 */
export function detectRuleChanges(
  previous: ReadonlyMap<string, RuleState>,
  current: readonly QuarantineRule[],
  opts: { now: number; baseline: boolean },
): RuleDetectResult {
  const at = new Date(opts.now).toISOString()
  const changes: RuleChange[] = []
  const put: RuleState[] = []
  const seen = new Set<string>()
  for (const rule of current) {
    seen.add(rule.id)
    const digest = ruleDigest(rule)
    const prev = previous.get(rule.id)
    if (prev?.digest === digest) continue
    put.push({ ruleId: rule.id, digest, updatedAt: at })
    if (opts.baseline) continue
    const subject = ruleSubject(rule.id)
    changes.push(
      prev
        ? {
            id: eventId('rule_replaced', subject, `${prev.digest}>${digest}`),
            event: 'rule_replaced',
            ruleId: rule.id,
            rule,
          }
        : { id: eventId('rule_created', subject, digest), event: 'rule_created', ruleId: rule.id, rule },
    )
  }
  const remove: string[] = []
  for (const prev of previous.values()) {
    if (seen.has(prev.ruleId)) continue
    remove.push(prev.ruleId)
    if (opts.baseline) continue
    const id = eventId('rule_deleted', ruleSubject(prev.ruleId), prev.digest)
    changes.push({ id, event: 'rule_deleted', ruleId: prev.ruleId, rule: null })
  }
  return { changes, states: { put, remove } }
}
