import { AsyncLocalStorage } from 'node:async_hooks'
import { MAX_DURATION_MS } from '../limits.js'
import type { ParsedCase, ParsedStream } from './types.js'

/** Before this, a timestamp is a placeholder (gotestsum writes `0001-01-01T00:00:00Z`), not a real start time. */
const EARLIEST = Date.UTC(1980, 0, 1)

/** The last instant a JavaScript Date can hold (year 275760); an epoch number past it is not a date. */
const LATEST_DATE_MS = 8.64e15

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
  if (!Number.isFinite(ms) || ms < EARLIEST || ms > LATEST_DATE_MS) {
    dropped.getStore()?.note(String(value), Number.isFinite(ms) && ms < EARLIEST ? 'placeholder' : 'unparsable')
    return null
  }
  return new Date(ms).toISOString()
}

/**
 * An instant as ISO 8601, or null when it is past what a Date can hold (a start near that edge plus a duration).
 * @example isoTime(Date.UTC(2026, 0, 1)) // '2026-01-01T00:00:00.000Z'
 */
export function isoTime(ms: number): string | null {
  return Number.isFinite(ms) && Math.abs(ms) <= LATEST_DATE_MS ? new Date(ms).toISOString() : null
}

/** The timestamps one report's parser ignored, counted by why, each kind with its first value. */
class DroppedTimestamps {
  private readonly kinds = new Map<'placeholder' | 'unparsable', { count: number; first: string }>()

  note(value: string, why: 'placeholder' | 'unparsable'): void {
    const k = this.kinds.get(why)
    if (k) k.count++
    else this.kinds.set(why, { count: 1, first: value.slice(0, 80) })
  }

  list(): string[] {
    return [...this.kinds].map(([why, { count, first }]) =>
      why === 'placeholder'
        ? `${count} timestamp(s) before 1980 ignored as placeholders (first: ${JSON.stringify(first)}); the run's times come from the rest of the report, else the ingest time`
        : `${count} timestamp(s) that are not a date ignored (first: ${JSON.stringify(first)}); the run's times come from the rest of the report, else the ingest time`,
    )
  }
}

/**
 * Where {@link parseTimestamp} notes what it ignores, for the report being parsed. A context rather than a
 * parameter: every parser reads timestamps, and each would otherwise thread a sink through its helpers.
 */
const dropped = new AsyncLocalStorage<DroppedTimestamps>()

/**
 * Opens a parser's stream so that every timestamp it ignores (a placeholder such as gotestsum's `0001-01-01`, or
 * text that is not a date) becomes a warning of the report, naming the first value of each kind. The warnings are
 * complete once the cases are, as `ParsedStream.warnings` are.
 * @example const stream = watchTimestamps(() => streamJunit(source))
 */
export function watchTimestamps(open: () => ParsedStream): ParsedStream {
  const sink = new DroppedTimestamps()
  const stream = dropped.run(sink, open)
  const warnings = stream.warnings ?? []
  const inner = stream.cases[Symbol.asyncIterator]()
  async function* cases(): AsyncGenerator<ParsedCase[], void, undefined> {
    try {
      for (;;) {
        // Each pull runs in the sink's context, and so does every await of the parser's body it resumes.
        const next = await dropped.run(sink, () => inner.next())
        if (next.done) break
        yield next.value
      }
    } finally {
      await inner.return?.()
    }
    for (const w of sink.list()) warnings.push(w)
  }
  return { ...stream, warnings, cases: cases() }
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
