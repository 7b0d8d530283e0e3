import type { IngestLimits } from '../limits.js'
import type { Attempt, EnvFacets, ResultStatus, RunMeta } from '../model.js'

/**
 * One test case as a parser read it, before it is given a suite and a test id.
 * `module` is the classname, the file or the describe path; `name` is the test's own title.
 */
export interface ParsedCase {
  module: string
  name: string
  file: string | null
  /** The module is a label, not the file or class (see `TestRef.moduleIsLabel`). */
  moduleIsLabel?: boolean
  status: ResultStatus
  /** True when the report itself says the test passed only after failing (Surefire flakyFailure, Playwright `flaky`). */
  flakyOnRetry: boolean
  durationMs: number | null
  errorType: string | null
  message: string | null
  stack: string | null
  healingOccurred: boolean
  /** Every attempt the report knows of, in order. Empty means "one attempt, the final result". */
  attempts: Attempt[]
  /**
   * Facets that belong to this case's execution rather than to the whole report (a Playwright project).
   * Ingest splits a report whose cases carry different facets into one run per facet set.
   */
  env?: EnvFacets
  /**
   * The case's place in its run's execution order (0 first), when the format says more than the order it lists
   * cases in: start times, or a reporter that saw tests start. Absent: the report's own order is taken.
   */
  position?: number | null
}

/** What a report says about its run (timestamps, host, CI ids). Ingest merges it under the CLI flags and CI env. */
export type ReportRunMeta = Partial<Omit<RunMeta, 'env'>> & { env?: EnvFacets }

export interface ParsedReport {
  format: string
  cases: ParsedCase[]
  meta: ReportRunMeta
  /**
   * What the parser did not take at the report's word, worded for the user (at most a few lines per report: a CTRF
   * file that is not schema-valid gives one). The report is still stored.
   */
  warnings?: string[]
}

/** A report to parse: its name for error messages and its content. */
export interface ReportSource {
  /** The file path (or upload name) used in error messages. */
  name: string
  /** The content as UTF-8 chunks, for streaming parsers. */
  chunks(): AsyncIterable<string>
  /** The whole content. */
  text(): Promise<string>
}

export type Parser = (source: ReportSource) => Promise<ParsedReport>

/** What a parser is told besides its input. */
export interface ParseOptions {
  /** Bounds on counts from the report; defaults from `src/limits.ts`. */
  limits?: IngestLimits
}

/**
 * A report being parsed, streaming: its cases arrive in chunks, so memory follows the chunk, never the report.
 * `meta` is filled in as parsing goes (some writers state the run's start after its first test) and is complete
 * once `cases` is exhausted. Repeated cases of one identity are NOT folded here; the store folds them (see
 * `Store.ingestStream`), because a repeat may come long after the first occurrence was written.
 */
export interface ParsedStream {
  format: string
  cases: AsyncIterable<ParsedCase[]>
  meta: ReportRunMeta
  /** As {@link ParsedReport.warnings}; complete once `cases` is exhausted. */
  warnings?: string[]
}

/** A streaming parser: returns at once; parsing happens as `cases` is iterated, and errors surface there. */
export type StreamParser = (source: ReportSource, opts?: ParseOptions) => ParsedStream
