import { z } from 'zod'
import type { Attempt, ResultStatus } from '../model.js'
import { truncateText } from './bounded-text.js'
import { repoRelativePath } from './ci-path.js'
import { withPositions } from './execution-order.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import { ReportLimitError } from '../errors.js'
import { resolveIngestLimits } from '../limits.js'
import type { ParsedCase, ParsedReport, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/** The CTRF (Common Test Report Format, ctrf.io) subset read. Repeated test names are allowed. */
interface CtrfReport {
  timestamp?: string | null
  results: {
    tool: { name: string }
    summary?: { start?: number | null; stop?: number | null } | null
    tests: CtrfTest[]
    environment?: CtrfEnvironment | null
  }
}

type CtrfStatus = 'passed' | 'failed' | 'skipped' | 'pending' | 'other'

interface CtrfTest {
  name: string
  status: CtrfStatus
  duration?: number | null
  /** When the test started, epoch ms (CTRF's `start`). */
  start?: number | null
  message?: string | null
  trace?: string | null
  /** The runner's own status: Playwright's `timedOut`, `interrupted`. */
  rawStatus?: string | null
  /** `"chromium > file.spec.ts > describe"` in older writers, an array of titles in the spec. */
  suite?: string | string[] | null
  filePath?: string | null
  retries?: number | null
  retryAttempts?: CtrfRetryAttempt[] | null
  flaky?: boolean | null
  /** Free-form; flakewatch's own reporters put `env` facets, `healingOccurred` and `errorType` here. */
  extra?: CtrfTestExtra | null
}

interface CtrfTestExtra {
  env?: Record<string, string> | null
  healingOccurred?: boolean | null
  errorType?: string | null
  /** flakewatch's reporters: the test's place in the run's execution order, exact where start times tie. */
  position?: number | null
}

interface CtrfRetryAttempt {
  attempt?: number | null
  status: CtrfStatus
  duration?: number | null
  message?: string | null
  trace?: string | null
}

interface CtrfEnvironment {
  buildId?: string | number | null
  buildUrl?: string | null
  branchName?: string | null
  commit?: string | null
  osPlatform?: string | null
  testEnvironment?: string | null
  extra?: { pipelineId?: string | number | null; pipelineUrl?: string | null } | null
}

const STATUS: Record<CtrfStatus, ResultStatus> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  pending: 'skipped',
  // Jest's todo/disabled and other statuses that neither pass nor fail.
  other: 'skipped',
}

const status = z.enum(['passed', 'failed', 'skipped', 'pending', 'other'])
const text = z.string().nullish()
const count = z.number().int().nonnegative().nullish()

const retryAttempt = z.object({
  attempt: z.number().nullish(),
  status,
  duration: z.number().nullish(),
  message: text,
  trace: text,
})

const schema: z.ZodType<CtrfReport> = z.object({
  timestamp: text,
  results: z.object({
    tool: z.object({ name: z.string() }),
    summary: z.object({ start: z.number().nullish(), stop: z.number().nullish() }).nullish(),
    tests: z.array(
      z.object({
        name: z.string(),
        status,
        duration: z.number().nullish(),
        start: z.number().nullish().catch(null),
        message: text,
        trace: text,
        rawStatus: text,
        suite: z.union([z.string(), z.array(z.string())]).nullish(),
        filePath: text,
        retries: count,
        retryAttempts: z.array(retryAttempt).nullish(),
        flaky: z.boolean().nullish(),
        // Other writers put anything here: read only what is recognised, and ignore the rest.
        extra: z
          .object({
            env: z.record(z.string(), z.string()).nullish().catch(null),
            healingOccurred: z.boolean().nullish().catch(null),
            errorType: z.string().nullish().catch(null),
            position: z.number().nullish().catch(null),
          })
          .nullish()
          .catch(null),
      }),
    ),
    environment: z
      .object({
        buildId: z.union([z.string(), z.number()]).nullish(),
        buildUrl: text,
        branchName: text,
        commit: text,
        osPlatform: text,
        testEnvironment: text,
        // flakewatch's own reports keep the pipeline here: CTRF's build is the job.
        extra: z
          .object({
            pipelineId: z.union([z.string(), z.number()]).nullish().catch(null),
            pipelineUrl: text.catch(null),
          })
          .nullish()
          .catch(null),
      })
      .nullish(),
  }),
})

/**
 * Parses a CTRF JSON report. The module is the test's `suite` path (joined with ` > `), else its file, else the
 * tool name. `retries`/`flaky` and `retryAttempts` become attempts; `environment` fills the run metadata.
 * @example const report = await parseCtrf(sourceFromFile('ctrf/ctrf-report.json'))
 */
