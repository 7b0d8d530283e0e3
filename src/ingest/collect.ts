import { resolveIngestLimits, type IngestLimits } from '../limits.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/**
 * Cases per chunk a streaming parser hands on: big enough that per-chunk work (a COPY, a statement round trip)
 * is amortised, small enough that a chunk of cases with 64 KB texts stays a few MB.
 */
export const CASE_CHUNK = 2_000

/**
 * Reads a whole parsed stream into one report (for callers that want every case at once: the gate, the
 * reporters, tests). Memory follows the report here, by choice of the caller.
 * @example const report = await collectReport(streamJunit(source))
 */
export async function collectReport(stream: ParsedStream): Promise<ParsedReport> {
  const cases: ParsedCase[] = []
  // A loop, not push(...chunk): never spread an array of unknown size into arguments.
  for await (const chunk of stream.cases) for (const c of chunk) cases.push(c)
  return {
    format: stream.format,
    cases,
    meta: stream.meta,
    ...(stream.warnings?.length ? { warnings: stream.warnings } : {}),
  }
}

/**
 * A whole-document parser as a stream: the report is parsed at the first pull, then handed on in chunks. Used by
 * the formats that cannot be read case by case (the JSON formats).
 * @example export const streamCtrf = streamWhole('ctrf', parseCtrf)
 */
export function streamWhole(
  format: string,
  parse: (source: ReportSource, opts?: ParseOptions) => Promise<ParsedReport>,
): (source: ReportSource, opts?: ParseOptions) => ParsedStream {
  return (source, opts) => {
    const meta = {}
    const warnings: string[] = []
    async function* cases(): AsyncGenerator<ParsedCase[], void, undefined> {
      const report = await parse(source, opts)
      Object.assign(meta, report.meta)
      for (const w of report.warnings ?? []) warnings.push(w)
      for (let i = 0; i < report.cases.length; i += CASE_CHUNK) yield report.cases.slice(i, i + CASE_CHUNK)
    }
    return { format, meta, warnings, cases: cases() }
  }
}

/**
 * The streaming parsers' common loop: `steps` advances the parser one input chunk at a time while it pushes the
 * cases it finishes onto `out`; they are handed on once at least {@link CASE_CHUNK} have gathered, and the rest at
 * the end.
 * @example yield* chunkCases(lineSteps(), out)
 */
export async function* chunkCases(
  steps: AsyncIterable<unknown>,
  out: ParsedCase[],
): AsyncGenerator<ParsedCase[], void, undefined> {
  for await (const _ of steps) if (out.length >= CASE_CHUNK) yield out.splice(0, out.length)
  if (out.length > 0) yield out.splice(0, out.length)
}

/** A line parser's loop: advances one input chunk per step, pushing finished cases onto `out` and filling `meta`. */
export type CaseSteps = (
  source: ReportSource,
  meta: ReportRunMeta,
  out: ParsedCase[],
  limits: IngestLimits,
) => AsyncIterable<unknown>

/**
 * A streaming parser made of its loop: the meta it fills and its cases handed on in chunks ({@link chunkCases}).
 * @example export const streamBazelBep = streamSteps('bazel-bep', bepSteps)
 */
export function streamSteps(
  format: string,
  steps: CaseSteps,
): (source: ReportSource, opts?: ParseOptions) => ParsedStream {
  return (source, opts = {}) => {
    const meta: ReportRunMeta = {}
    const out: ParsedCase[] = []
    return { format, meta, cases: chunkCases(steps(source, meta, out, resolveIngestLimits(opts.limits)), out) }
  }
}
