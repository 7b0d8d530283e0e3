import { isTrustedDuration } from './timestamps.js'
import type { ParsedCase } from './types.js'
import { EARLIEST_TRUSTED_TIME, MAX_DURATION_MS, MAX_FUTURE_SKEW_MS } from '../limits.js'
import type { Attempt, RunMeta } from '../model.js'
import type { IngestWarnings } from './warnings.js'

const durationWarning = (n: number, first: number | string) =>
  `${n} duration(s) not a finite non-negative decimal number of at most ${MAX_DURATION_MS / 3_600_000} h ` +
  `(first: ${first}); stored as unknown`

function noteDuration(warnings: IngestWarnings | undefined, ms: number | null): null {
  warnings?.add('duration', String(ms), durationWarning)
  return null
}

/**
 * The case with every untrusted duration (NaN from `0x10`, negative, Infinity from `1e308`, over a week) made
 * null, each noted in `warnings`. Returns the same object when nothing needed changing, the common case.
 * @example trustCase({ ...c, durationMs: NaN }).durationMs // null
 */
export function trustCase(c: ParsedCase, warnings?: IngestWarnings): ParsedCase {
  let attempts = c.attempts
  for (let i = 0; i < c.attempts.length; i++) {
    const a = c.attempts[i]!
    if (isTrustedDuration(a.durationMs)) continue
    if (attempts === c.attempts) attempts = c.attempts.slice()
    attempts[i] = { ...a, durationMs: noteDuration(warnings, a.durationMs) } satisfies Attempt
  }
  if (isTrustedDuration(c.durationMs)) return attempts === c.attempts ? c : { ...c, attempts }
  return { ...c, durationMs: noteDuration(warnings, c.durationMs), attempts }
}

/**
 * The run with times that cannot be true replaced: a start or finish more than a day after the moment of ingest,
 * or before 2000, becomes the ingest time (so one bad report cannot push the analysis window), and an
 * untrusted duration becomes null. Each replacement is noted in `warnings`.
 * @example trustRun({ ...run, startedAt: '9999-12-31T00:00:00Z' }, Date.now()).startedAt // now
 */
export function trustRun(run: RunMeta, now: number, warnings?: IngestWarnings): RunMeta {
  let out = run
  for (const field of ['startedAt', 'finishedAt'] as const) {
    const value = run[field]
    if (value === null) continue
    const ms = Date.parse(value)
    if (ms >= EARLIEST_TRUSTED_TIME && ms <= now + MAX_FUTURE_SKEW_MS) continue
    const why = ms > now ? 'more than a day after ingest' : 'before 2000'
    warnings?.add(`run.${field}`, value, (n, first) => `run ${field} ${first} is ${why}; the ingest time is used`)
    out = { ...out, [field]: new Date(now).toISOString() }
  }
  if (!isTrustedDuration(run.durationMs)) {
    warnings?.add(
      'run.durationMs',
      String(run.durationMs),
      (n, first) => `run duration ${first} ms is not plausible; stored as unknown`,
    )
    out = { ...out, durationMs: null }
  }
  return out
}