export async function parseCtrf(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'CTRF')
  const { tool, summary, tests, environment: env } = report.results
  checkAttemptCounts(source.name, tests, resolveIngestLimits(opts.limits).maxAttemptsPerResult)
  const cases = tests.map((t) => toCase(t, tool.name))
  // flakewatch's own sequence where every test has one, else start times; ranked, so the values stay small.
  const ordered = tests.every((t) => typeof t.extra?.position === 'number')
  withPositions(
    cases,
    tests.map((t) => (ordered ? t.extra?.position : t.start)),
  )
  const meta: ReportRunMeta = {
    startedAt: parseTimestamp(summary?.start) ?? parseTimestamp(report.timestamp),
    finishedAt: parseTimestamp(summary?.stop),
  }
  if (summary?.start && summary.stop && summary.stop >= summary.start) meta.durationMs = summary.stop - summary.start
  if (env) {
    if (env.branchName) meta.branch = env.branchName
    if (env.commit) meta.revision = env.commit
    // CTRF's build is one CI job: the ctrf-io reporters fill it from GitLab's CI_JOB_ID and CI_JOB_URL.
    if (env.buildId !== null && env.buildId !== undefined) meta.jobId = String(env.buildId)
    if (env.buildUrl) meta.jobUrl = env.buildUrl
    const pipelineId = env.extra?.pipelineId
    if (pipelineId !== null && pipelineId !== undefined) meta.pipelineId = String(pipelineId)
    if (env.extra?.pipelineUrl) meta.pipelineUrl = env.extra.pipelineUrl
    const facets: Record<string, string> = {}
    if (env.osPlatform) facets.os = env.osPlatform
    if (env.testEnvironment) facets.environment = env.testEnvironment
    if (Object.keys(facets).length > 0) meta.env = facets
  }
  return { format: 'ctrf', cases, meta }
}

/** `retries` is a count the report states: checked before any attempt is built from it. */
function checkAttemptCounts(file: string, tests: CtrfTest[], max: number): void {
  tests.forEach((t, i) => {
    const retries = t.retries ?? 0
    if (retries + 1 > max) throw new ReportLimitError(file, `results.tests[${i}].retries + 1`, max, retries + 1)
    const listed = t.retryAttempts?.length ?? 0
    if (listed > max) throw new ReportLimitError(file, `results.tests[${i}].retryAttempts`, max, listed)
  })
}

function toCase(t: CtrfTest, tool: string): ParsedCase {
  const suite = Array.isArray(t.suite) ? t.suite.join(' > ') : t.suite
  const finalStatus = STATUS[t.status]
  const timedOut = t.rawStatus === 'timedOut'
  const message = clean(t.message)
  const stack = clean(t.trace)
  const attempts = attemptsOf(t, finalStatus, message, stack)
  const failedBefore = attempts.slice(0, -1).some((a) => a.status === 'failed' || a.status === 'error')
  const flakyOnRetry = finalStatus === 'passed' && (t.flaky === true || failedBefore)
  const lastFailure = flakyOnRetry ? attempts.findLast((a) => a.status === 'failed' || a.status === 'error') : undefined
  return {
    module: suite || (t.filePath ? repoRelativePath(t.filePath) : tool),
    name: t.name,
    file: t.filePath ? repoRelativePath(t.filePath) : null,
    status: finalStatus,
    flakyOnRetry,
    durationMs: t.duration ?? null,
    errorType: t.extra?.errorType ?? (timedOut ? 'timeout' : null),
    message: lastFailure ? lastFailure.message : message,
    stack: lastFailure ? lastFailure.stack : stack,
    healingOccurred: t.extra?.healingOccurred === true,
    attempts,
    ...(t.extra?.env && Object.keys(t.extra.env).length > 0 ? { env: t.extra.env } : {}),
  }
}

/**
 * CTRF says how many retries there were (`retries`) and, in newer writers, what each attempt did
 * (`retryAttempts`). Writers differ on whether that list includes the final attempt; a list one longer than
 * `retries` is taken as complete.
 */
function attemptsOf(t: CtrfTest, finalStatus: ResultStatus, message: string | null, stack: string | null): Attempt[] {
  const final = (retry: number): Attempt => ({
    retry,
    status: finalStatus,
    durationMs: t.duration ?? null,
    message,
    stack,
  })
  const listed = [...(t.retryAttempts ?? [])].sort((a, b) => (a.attempt ?? 0) - (b.attempt ?? 0))
  if (listed.length > 0) {
    const attempts: Attempt[] = listed.map((a, i) => ({
      retry: i,
      status: STATUS[a.status],
      durationMs: a.duration ?? null,
      message: clean(a.message),
      stack: clean(a.trace),
    }))
    const complete = t.retries !== null && t.retries !== undefined && listed.length === t.retries + 1
    if (!complete) attempts.push(final(attempts.length))
    return attempts
  }
  const retries = t.retries ?? 0
  if (retries === 0 || finalStatus === 'skipped') return []
  // Only counts are known: earlier tries failed (that is why they were retried), the last one is the final status.
  const attempts: Attempt[] = []
  for (let i = 0; i < retries; i++) {
    attempts.push({ retry: i, status: 'failed', durationMs: null, message: null, stack: null })
  }
  attempts.push(final(retries))
  return attempts
}

function clean(value: string | null | undefined): string | null {
  if (!value) return null
  const text = stripAnsi(value).trim()
  return text === '' ? null : truncateText(text)
}
