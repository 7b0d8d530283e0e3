import { z } from 'zod'
import type { Attempt, ResultStatus } from '../model.js'
import { truncateText } from './bounded-text.js'
import { repoRelativePath } from './ci-path.js'
import { splitFailure } from './failure-text.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import { ReportLimitError } from '../errors.js'
import { resolveIngestLimits } from '../limits.js'
import type { ParsedCase, ParsedReport, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/**
 * The Jest `--json` subset read. Two shapes exist for the per-file entries: `jest --json` writes `name`,
 * `assertionResults` and `message`; the raw AggregatedResult (custom reporters, `testResultsProcessor`) writes
 * `testFilePath`, `testResults` and `failureMessage`. Both are read.
 */
interface JestReport {
  startTime?: number | null
  testResults: JestFileResult[]
}

interface JestFileResult {
  name?: string | null
  testFilePath?: string | null
  assertionResults?: JestAssertion[] | null
  testResults?: JestAssertion[] | null
  status?: string | null
  message?: string | null
  failureMessage?: string | null
  testExecError?: { message?: string | null } | null
  startTime?: number | null
  endTime?: number | null
  perfStats?: { start?: number | null; end?: number | null } | null
}

type JestStatus = 'passed' | 'failed' | 'skipped' | 'pending' | 'todo' | 'disabled' | 'focused'

interface JestAssertion {
  ancestorTitles?: string[] | null
  title: string
  status: JestStatus
  duration?: number | null
  failureMessages?: string[] | null
  invocations?: number | null
  /** Failure messages of the tries before the last (jest.retryTimes). */
  retryReasons?: string[] | null
  /** Written by Vitest's `json` reporter (never by Jest): tells the two dialects apart. */
  meta?: unknown
}

const STATUS: Record<JestStatus, ResultStatus> = {
  passed: 'passed',
  focused: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  pending: 'skipped',
  todo: 'skipped',
  disabled: 'skipped',
}

/** How Vitest joins describe titles and the test title in its JUnit report and its own full names. */
const VITEST_SEPARATOR = ' > '

/** jest-junit's name for a file that failed before any test ran; used too, so both formats give one id. */
const SUITE_FAILED = 'Test suite failed to run'

const assertion = z.object({
  ancestorTitles: z.array(z.string()).nullish(),
  title: z.string(),
  status: z.enum(['passed', 'failed', 'skipped', 'pending', 'todo', 'disabled', 'focused']),
  duration: z.number().nullish(),
  failureMessages: z.array(z.string()).nullish(),
  invocations: z.number().int().nonnegative().nullish(),
  retryReasons: z.array(z.string()).nullish(),
  meta: z.unknown().optional(),
})
const schema: z.ZodType<JestReport> = z.object({
  startTime: z.number().nullish(),
  testResults: z.array(
    z.object({
      name: z.string().nullish(),
      testFilePath: z.string().nullish(),
      assertionResults: z.array(assertion).nullish(),
      testResults: z.array(assertion).nullish(),
      status: z.string().nullish(),
      message: z.string().nullish(),
      failureMessage: z.string().nullish(),
      testExecError: z.object({ message: z.string().nullish() }).nullish(),
      startTime: z.number().nullish(),
      endTime: z.number().nullish(),
      perfStats: z.object({ start: z.number().nullish(), end: z.number().nullish() }).nullish(),
    }),
  ),
})

/**
 * Parses Jest's `--json` output. Module = the test file (made repository-relative when it lies in a known CI
 * checkout), name = describe titles and the test title joined with ` › `. `retryReasons`/`invocations` become
 * failed attempts before the final one; pending and todo tests are skipped.
 * @example const report = await parseJestJson(sourceFromFile('jest-results.json'))
 */
export async function parseJestJson(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'Jest JSON')
  const max = resolveIngestLimits(opts.limits).maxAttemptsPerResult
  const cases: ParsedCase[] = []
  let finished: number | null = null
  report.testResults.forEach((f, fi) => {
    const path = f.name ?? f.testFilePath ?? ''
    const module = repoRelativePath(path)
    const key = f.assertionResults ? 'assertionResults' : 'testResults'
    const assertions = f.assertionResults ?? f.testResults ?? []
    assertions.forEach((a, ai) => checkAttemptCount(source.name, `testResults[${fi}].${key}[${ai}]`, a, max))
    for (const a of assertions) cases.push(toCase(module, a))
    const failure = f.testExecError?.message ?? f.failureMessage ?? f.message
    if (assertions.length === 0 && (f.testExecError || f.status === 'failed') && failure) {
      const { message, stack } = splitFailure(stripAnsi(failure))
      cases.push({
        module,
        name: SUITE_FAILED,
        file: module,
        status: 'error',
        flakyOnRetry: false,
        durationMs: null,
        errorType: null,
        message,
        stack,
        healingOccurred: false,
        attempts: [],
      })
    }
    const end = f.perfStats?.end ?? f.endTime
    if (end && (finished === null || end > finished)) finished = end
  })
  const meta: ReportRunMeta = {}
  const started = parseTimestamp(report.startTime)
  if (started) meta.startedAt = started
  if (finished !== null) meta.finishedAt = parseTimestamp(finished)
  if (report.startTime && finished !== null && finished >= report.startTime) {
    meta.durationMs = finished - report.startTime
  }
  return { format: 'jest-json', cases, meta }
}

/** `invocations` is a count the report states: checked before any attempt is built from it. */
function checkAttemptCount(file: string, where: string, a: JestAssertion, max: number): void {
  const invocations = a.invocations ?? 1
  if (invocations > max) throw new ReportLimitError(file, `${where}.invocations`, max, invocations)
  const reasons = a.retryReasons?.length ?? 0
  if (reasons + 1 > max) throw new ReportLimitError(file, `${where}.retryReasons + 1`, max, reasons + 1)
}

function toCase(module: string, a: JestAssertion): ParsedCase {
  const status = STATUS[a.status]
  // Each runner's own joiner, as its JUnit report and flakewatch's reporter for it write the name: Vitest's ` > `,
  // Jest's ` › `. One test then has one id whichever of its reports is ingested.
  const name = [...(a.ancestorTitles ?? []), a.title].join(a.meta !== undefined ? VITEST_SEPARATOR : ' › ')
  const failure = splitFailure(stripAnsi((a.failureMessages ?? []).join('\n\n')))
  const reasons = a.retryReasons ?? []
  const earlier = Math.max(reasons.length, (a.invocations ?? 1) - 1)
  const attempts: Attempt[] = []
  if (earlier > 0) {
    for (let i = 0; i < earlier; i++) {
      const reason = reasons[i] ? splitFailure(stripAnsi(reasons[i]!)) : { message: null, stack: null }
      attempts.push({ retry: i, status: 'failed', durationMs: null, ...reason })
    }
    attempts.push({ retry: earlier, status, durationMs: a.duration ?? null, ...failure })
  }
  const flakyOnRetry = status === 'passed' && earlier > 0
  const shown = flakyOnRetry ? attempts[earlier - 1]! : failure
  return {
    module,
    name,
    file: module || null,
    status,
    flakyOnRetry,
    durationMs: a.duration ?? null,
    errorType: null,
    message: shown.message === null ? null : truncateText(shown.message),
    stack: shown.stack,
    healingOccurred: false,
    attempts,
  }
}
