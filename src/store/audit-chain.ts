import { createHash } from 'node:crypto'
import type { AuditEntry } from './store.js'

/** The hash the first audit entry chains to. */
export const AUDIT_GENESIS = '0'.repeat(64)

/** An audit entry as stored, with the link to its predecessor and its own hash. */
export interface ChainedAuditEntry extends AuditEntry {
  prevHash: string | null
  hash: string | null
}

/** The fields an audit hash covers: everything but the row id, so that an entry hashes before it is inserted. */
export type HashedAuditFields = Omit<AuditEntry, 'id'>

/** JSON with object keys sorted, so that PostgreSQL's jsonb (which reorders keys) hashes like SQLite's text. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`
}

/**
 * sha256 over the previous entry's hash and this entry's fields. Each entry commits to the whole history before
 * it, so an edited, removed, inserted or reordered entry breaks every link after it.
 * @example const hash = auditHash(AUDIT_GENESIS, { testId, action: 'quarantine', actor: 'ci', at, reason, source, record })
 */
export function auditHash(prevHash: string, e: HashedAuditFields): string {
  const fields = [e.testId, e.action, e.actor, e.at, e.reason, e.source ?? null, e.record ?? null]
  return createHash('sha256').update(prevHash).update('\n').update(canonical(fields)).digest('hex')
}

export interface AuditVerification {
  ok: boolean
  /** Entries checked, oldest first. */
  checked: number
  /** The first entry whose content or link does not match, with what is wrong. */
  firstBad: { id: number; testId: string; at: string; problem: string } | null
}

/** Walks the chain oldest first and reports the first entry that does not match. Pure. */
export function verifyAuditChain(entries: Iterable<ChainedAuditEntry>): AuditVerification {
  let prev = AUDIT_GENESIS
  let checked = 0
  for (const e of entries) {
    checked++
    const bad = (problem: string): AuditVerification => ({
      ok: false,
      checked,
      firstBad: { id: e.id, testId: e.testId, at: e.at, problem },
    })
    if (e.hash === null || e.prevHash === null) return bad('the entry has no hash')
    if (e.prevHash !== prev) {
      return bad('its link does not match the previous entry (an entry before it was removed, added or reordered)')
    }
    if (auditHash(prev, e) !== e.hash) return bad('its content does not match its hash (the entry was edited)')
    prev = e.hash
  }
  return { ok: true, checked, firstBad: null }
}
