import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { z } from 'zod'
import { InputError } from '../errors.js'
import type { QuarantineRecord, QuarantineRule, Store } from '../store/store.js'
import { MAX_RULES, RULE_ID_PATTERN, RuleMatchSchema, ruleMatchFromJson, ruleMatchToJson } from './rules.js'
import { validateExpiry, validateIssueUrl } from './validate.js'

/** Entries one quarantine file may hold. */
export const MAX_FILE_ENTRIES = 100_000

/** What a quarantine and a rule both carry: why, who, where it is tracked and until when. */
const decision = {
  reason: z.string().min(1),
  owner: z.string().nullable().optional(),
  issue: z.string().nullable().optional(),
  created_at: z.string().optional(),
  created_by: z.string().optional(),
  expires_at: z.string().nullable().optional(),
}

const EntrySchema = z
  .object({ test_id: z.string().min(1), ...decision, source: z.enum(['auto', 'manual']).optional() })
  .strict()

const RuleSchema = z
  .object({
    id: z.string().regex(RULE_ID_PATTERN, 'use 1-64 lowercase letters, digits, ".", "_" or "-"'),
    match: RuleMatchSchema,
    ...decision,
  })
  .strict()

const FileSchema = z
  .object({
    version: z.literal(1),
    quarantined: z.array(EntrySchema).max(MAX_FILE_ENTRIES),
    rules: z.array(RuleSchema).max(MAX_RULES).optional(),
  })
  .strict()

export type QuarantineFileEntry = z.infer<typeof EntrySchema>

/** What a quarantine file holds, and what the store holds: quarantines of single tests, and rules. */
export interface QuarantineSet {
  records: QuarantineRecord[]
  rules: QuarantineRule[]
}

const byKey =
  <T>(key: (t: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

/**
 * The reviewable quarantine file: sorted by test id (rules by id), keys in a fixed order and no timestamps of its
 * own, so that a change to it is a clean diff in code review.
 */
export function formatQuarantineFile(set: QuarantineSet): string {
  const quarantined = [...set.records].sort(byKey((r) => r.testId)).map((r) => ({
    test_id: r.testId,
    reason: r.reason,
    owner: r.owner,
    issue: r.issueUrl,
    created_at: r.createdAt,
    created_by: r.createdBy,
    expires_at: r.expiresAt,
    source: r.source,
  }))
  const rules = [...set.rules].sort(byKey((r) => r.id)).map((r) => ({
    id: r.id,
    match: ruleMatchToJson(r.match),
    reason: r.reason,
    owner: r.owner,
    issue: r.issueUrl,
    created_at: r.createdAt,
    created_by: r.createdBy,
    expires_at: r.expiresAt,
  }))
  return `${JSON.stringify({ version: 1, quarantined, rules }, null, 2)}\n`
}

/**
 * Parses a quarantine file. Hand-written entries may leave out everything but the id (or the rule's match) and the
 * reason. Issue links must be http(s) and rule patterns safe; expired entries are kept (they forgive nothing).
 */
export function parseQuarantineFile(text: string, file: string, now = Date.now()): QuarantineSet {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new InputError(`${file}: invalid JSON: ${(error as Error).message}`)
  }
  const parsed = FileSchema.safeParse(raw)
  if (!parsed.success) {
    throw new InputError(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
  }
  const created = new Date(now).toISOString()
  const checkDates = (where: string, e: { expires_at?: string | null }) => {
    if (e.expires_at && Number.isNaN(Date.parse(e.expires_at)))
      throw new InputError(`${file}: ${where}: invalid expires_at`)
  }
  const seen = new Set<string>()
  const records = parsed.data.quarantined.map((e): QuarantineRecord => {
    if (seen.has(e.test_id)) throw new InputError(`${file}: ${e.test_id} is listed twice`)
    seen.add(e.test_id)
    checkDates(e.test_id, e)
    return {
      testId: e.test_id,
      reason: e.reason,
      owner: e.owner ?? null,
      issueUrl: validateIssueUrl(e.issue, `${file}: ${e.test_id}: issue`),
      createdAt: e.created_at ?? created,
      createdBy: e.created_by ?? 'quarantine-file',
      expiresAt: e.expires_at ?? null,
      // A hand-added entry is a human decision: pinned until someone removes it.
      source: e.source ?? 'manual',
    }
  })
  const ruleIds = new Set<string>()
  const rules = (parsed.data.rules ?? []).map((r): QuarantineRule => {
    if (ruleIds.has(r.id)) throw new InputError(`${file}: rule ${r.id} is listed twice`)
    ruleIds.add(r.id)
    checkDates(`rule ${r.id}`, r)
    return {
      id: r.id,
      match: ruleMatchFromJson(r.match),
      reason: r.reason,
      owner: r.owner ?? null,
      issueUrl: validateIssueUrl(r.issue, `${file}: rule ${r.id}: issue`),
      createdAt: r.created_at ?? created,
      createdBy: r.created_by ?? 'quarantine-file',
      expiresAt: r.expires_at ?? null,
    }
  })
  return { records, rules }
}

export function readQuarantineFile(file: string): QuarantineSet {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`${file}: cannot read quarantine file: ${(error as Error).message}`)
  }
  return parseQuarantineFile(text, file)
}

