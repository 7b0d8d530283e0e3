import { MAX_DURATION_MS } from '../limits.js'

/** Before this, a timestamp is a placeholder (gotestsum writes `0001-01-01T00:00:00Z`), not a real start time. */
const EARLIEST = Date.UTC(1980, 0, 1)

/** ISO 8601 date-time without a zone designator: JUnit writers (Gradle, jest-junit, Surefire) mean UTC. */
const ZONELESS_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/

/**
 * Normalises a report timestamp to an ISO 8601 UTC string, or null when absent, unparsable or a placeholder.
 * Accepts ISO 8601 (with or without zone, any fraction digits), RFC 1123 (mocha's xunit reporter) and epoch
 * numbers (milliseconds, or seconds when too small to be milliseconds, as CTRF per-test times are).
 * @example parseTimestamp('Sat, 03 Dec 2022 23:10:07 GMT') // '2022-12-03T23:10:07.000Z'
 */
export function parseTimestamp(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null
  let ms: number
  if (typeof value === 'number' || /^\d+(\.\d+)?$/.test(value)) {
    const n = Number(value)
    ms = n < 1e11 ? n * 1000 : n
  } else {
    const text = value.trim()
    ms = Date.parse(ZONELESS_ISO.test(text) ? `${text}Z` : text)
  }
  if (!Number.isFinite(ms) || ms < EARLIEST) return null
  return new Date(ms).toISOString()
}

/** A plain decimal number of seconds: no hex (`0x10`), no `Infinity`, exponent allowed (`1.5E-4`, Python's). */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * Seconds (a JUnit `time` attribute) to milliseconds. Tolerates thousands separators (`1,234.5`, written by
 * Surefire under some locales). Null when absent; NaN when present but not a decimal number (`0x10`, `NaN`), so
 * that ingest can say it did not trust it. Negative and absurd values are returned as they are, for the same.
 * @example secondsToMs('0.0021950') // 2.195
 */
export function secondsToMs(value: string | null | undefined): number | null {
  if (value === null || value === undefined) return null
  const text = value.trim().replace(/,/g, '')
  if (text === '') return null
  if (!DECIMAL.test(text)) return NaN
  return Math.round(Number(text) * 1e6) / 1e3
}

/**
 * A duration as flakewatch stores it: a finite, non-negative number of ms up to `MAX_DURATION_MS`, or unknown.
 * @example isTrustedDuration(Number.NaN) // false
 */
export function isTrustedDuration(ms: number | null): boolean {
  return ms === null || (ms >= 0 && ms <= MAX_DURATION_MS)
}
