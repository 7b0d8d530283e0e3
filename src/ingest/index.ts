import { ReportParseError } from '../errors.js'
import { parseCtrf } from './ctrf.js'
import { DETECT_HEAD_CHARS, detectFormat } from './detect.js'
import { parseJestJson } from './jest-json.js'
import { parseJunit } from './junit.js'
import { mergeRepeatedCases } from './merge-attempts.js'
import { parsePlaywrightJson } from './playwright-json.js'
import { parseSimpleJson } from './simple-json.js'
import { parseTrx } from './trx.js'
import { DOCTYPE_REFUSED, doctypeLine } from './xml-stream.js'
import type { ParsedCase, ParsedReport, Parser, ReportSource } from './types.js'

export { detectFormat } from './detect.js'
export { mergeRepeatedCases } from './merge-attempts.js'
export { sourceFromBuffer, sourceFromFile } from './source.js'
export type { ParsedCase, ParsedReport, Parser, ReportRunMeta, ReportSource } from './types.js'

/**
 * Every report format flakewatch reads, by the name `--format` takes.
 * @example const report = await PARSERS.junit(sourceFromFile('junit.xml'))
 */
export const PARSERS = {
  junit: parseJunit,
  trx: parseTrx,
  ctrf: parseCtrf,
  'playwright-json': parsePlaywrightJson,
  'jest-json': parseJestJson,
  'simple-json': parseSimpleJson,
} satisfies Record<string, Parser>

/** A report format name: `junit`, `trx`, `ctrf`, `playwright-json`, `jest-json` or `simple-json`. */
export type Format = keyof typeof PARSERS

/** The format names, in a stable order, for `--format` choices and messages. */
export const FORMATS = Object.keys(PARSERS) as Format[]

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
  const parsed = await PARSERS[format](source)
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
