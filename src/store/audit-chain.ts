import { createHash } from 'node:crypto'
import { InputError } from '../errors.js'

/** The hash the first audit entry chains to. */
export const AUDIT_GENESIS = '0'.repeat(64)

/**
 * What an audit entry is about. Every audited action goes into one chain (`audit_log`), told apart by its kind,
 * so that one head (count and last hash) anchors them all. A new audited action adds its kind here.
 * - `quarantine`: a test quarantined, updated, released or expired (`subject` is the test id);
 * - `rule`: a quarantine rule created, replaced or removed (`subject` is the rule id);
 * - `audit`: the chain itself, such as the migration that moved the older per-table trails into it;
 * - `test`: test ids merged or a name split from its test by hand (`subject` is the test id merged away, or the
 *   name split).
 */
export const AUDIT_KINDS = ['quarantine', 'rule', 'audit', 'test'] as const
export type AuditKind = (typeof AUDIT_KINDS)[number]

/** One audited action, as its caller describes it. */
export interface AuditLogInput {
  kind: AuditKind
  /** What was acted on: a test id, a rule id. */
  subject: string
  /** What was done (`quarantine`, `release`, `merge`, …). */
  action: string
  /** Who did it: a token's name, `FLAKEWATCH_ACTOR`, `auto`. */
  actor: string
  /** When (ISO 8601). */
  at: string
  reason: string
  /** How the change came about, where the kind has one (a quarantine's `auto` or `manual`). */
  source: string | null
  /** The state after the change, as JSON (null after a removal). */
  data: unknown
}

/** An audit entry as stored: its position in the chain, the link to its predecessor and its own hash. */
export interface ChainedAuditEntry extends AuditLogInput {
  id: number
  prevHash: string
  hash: string
}

/** Where a chain ends: how many entries it holds and the hash of the last (the genesis hash when empty). */
export interface AuditHead {
  count: number
  hash: string
}

/** JSON with object keys sorted, so that a store that reorders keys hashes like one that keeps them. */
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
 * @example const hash = auditHash(AUDIT_GENESIS, { kind: 'quarantine', subject: testId, action: 'quarantine', actor: 'ci', at, reason, source: 'auto', data: record })
 */
export function auditHash(prevHash: string, e: AuditLogInput): string {
  const fields = [e.kind, e.subject, e.action, e.actor, e.at, e.reason, e.source ?? null, e.data ?? null]
  return createHash('sha256').update(prevHash).update('\n').update(canonical(fields)).digest('hex')
}

/** The fields the quarantine-only trail of schema 0003-0012 hashed (`quarantine_audit`), to check it once more. */
export interface LegacyAuditFields {
  testId: string
  action: string
  actor: string
  at: string
  reason: string
  source: string | null
  record: unknown
}

/** The hash of the quarantine-only trail that `audit_log` replaced; only the migration to `audit_log` reads it. */
export function legacyAuditHash(prevHash: string, e: LegacyAuditFields): string {
  const fields = [e.testId, e.action, e.actor, e.at, e.reason, e.source ?? null, e.record ?? null]
  return createHash('sha256').update(prevHash).update('\n').update(canonical(fields)).digest('hex')
}

/** `42:9f86…`: a head as one token, to print in a CI log and pass back to `audit verify --expect`. */
export function formatAuditHead(head: AuditHead): string {
  return `${head.count}:${head.hash}`
}

const HEAD_PATTERN = /^(\d{1,15}):([0-9a-f]{64})$/

/**
 * Reads a head written by {@link formatAuditHead}, throwing an InputError that shows the expected shape.
 * @example parseAuditHead('0:' + AUDIT_GENESIS) // { count: 0, hash: AUDIT_GENESIS }
 */
export function parseAuditHead(text: string): AuditHead {
  const m = HEAD_PATTERN.exec(text.trim().toLowerCase())
  if (!m) {
    throw new InputError(
      `audit head "${text.slice(0, 80)}": expected <count>:<sha256 hex>, as printed by \`flakewatch audit head\``,
    )
  }
  return { count: Number(m[1]), hash: m[2]! }
}

export interface AuditVerification {
  ok: boolean
  /** Entries checked, oldest first (up to and including the first bad one). */
  checked: number
  /** The head of the chain as read (meaningful when ok). */
  head: AuditHead
  /** The first entry whose content or link does not match, with what is wrong. */
  firstBad: { id: number; kind: string; subject: string; at: string; problem: string } | null
  /** What is wrong with the end of the chain: entries removed after the last one, or a head that does not match. */
  endProblem: string | null
}

