import { createHash } from 'node:crypto'
import { MAX_STORED_TEXT } from '../limits.js'
import type { ResultStatus } from '../model.js'

/**
 * Statuses are stored as small integers: a million results scan faster and take less disk than repeated text.
 * Both backends use this mapping, so a row means the same thing everywhere.
 */
export const STATUS_CODE: Record<ResultStatus, number> = { passed: 0, failed: 1, error: 2, skipped: 3 }

/** The code for a status; throws on anything else, so that a bad value aborts its report's transaction. */
export function statusCode(status: ResultStatus): number {
  const code = STATUS_CODE[status]
  if (code === undefined) throw new RangeError(`unknown result status "${String(status)}"`)
  return code
}

/** A failing outcome by its code: `failed` or `error` (see isFailure). */
export function isFailureCode(code: number): boolean {
  return code === STATUS_CODE.failed || code === STATUS_CODE.error
}

const STATUS_BY_CODE: readonly ResultStatus[] = ['passed', 'failed', 'error', 'skipped']

export function statusFromCode(code: number): ResultStatus {
  const s = STATUS_BY_CODE[code]
  if (!s) throw new RangeError(`unknown status code ${code}`)
  return s
}

/** Epoch ms of an ISO timestamp, or `fallback` when missing or unparsable. */
export function isoToMs(iso: string | null | undefined, fallback: number): number {
  if (!iso) return fallback
  const t = Date.parse(iso)
  return Number.isNaN(t) ? fallback : t
}

/** Messages repeat heavily across runs, so each distinct text is stored once under this key. */
export function messageKey(text: string): string {
  return createHash('sha1').update(text).digest('base64url')
}

/** Text kept per message or stack, so that one runaway log cannot bloat the store (see `src/limits.ts`). */
export const MAX_TEXT = MAX_STORED_TEXT

export function clip(text: string | null | undefined): string | null {
  if (text == null || text === '') return null
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… [truncated ${text.length - MAX_TEXT} chars]` : text
}
