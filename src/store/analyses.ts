import type { VerdictKind } from '../model.js'
import type { FlipClass } from '../analysis/types.js'

/**
 * Persisted analyses (docs/scaling.md, "Persisted analyses"): one row per test in `analyses`, exact for every
 * clock in `[validFrom, validUntil)` as long as the row is not stale. A write of results marks the rows of the
 * tests it touched, and of their file-mates, stale in its own transaction (`valid_until = 0`, `version + 1`); a
 * refresh claims rows that need work (a lease), analyses them outside any transaction and writes each one only if
 * its version is unchanged. Both backends share this one protocol.
 */

/** A lease on a row: no other refresh claims it until it ends. */
export const ANALYSIS_LEASE_MS = 60_000

/** What a refresh claimed: the row's test and the version its analysis must still match when written. */
export interface AnalysisClaim {
  testId: string
  version: number
}

/** The summary of a test's analysis that queries sort and filter on. */
export interface AnalysisSummary {
  verdict: VerdictKind
  score: number
  flipRate: number
  flipRateClass: FlipClass
  runs: number
  failures: number
  passRate: number | null
  lastStatus: string | null
  lastFailureAt: number | null
  firstRunAt: number | null
  lastRunAt: number | null
}

/** One row to write: the analysis of a claimed test, or null when the test has no stored results any more. */
export interface PersistedAnalysis {
  testId: string
  /** The version claimed: the write happens only if the row still has it. */
  version: number
  /** The analysis as `analyze --json` prints it (without owners), and its summary; null: no results. */
  analysis: { json: string; summary: AnalysisSummary } | null
  /** The analysis configuration it was made with (`analysisFingerprint`). */
  config: string
  asOf: number
  validFrom: number
  validUntil: number
}

/** A row read back for a clock: exact (valid at that clock, same config, not stale) or not. */
export interface AnalysisRead {
  testId: string
  suite: string
  module: string
  name: string
  file: string | null
  /** False: the row is missing, stale, of another config or not valid at the clock; analyse the test afresh. */
  exact: boolean
  /** When exact: the JSON of the analysis, or null for a test without results (nothing to print). */
  json: string | null
  verdict: VerdictKind | null
  score: number | null
  flipRate: number | null
  flipRateClass: FlipClass | null
}

/** A file of tests: what order hints compare, and what a writer's refresh goes through one at a time. */
export interface TestFile {
  suite: string
  module: string
}

/** A file of a writer's runs, with how many tests it has in all (what claiming it whole would take). */
export interface RunFile extends TestFile {
  tests: number
}

export interface AnalysisClaimOptions {
  /** The clock rows are refreshed for: a row not valid at it (stale, ended, or not begun) needs work. */
  clock: number
  /** Most rows claimed at once. */
  limit: number
  /**
   * Only rows of these files (at most {@link ANALYSIS_BATCH}), file after file: a writer's own (see `runFiles`).
   * A chunk then spans few files, so the file-mates its order hints read are few.
   */
  files?: TestFile[]
  /** Only the rows of these tests (at most {@link ANALYSIS_BATCH}): the file-mates a refresh reads anyway. */
  testIds?: string[]
}

/** The persisted analyses of a store (see the module comment). */
export interface AnalysisStore {
  /**
   * Claims up to `limit` rows that need work (stale, or not valid at `clock`) and are not leased, oldest
   * validity first, leasing them for {@link ANALYSIS_LEASE_MS}. On PostgreSQL two claims at once take different
   * rows (`FOR UPDATE SKIP LOCKED`).
   */
  claimAnalyses(opts: AnalysisClaimOptions): Promise<AnalysisClaim[]>
  /**
   * Claims rows made with another analysis configuration than `config`, as {@link claimAnalyses} does: after a
   * configuration change every row needs work, but not on every sweep (this one cannot use an index).
   */
  claimOtherConfig(config: string, limit: number): Promise<AnalysisClaim[]>
  /** Writes each row whose version is still the one claimed, and ends its lease; returns how many were written. */
  writeAnalyses(rows: PersistedAnalysis[]): Promise<number>
  /**
   * The files of the tests with results in these runs (at most {@link ANALYSIS_BATCH} runs), in order, `limit` at a
   * time after `after`: what a writer re-analyses, read a page at a time (a report may hold 150,000 files).
   */
  runFiles(runIds: string[], after: TestFile | null, limit: number): Promise<RunFile[]>
  /** The tests of the files (suite and module) of these tests, themselves included. */
  fileMates(testIds: string[]): Promise<string[]>
  /** Per-run counts of the infrastructure-failure guard, for these runs only. */
  runCounts(runIds: string[]): Promise<{ runId: string; total: number; failed: number }[]>
  /**
   * Every test (of `suite`, if given) with its row when that row is exact at `clock` for `config`: one indexed
   * pass over tests and analyses.
   */
  readAnalyses(opts: { clock: number; config: string; suite?: string }): AsyncIterable<AnalysisRead>
  /** How many tests (of `suite`) there are, and how many of them have a row exact at `clock` for `config`. */
  countExact(opts: { clock: number; config: string; suite?: string }): Promise<{ tests: number; exact: number }>
  /** How many rows are stale or need work at `clock`, and how many there are: for `/healthz` and the benches. */
  analysisBacklog(clock: number): Promise<{ rows: number; due: number }>
}

/** Most test ids one statement of the analyses concern binds at once. */
export const ANALYSIS_BATCH = 500