export interface VerifyAuditOptions {
  /** The head the store recorded at its last append: the chain must end exactly there. */
  recorded?: AuditHead
  /** A head anchored outside the store (a CI log): the chain must still pass through it. */
  expect?: AuditHead
}

/** What the migration into one chain found of the older quarantine trail (see {@link AuditKind} `audit`). */
export interface LegacyTrailFinding {
  entries: number
  intact: boolean
  first_bad_id: number | null
}

/**
 * Walks the chain oldest first and reports the first entry that does not match, then whether the chain ends
 * where the store recorded and passes through the anchored head. Pure: it only consumes the entries.
 * @example const v = await verifyAuditChain(readAuditChain(store), { recorded: await store.auditHead() })
 */
export async function verifyAuditChain(
  entries: Iterable<ChainedAuditEntry> | AsyncIterable<ChainedAuditEntry>,
  opts: VerifyAuditOptions = {},
): Promise<AuditVerification> {
  let prev = AUDIT_GENESIS
  let checked = 0
  let expectSeen = opts.expect?.count === 0 ? opts.expect.hash === AUDIT_GENESIS : false
  const result = (firstBad: AuditVerification['firstBad'], endProblem: string | null): AuditVerification => ({
    ok: !firstBad && !endProblem,
    checked,
    head: { count: checked, hash: prev },
    firstBad,
    endProblem,
  })
  for await (const e of entries) {
    checked++
    const bad = (problem: string) => result({ id: e.id, kind: e.kind, subject: e.subject, at: e.at, problem }, null)
    if (!e.hash || !e.prevHash) return bad('the entry has no hash')
    if (e.prevHash !== prev) {
      return bad('its link does not match the previous entry (an entry before it was removed, added or reordered)')
    }
    if (auditHash(prev, e) !== e.hash) return bad('its content does not match its hash (the entry was edited)')
    const legacy = legacyProblem(e)
    if (legacy) return bad(legacy)
    prev = e.hash
    if (opts.expect && checked === opts.expect.count) {
      if (e.hash !== opts.expect.hash) {
        return bad(
          `the anchored head ${formatAuditHead(opts.expect)} ends here with another hash: the chain up to it was rewritten`,
        )
      }
      expectSeen = true
    }
  }
  if (opts.expect && !expectSeen) {
    if (opts.expect.count === 0) return result(null, 'the anchored head of an empty chain has another hash')
    return result(
      null,
      `the chain has ${checked} entries, but the anchored head ${formatAuditHead(opts.expect)} counts ${opts.expect.count}: entries were removed from its end`,
    )
  }
  const r = opts.recorded
  if (r && (r.count !== checked || r.hash !== prev)) {
    const what =
      r.count > checked
        ? `${r.count - checked} entries were removed from its end`
        : r.count < checked
          ? `${checked - r.count} entries were added without going through the store`
          : 'its last entry was replaced'
    return result(
      null,
      `the store recorded ${r.count} entries ending in ${r.hash.slice(0, 12)}…, the chain has ${checked}: ${what}`,
    )
  }
  return result(null, null)
}

/** A migration entry that found the older quarantine trail already broken passes that finding on. */
function legacyProblem(e: ChainedAuditEntry): string | null {
  if (e.kind !== 'audit' || e.action !== 'migrate') return null
  const q = (e.data as { quarantine_audit?: LegacyTrailFinding } | null)?.quarantine_audit
  if (!q || q.intact) return null
  return `the quarantine audit trail moved into this chain was already broken at its entry ${q.first_bad_id} before the move`
}

/** The slice of a store that reads the chain. */
export interface AuditChainReader {
  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]>
}

/** Entries read per query while walking the chain, so that memory follows the page, not the chain. */
export const AUDIT_CHAIN_PAGE = 1000

/**
 * The whole chain, oldest first, read a page at a time.
 * @example for await (const e of readAuditChain(store)) console.log(e.id, e.kind, e.subject)
 */
export async function* readAuditChain(
  store: AuditChainReader,
  pageSize = AUDIT_CHAIN_PAGE,
): AsyncGenerator<ChainedAuditEntry> {
  let after = 0
  for (;;) {
    const page = await store.auditChainPage(after, pageSize)
    yield* page
    if (page.length < pageSize) return
    after = page[page.length - 1]!.id
  }
}
