import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { z } from 'zod'
import { InputError } from '../errors.js'
import type { QuarantineRecord, Store } from '../store/store.js'

const EntrySchema = z
  .object({
    test_id: z.string().min(1),
    reason: z.string().min(1),
    owner: z.string().nullable().optional(),
    issue: z.string().nullable().optional(),
    created_at: z.string().optional(),
    created_by: z.string().optional(),
    expires_at: z.string().nullable().optional(),
    source: z.enum(['auto', 'manual']).optional(),
  })
  .strict()

const FileSchema = z.object({ version: z.literal(1), quarantined: z.array(EntrySchema) }).strict()

export type QuarantineFileEntry = z.infer<typeof EntrySchema>

/**
 * The reviewable quarantine file: sorted by test id, keys in a fixed order and no timestamps of its own, so that
 * a change to it is a clean diff in code review.
 */
export function formatQuarantineFile(records: QuarantineRecord[]): string {
  const quarantined = [...records]
    .sort((a, b) => (a.testId < b.testId ? -1 : a.testId > b.testId ? 1 : 0))
    .map((r) => ({
      test_id: r.testId,
      reason: r.reason,
      owner: r.owner,
      issue: r.issueUrl,
      created_at: r.createdAt,
      created_by: r.createdBy,
      expires_at: r.expiresAt,
      source: r.source,
    }))
  return `${JSON.stringify({ version: 1, quarantined }, null, 2)}\n`
}

/** Parses a quarantine file. Hand-written entries may leave out everything but the id and the reason. */
export function parseQuarantineFile(text: string, file: string, now = Date.now()): QuarantineRecord[] {
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
  const seen = new Set<string>()
  return parsed.data.quarantined.map((e) => {
    if (seen.has(e.test_id)) throw new InputError(`${file}: ${e.test_id} is listed twice`)
    seen.add(e.test_id)
    if (e.expires_at && Number.isNaN(Date.parse(e.expires_at)))
      throw new InputError(`${file}: ${e.test_id}: invalid expires_at`)
    return {
      testId: e.test_id,
      reason: e.reason,
      owner: e.owner ?? null,
      issueUrl: e.issue ?? null,
      createdAt: e.created_at ?? new Date(now).toISOString(),
      createdBy: e.created_by ?? 'quarantine-file',
      expiresAt: e.expires_at ?? null,
      // A hand-added entry is a human decision: pinned until someone removes it.
      source: e.source ?? 'manual',
    }
  })
}

export function readQuarantineFile(file: string): QuarantineRecord[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`${file}: cannot read quarantine file: ${(error as Error).message}`)
  }
  return parseQuarantineFile(text, file)
}

export function writeQuarantineFile(file: string, records: QuarantineRecord[]): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, formatQuarantineFile(records))
}

const same = (a: QuarantineRecord, b: QuarantineRecord) =>
  a.reason === b.reason &&
  a.owner === b.owner &&
  a.issueUrl === b.issueUrl &&
  a.expiresAt === b.expiresAt &&
  a.source === b.source

export interface ImportResult {
  added: string[]
  updated: string[]
  removed: string[]
}

/**
 * Makes the store's quarantines match the file: additions, edits and removals are applied and audited as
 * `import`, so that a hand edit reviewed in git is carried out and traceable.
 */
export async function importQuarantineFile(
  store: Store,
  records: QuarantineRecord[],
  actor: string,
  now = Date.now(),
): Promise<ImportResult> {
  const at = new Date(now).toISOString()
  const current = new Map((await store.listQuarantines()).map((q) => [q.testId, q]))
  const result: ImportResult = { added: [], updated: [], removed: [] }
  for (const r of records) {
    const before = current.get(r.testId)
    current.delete(r.testId)
    if (before && same(before, r)) continue
    const record = before ? { ...r, createdAt: before.createdAt, createdBy: before.createdBy } : r
    await store.putQuarantine(record, { action: 'import', actor, at, reason: r.reason, source: r.source })
    ;(before ? result.updated : result.added).push(r.testId)
  }
  for (const testId of current.keys()) {
    await store.deleteQuarantine(testId, {
      action: 'import',
      actor,
      at,
      reason: 'removed from the quarantine file',
      source: null,
    })
    result.removed.push(testId)
  }
  return result
}
