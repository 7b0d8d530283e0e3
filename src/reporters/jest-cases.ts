import { parseReport } from '../ingest/parse-report.js'
import { sourceFromBuffer } from '../ingest/source.js'
import type { RecordedReport } from './build-cases.js'

/*
 * The subset of Jest's AggregatedResult (`onRunComplete`'s second argument) the reporter reads. Declared here
 * rather than imported so that flakewatch does not depend on Jest's type packages.
 */
export interface JestAssertionResult {
  ancestorTitles: string[]
  title: string
  status: string
  duration?: number | null
  failureMessages: string[]
  /** How many times the test ran (`jest.retryTimes`). */
  invocations?: number
  /** Failure messages of the tries before the last. */
  retryReasons?: string[]
}

export interface JestFileResult {
  testFilePath: string
  testResults: JestAssertionResult[]
  failureMessage?: string | null
  testExecError?: { message?: string } | null
  perfStats?: { start?: number; end?: number }
}

export interface JestAggregatedResult {
  startTime: number
  wasInterrupted?: boolean
  /** Jest derives its exit code from these after the reporters ran: quarantine enforcement clears the first. */
  numFailedTests?: number
  numRuntimeErrorTestSuites?: number
  testResults: JestFileResult[]
}

/** The name the reporter's report goes by, in parse errors and as the batch's provenance. */
export const JEST_SOURCE = 'flakewatch/jest'

/**
 * Keeps what the Jest JSON parser reads of an AggregatedResult: its own shape, which `jest --json` merely renames
 * (`testFilePath` → `name`, `testResults` → `assertionResults`) and which the parser reads as well.
 * @example toJestJson(aggregatedResult).testResults[0].testResults[0].invocations
 */
export function toJestJson(results: JestAggregatedResult) {
  return {
    startTime: results.startTime,
    testResults: results.testResults.map((f) => ({
      testFilePath: f.testFilePath,
      testResults: f.testResults.map((a) => ({
        ancestorTitles: a.ancestorTitles,
        title: a.title,
        status: a.status,
        duration: a.duration ?? null,
        failureMessages: a.failureMessages,
        invocations: a.invocations ?? null,
        retryReasons: a.retryReasons ?? null,
      })),
      failureMessage: f.failureMessage ?? null,
      testExecError: f.testExecError ? { message: f.testExecError.message ?? null } : null,
      perfStats: f.perfStats ? { start: f.perfStats.start ?? null, end: f.perfStats.end ?? null } : null,
    })),
  }
}

/**
 * Turns Jest's results into cases through the Jest JSON parser itself, so that test ids, statuses, attempts from
 * `invocations`/`retryReasons` and files that failed to run follow the one rule `flakewatch ingest` applies to
 * the same run's `--json` report.
 * @example const report = await jestReport(aggregatedResult)
 */
export async function jestReport(results: JestAggregatedResult): Promise<RecordedReport> {
  const json = JSON.stringify(toJestJson(results))
  const parsed = await parseReport(sourceFromBuffer(JEST_SOURCE, json), { format: 'jest-json' })
  return {
    ...parsed,
    cases: parsed.cases.map((c) => ({ ...c, tags: [], annotations: [] })),
    meta: { ...parsed.meta, status: results.wasInterrupted ? 'interrupted' : 'complete' },
  }
}
