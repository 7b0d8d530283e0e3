import { z } from 'zod'
import { ReportLimitError } from '../errors.js'
import { resolveIngestLimits } from '../limits.js'
import type { Attempt, ResultStatus } from '../model.js'
import { truncateText } from './bounded-text.js'
import { rspecFile } from './ci-path.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import type { ParsedCase, ParsedReport, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/*
 * RSpec's `--format json` (RSpec::Core::Formatters::JsonFormatter): { version, seed, examples: [{ id,
 * description, full_description, status, file_path, line_number, run_time, pending_message, exception: { class,
 * message, backtrace } }], summary, summary_line }. Read whole (≤256 MB).
 * rspec-retry (NoRedInk/rspec-retry, lib/rspec/retry.rb) keeps, in each example's metadata, `retry_attempts`: the
 * failed tries before the last one, set before every try, and `retry_exceptions`: the exception of every failed
 * try. The JSON formatter writes no metadata; a formatter that adds these two keys to an example is read.
 */
type RspecStatus = 'passed' | 'failed' | 'pending'

const STATUS: Record<RspecStatus, ResultStatus> = { passed: 'passed', failed: 'failed', pending: 'skipped' }

interface RspecExample {
  description: string
  full_description: string
  status: RspecStatus
  file_path?: string | null
  run_time?: number | null
  pending_message?: string | null
  exception?: { class?: string | null; message?: string | null; backtrace?: string[] | null } | null
  retry_attempts?: number | null
  retry_exceptions?: unknown[] | null
}

const schema = z.object({
  examples: z.array(
    z.object({
      description: z.string(),
      full_description: z.string(),
      status: z.enum(['passed', 'failed', 'pending']),
      file_path: z.string().nullish(),
      run_time: z.number().nullish(),
      pending_message: z.string().nullish(),
      exception: z
        .object({
          class: z.string().nullish(),
          message: z.string().nullish(),
          backtrace: z.array(z.string()).nullish(),
        })
        .nullish(),
      retry_attempts: z.number().int().nonnegative().nullish(),
      retry_exceptions: z.array(z.unknown()).nullish(),
    }),
  ),
  summary: z.object({ duration: z.number().nullish() }).nullish(),
})

/**
 * Parses RSpec's JSON. Module = the spec file (`spec/models/cart_spec.rb`, without `./`), name = the full
 * description; rspec_junit_formatter's JUnit of the same run gives the same ids (see junit.ts). rspec-retry's
 * `retry_attempts`, where a formatter wrote it, become failed attempts before the final one.
 * @example const report = await parseRspecJson(sourceFromFile('rspec.json'))
 */
export async function parseRspecJson(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'RSpec JSON')
  const max = resolveIngestLimits(opts.limits).maxAttemptsPerResult
  const cases = report.examples.map((e, i) => {
    const earlier = e.retry_attempts ?? 0
    if (earlier + 1 > max)
      throw new ReportLimitError(source.name, `examples[${i}].retry_attempts + 1`, max, earlier + 1)
    return toCase(e)
  })
  const meta: ReportRunMeta = {}
  if (typeof report.summary?.duration === 'number') meta.durationMs = Math.round(report.summary.duration * 1e6) / 1e3
  return { format: 'rspec-json', cases, meta }
}

function toCase(e: RspecExample): ParsedCase {
  const status = STATUS[e.status]
  const file = e.file_path ? rspecFile(e.file_path) : null
  const failed = status === 'failed'
  const message = failed ? text(e.exception?.message) : status === 'skipped' ? text(e.pending_message) : null
  const stack = failed
    ? text([e.exception?.class, e.exception?.message, ...(e.exception?.backtrace ?? [])].filter(Boolean).join('\n'))
    : null
  const durationMs = typeof e.run_time === 'number' ? Math.round(e.run_time * 1e6) / 1e3 : null
  const earlier = e.retry_attempts ?? 0
  const attempts: Attempt[] = []
  if (earlier > 0) {
    for (let i = 0; i < earlier; i++) {
      const ex = e.retry_exceptions?.[i]
      attempts.push({
        retry: i,
        status: 'failed',
        durationMs: null,
        message: typeof ex === 'string' ? text(ex) : null,
        stack: null,
      })
    }
    attempts.push({ retry: earlier, status, durationMs, message, stack })
  }
  const flakyOnRetry = status === 'passed' && earlier > 0
  return {
    module: file ?? '',
    name: e.full_description,
    file,
    status,
    flakyOnRetry,
    durationMs,
    errorType: failed ? (e.exception?.class ?? null) : null,
    message: flakyOnRetry ? (attempts[earlier - 1]!.message ?? null) : message,
    stack,
    healingOccurred: false,
    attempts,
  }
}

function text(value: string | null | undefined): string | null {
  if (!value) return null
  const t = stripAnsi(value).trim()
  return t === '' ? null : truncateText(t)
}
