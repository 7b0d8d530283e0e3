import { ReportParseError } from '../errors.js'
import { DETECT_HEAD_CHARS, detectFormat } from './detect.js'
import { FORMATS, type Format } from './formats.js'
import { mergeRepeatedCases } from './merge-attempts.js'
import type { ParsedCase, ParsedReport, Parser, ReportSource } from './types.js'
import { DOCTYPE_REFUSED, doctypeLine } from './xml-stream.js'

/**
 * Each parser is loaded on first use: a CI gate reading JUnit never pays for the JSON parsers and their schemas.
 * `PARSERS` in `index.ts` is the same registry, loaded eagerly, for library users.
 */
const LOADERS: Record<Format, () => Promise<Parser>> = {
  junit: async () => (await import('./junit.js')).parseJunit,
  trx: async () => (await import('./trx.js')).parseTrx,
  ctrf: async () => (await import('./ctrf.js')).parseCtrf,
  'playwright-json': async () => (await import('./playwright-json.js')).parsePlaywrightJson,
  'jest-json': async () => (await import('./jest-json.js')).parseJestJson,
  'simple-json': async () => (await import('./simple-json.js')).parseSimpleJson,
}

export interface ParseReportOptions {
  /** Skip detection and parse as this format. */
  format?: Format
}

/** Looked at for NUL bytes and undecodable bytes before anything tries to parse a file. */
const BINARY_PROBE_CHARS = 1024

/**
 * Reads one report: refuses empty and binary files, detects the format from the content (unless given), parses
 * it, folds repeated cases into attempts ({@link mergeRepeatedCases}) and gives every case at least one attempt.
 * Every failure is a {@link ReportParseError} naming the file.
 * @example const report = await parseReport(sourceFromFile('reports/junit.xml'))
 */
export async function parseReport(source: ReportSource, opts: ParseReportOptions = {}): Promise<ParsedReport> {
  const head = await readHead(source)
  if (head === '') throw new ReportParseError(source.name, undefined, 'empty file')
  const probe = head.slice(0, BINARY_PROBE_CHARS)
  // Decoding turns invalid UTF-8 into U+FFFD; a report never starts with those or with NULs.
  if (probe.includes('\u0000') || probe.includes('\uFFFD')) {
    throw new ReportParseError(source.name, undefined, 'binary file, not a test report')
  }
  const format = opts.format ?? detectFormat(head, source.name)
  const doctype = format ? null : doctypeLine(head)
  if (doctype !== null) throw new ReportParseError(source.name, doctype, DOCTYPE_REFUSED)
  if (!format) {
    throw new ReportParseError(source.name, undefined, `unknown report format; use --format <${FORMATS.join('|')}>`)
  }
  const parsed = await (await LOADERS[format]())(source)
  return { ...parsed, format, cases: mergeRepeatedCases(parsed.cases).map(withAttempt) }
}

async function readHead(source: ReportSource): Promise<string> {
  let head = ''
  for await (const chunk of source.chunks()) {
    head += chunk
    if (head.length >= DETECT_HEAD_CHARS) break
  }
  return head.slice(0, DETECT_HEAD_CHARS)
}

/** Parsers may leave `attempts` empty ("one attempt, the final result"); the store wants it spelled out. */
function withAttempt(c: ParsedCase): ParsedCase {
  if (c.attempts.length > 0) return c
  const attempt = { retry: 0, status: c.status, durationMs: c.durationMs, message: c.message, stack: c.stack }
  return { ...c, attempts: [attempt] }
}
