import { parseCtrf } from './ctrf.js'
import { parseJestJson } from './jest-json.js'
import { parseJunit } from './junit.js'
import { parsePlaywrightJson } from './playwright-json.js'
import { parseSimpleJson } from './simple-json.js'
import { parseTrx } from './trx.js'
import { parseGoJson } from './go-json.js'
import { parseTap } from './tap.js'
import { parseNunit } from './nunit.js'
import { parseXunit } from './xunit.js'
import { parseBazelBep } from './bazel-bep.js'
import { parseMochaJson, parseMochawesome } from './mocha-json.js'
import { parseRspecJson } from './rspec-json.js'
import { parseCucumberJson } from './cucumber-json.js'
import { parseCucumberMessages } from './cucumber-messages.js'
import { parsePytestJson } from './pytest-json.js'
import type { Format } from './formats.js'
import type { Parser } from './types.js'

export { detectFormat } from './detect.js'
export { mergeRepeatedCases } from './merge-attempts.js'
export { sourceFromBuffer, sourceFromFile } from './source.js'
export type { ParsedCase, ParsedReport, Parser, ReportRunMeta, ReportSource } from './types.js'
export { FORMATS, type Format } from './formats.js'
export { parseReport, type ParseReportOptions } from './parse-report.js'

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
  'go-json': parseGoJson,
  tap: parseTap,
  nunit: parseNunit,
  xunit: parseXunit,
  'bazel-bep': parseBazelBep,
  'mocha-json': parseMochaJson,
  mochawesome: parseMochawesome,
  'rspec-json': parseRspecJson,
  'cucumber-json': parseCucumberJson,
  'cucumber-messages': parseCucumberMessages,
  'pytest-json': parsePytestJson,
} satisfies Record<Format, Parser>