export function writeQuarantineFile(file: string, set: QuarantineSet): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, formatQuarantineFile(set))
}

const same = (a: QuarantineRecord, b: QuarantineRecord) =>
  a.reason === b.reason &&
  a.owner === b.owner &&
  a.issueUrl === b.issueUrl &&
  a.expiresAt === b.expiresAt &&
  a.source === b.source

const sameRule = (a: QuarantineRule, b: QuarantineRule) =>
  JSON.stringify(ruleMatchToJson(a.match)) === JSON.stringify(ruleMatchToJson(b.match)) &&
  a.reason === b.reason &&
  a.owner === b.owner &&
  a.issueUrl === b.issueUrl &&
  a.expiresAt === b.expiresAt

export interface ImportResult {
  added: string[]
  updated: string[]
  removed: string[]
  rules: { added: string[]; updated: string[]; removed: string[] }
}

export interface ImportOptions {
  now?: number
  /** Accept quarantines of tests the store has never seen (rules never need this). */
  allowUnknown?: boolean
  /** The file's name, for errors. */
  file?: string
}

/**
 * Makes the store's quarantines and rules match the file: additions, edits and removals are applied and audited
 * as `import`, so that a hand edit reviewed in git is carried out and traceable. A new or edited entry is checked
 * as `quarantine add` checks it (future expiry, known test unless `allowUnknown`) before anything is written.
 */
export async function importQuarantineFile(
  store: Store,
  set: QuarantineSet,
  actor: string,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const now = opts.now ?? Date.now()
  const where = opts.file ?? 'quarantine file'
  const at = new Date(now).toISOString()
  const current = new Map((await store.listQuarantines()).map((q) => [q.testId, q]))
  const currentRules = new Map((await store.listQuarantineRules()).map((r) => [r.id, r]))
  const result: ImportResult = { added: [], updated: [], removed: [], rules: { added: [], updated: [], removed: [] } }

  const changed = set.records.filter((r) => !(current.has(r.testId) && same(current.get(r.testId)!, r)))
  const changedRules = set.rules.filter((r) => !(currentRules.has(r.id) && sameRule(currentRules.get(r.id)!, r)))
  // Everything is checked before anything is written, so that a refused file changes nothing.
  for (const r of changed) {
    validateExpiry(r.expiresAt, now, `${where}: ${r.testId}: expires_at`)
    if (!opts.allowUnknown && !current.has(r.testId) && !(await store.getTest(r.testId))) {
      throw new InputError(
        `${where}: ${r.testId} has never been seen in the store; check its suite and name, write it as a rule, or import with --allow-unknown`,
      )
    }
  }
  for (const r of changedRules) validateExpiry(r.expiresAt, now, `${where}: rule ${r.id}: expires_at`)

  const keep = new Set(set.records.map((r) => r.testId))
  for (const r of changed) {
    const before = current.get(r.testId)
    const record = before ? { ...r, createdAt: before.createdAt, createdBy: before.createdBy } : r
    await store.putQuarantine(record, { action: 'import', actor, at, reason: r.reason, source: r.source })
    ;(before ? result.updated : result.added).push(r.testId)
  }
  for (const testId of current.keys()) {
    if (keep.has(testId)) continue
    const audit = { action: 'import' as const, actor, at, reason: 'removed from the quarantine file', source: null }
    await store.deleteQuarantine(testId, audit)
    result.removed.push(testId)
  }
  const keepRules = new Set(set.rules.map((r) => r.id))
  for (const r of changedRules) {
    const before = currentRules.get(r.id)
    const rule = before ? { ...r, createdAt: before.createdAt, createdBy: before.createdBy } : r
    await store.putQuarantineRule(rule, { action: 'import', actor, at, reason: r.reason })
    ;(before ? result.rules.updated : result.rules.added).push(r.id)
  }
  for (const id of currentRules.keys()) {
    if (keepRules.has(id)) continue
    await store.deleteQuarantineRule(id, { action: 'import', actor, at, reason: 'removed from the quarantine file' })
    result.rules.removed.push(id)
  }
  return result
}
