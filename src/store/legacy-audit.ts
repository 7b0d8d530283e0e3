import {
  AUDIT_GENESIS,
  legacyAuditHash,
  type AuditLogInput,
  type LegacyAuditFields,
  type LegacyTrailFinding,
} from './audit-chain.js'

/** A row of `quarantine_audit`, the quarantine-only trail of schema 0003-0012. */
export interface LegacyQuarantineAuditRow {
  id: number | string
  test_id: string
  action: string
  actor: string
  at: string
  reason: string
  source: string | null
  record: string | Record<string, unknown> | null
  prev_hash: string | null
  hash: string | null
}

/** A row of `quarantine_rule_audit`, the rules' unchained trail of schema 0005-0012. */
export interface LegacyRuleAuditRow {
  id: number | string
  rule_id: string
  action: string
  actor: string
  at: string
  reason: string
  rule: string | null
}

const json = (v: string | Record<string, unknown> | null): unknown => (typeof v === 'string' ? JSON.parse(v) : v)

/** The fields the quarantine-only chain of schema 0003 hashed. */
export function legacyFields(r: LegacyQuarantineAuditRow): LegacyAuditFields {
  return {
    testId: r.test_id,
    action: r.action,
    actor: r.actor,
    at: r.at,
    reason: r.reason,
    source: r.source,
    record: json(r.record),
  }
}

/** Checks the old quarantine chain as it stood, so that moving it cannot launder an edit made before the move. */
function checkLegacyChain(rows: readonly LegacyQuarantineAuditRow[]): LegacyTrailFinding {
  let prev = AUDIT_GENESIS
  for (const r of rows) {
    const hash = legacyAuditHash(prev, legacyFields(r))
    if (r.prev_hash !== prev || r.hash !== hash)
      return { entries: rows.length, intact: false, first_bad_id: Number(r.id) }
    prev = hash
  }
  return { entries: rows.length, intact: true, first_bad_id: null }
}

/**
 * The entries that carry the two older trails into the one chain, in the order they happened (each trail keeps its
 * own order; ties go to the quarantine trail), followed by one `audit`/`migrate` entry that records what was moved
 * and whether the old quarantine chain was still intact. Nothing when both trails are empty. Pure.
 * @example for (const e of legacyAuditEntries(quarantineRows, ruleRows, new Date().toISOString())) append(e)
 */
export function legacyAuditEntries(
  quarantine: readonly LegacyQuarantineAuditRow[],
  rules: readonly LegacyRuleAuditRow[],
  now: string,
): AuditLogInput[] {
  if (quarantine.length === 0 && rules.length === 0) return []
  const out: AuditLogInput[] = []
  const fromQuarantine = (r: LegacyQuarantineAuditRow): AuditLogInput => ({
    kind: 'quarantine',
    subject: r.test_id,
    action: r.action,
    actor: r.actor,
    at: r.at,
    reason: r.reason,
    source: r.source,
    data: json(r.record),
  })
  const fromRule = (r: LegacyRuleAuditRow): AuditLogInput => ({
    kind: 'rule',
    subject: r.rule_id,
    action: r.action,
    actor: r.actor,
    at: r.at,
    reason: r.reason,
    source: null,
    data: json(r.rule),
  })
  let q = 0
  let r = 0
  while (q < quarantine.length || r < rules.length) {
    const takeRule = q >= quarantine.length || (r < rules.length && rules[r]!.at < quarantine[q]!.at)
    out.push(takeRule ? fromRule(rules[r++]!) : fromQuarantine(quarantine[q++]!))
  }
  const finding = checkLegacyChain(quarantine)
  out.push({
    kind: 'audit',
    subject: 'audit_log',
    action: 'migrate',
    actor: 'flakewatch',
    at: now,
    reason: `moved ${quarantine.length} quarantine and ${rules.length} rule audit entries into one chain`,
    source: null,
    data: { quarantine_audit: finding, quarantine_rule_audit: { entries: rules.length } },
  })
  return out
}
