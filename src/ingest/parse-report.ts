import { ReportParseError } from '../errors.js'
import { MAX_NAME } from '../limits.js'
import { DETECT_HEAD_CHARS, detectFormat } from './detect.js'
import { FORMATS, type Format } from './formats.js'
import { mergeRepeatedCases } from './merge-attempts.js'
import { watchTimestamps } from './timestamps.js'
import { trustCase } from './trust.js'
import { collectReport, streamWhole } from './collect.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportSource, StreamParser } from './types.js'
import { DOCTYPE_REFUSED, doctypeLine } from './xml-stream.js'

/**
 * Each parser is loaded on first use: a CI gate reading JUnit never pays for the JSON parsers and their schemas.
 * `PARSERS` in `index.ts` is the same registry, loaded eagerly, for library users. JUnit, TRX, NUnit, xUnit.net
 * and the line formats (Go, TAP, Bazel events) stream case by case; the JSON document formats are parsed whole and handed on in chunks (JSON is bounded by its byte limit).
 */
const LOADERS: Record<Format, () => Promise<StreamParser>> = {
  junit: async () => (await import('./junit.js')).streamJunit,
  trx: async () => (await import('./trx.js')).streamTrx,
  ctrf: async () => streamWhole('ctrf', (await import('./ctrf.js')).parseCtrf),
  'playwright-json': async () =>
    streamWhole('playwright-json', (await import('./playwright-json.js')).parsePlaywrightJson),
  'jest-json': async () => streamWhole('jest-json', (await import('./jest-json.js')).parseJestJson),
  'simple-json': async () => streamWhole('simple-json', (await import('./simple-json.js')).parseSimpleJson),
  'go-json': async () => (await import('./go-json.js')).streamGoJson,
  tap: async () => (await import('./tap.js')).streamTap,
  nunit: async () => (await import('./nunit.js')).streamNunit,
  xunit: async () => (await import('./xunit.js')).streamXunit,
  'bazel-bep': async () => (await import('./bazel-bep.js')).streamBazelBep,
  'mocha-json': async () => streamWhole('mocha-json', (await import('./mocha-json.js')).parseMochaJson),
  mochawesome: async () => streamWhole('mochawesome', (await import('./mocha-json.js')).parseMochawesome),
  'rspec-json': async () => streamWhole('rspec-json', (await import('./rspec-json.js')).parseRspecJson),
  'cucumber-json': async () => streamWhole('cucumber-json', (await import('./cucumber-json.js')).parseCucumberJson),
  'cucumber-messages': async () => (await import('./cucumber-messages.js')).streamCucumberMessages,
  'pytest-json': async () => streamWhole('pytest-json', (await import('./pytest-json.js')).parsePytestJson),
}

export interface ParseReportOptions extends ParseOptions {
  /** Skip detection and parse as this format. */
  format?: Format
}

/** Looked at for NUL bytes and undecodable bytes before anything tries to parse a file. */
const BINARY_PROBE_CHARS = 1024

/**
 * Reads one report whole: {@link streamReport}, every case collected, repeated cases folded into attempts
 * ({@link mergeRepeatedCases}) and every case given at least one attempt.
 * Every failure is a {@link ReportParseError} naming the file.
 * @example const report = await parseReport(sourceFromFile('reports/junit.xml'))
 */
export async function parseReport(source: ReportSource, opts: ParseReportOptions = {}): Promise<ParsedReport> {
  const parsed = await collectReport(await streamReport(source, opts))
  const trusted = parsed.cases.map((c) => trustCase(c))
  return { ...parsed, cases: mergeRepeatedCases(trusted).map(withAttempt) }
}

/**
 * Opens one report for streaming: refuses empty and binary files, detects the format from the content (unless
 * given) and returns the format's streaming parser over it. Cases are not folded (the store folds repeats).
 * @example for await (const chunk of (await streamReport(sourceFromFile('junit.xml'))).cases) use(chunk)
 */
export async function streamReport(source: ReportSource, opts: ParseReportOptions = {}): Promise<ParsedStream> {
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
  const parser = await LOADERS[format]()
  const stream = watchTimestamps(() => parser(source, opts))
  return { ...stream, cases: namesWithinLimit(source.name, stream.cases), format }
}

/**
 * Refuses a case whose name, module or file is longer than {@link MAX_NAME}, whatever the format: the streamed
 * parsers check as they read (and name the line), the JSON ones (mocha, mochawesome, RSpec, CTRF, Playwright, Jest,
 * simple JSON) leave it to this one place. Found by bench/fuzz.mjs: a 70,000-character `file` in mocha's JSON was
 * handed on.
 */
async function* namesWithinLimit(
  file: string,
  chunks: AsyncIterable<ParsedCase[]>,
): AsyncGenerator<ParsedCase[], void, undefined> {
  for await (const chunk of chunks) {
    for (const c of chunk) {
      for (const [what, value] of [
        ['name', c.name],
        ['module', c.module],
        ['file', c.file],
      ] as const) {
        if (value && value.length > MAX_NAME) {
          throw new ReportParseError(
            file,
            undefined,
            `test ${what} is ${value.length} characters long (limit ${MAX_NAME})`,
          )
        }
      }
    }
    yield chunk
  }
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
