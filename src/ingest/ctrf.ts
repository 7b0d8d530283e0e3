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
  /** Required by the spec (`"CTRF"`); read only to say when a file lacks it. */
  reportFormat?: unknown
  /** Required by the spec (SemVer); read only to say when a file lacks it. */
  specVersion?: unknown
  timestamp?: string | null
  results: {
    tool: { name: string }
    summary?: CtrfSummary | null
    tests: CtrfTest[]
    environment?: CtrfEnvironment | null
  }
}

/** The summary's counts are required by the spec; only `start` and `stop` are used. */
type CtrfSummary = { start?: number | null; stop?: number | null } & Partial<Record<SummaryCount, unknown>>

const SUMMARY_COUNTS = ['tests', 'passed', 'failed', 'pending', 'skipped', 'other'] as const
type SummaryCount = (typeof SUMMARY_COUNTS)[number]

type CtrfStatus = 'passed' | 'failed' | 'skipped' | 'pending' | 'other'

interface CtrfTest {
  name: string
  status: CtrfStatus
  /** Required by the spec. */
  duration?: number | null
  /** When the test started, epoch ms (CTRF's `start`). */
  start?: number | null
  message?: string | null
  trace?: string | null
  /** The runner's own status: Playwright's `timedOut`, `interrupted`. */
  rawStatus?: string | null
  /**
   * Where the test sits: `"chromium > cart/cart.spec.ts > cart"` (playwright-ctrf-json-reporter: project, file
   * relative to the test directory, describe titles), `"cart.test.js > cart"` (jest-ctrf-json-reporter: file name,
   * describe titles), an array of titles in the spec, or the file alone (flakewatch's reporters).
   */
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
  // Required by the spec; absent in playwright-ctrf-json-reporter's attempts (noted, never needed).
  attempt: z.number().nullish(),
  status,
  duration: z.number().nullish(),
  message: text,
  trace: text,
})

const schema: z.ZodType<CtrfReport> = z.object({
  reportFormat: z.unknown().optional(),
  specVersion: z.unknown().optional(),
  timestamp: text,
  results: z.object({
    tool: z.object({ name: z.string() }),
    summary: z
      .object({
        start: z.number().nullish(),
        stop: z.number().nullish(),
        ...Object.fromEntries(SUMMARY_COUNTS.map((k) => [k, z.unknown().optional()])),
      })
      .nullish(),
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
 * Parses a CTRF JSON report. The module is the test's file when its `suite` path names it (a project before it
 * becomes the `project` facet, describe titles after it join the name with the tool's separator), else the
 * `suite` path (joined with ` > `), else the file, else the tool name. Attempts come from `retryAttempts` and the
 * `flaky` flag; a bare `retries` count is believed only when no test of the file contradicts it (see
 * {@link retriesTrusted}). `environment` fills the run metadata. A file that is not schema-valid or contradicts
 * itself is still read, with one warning naming the field.
 * @example const report = await parseCtrf(sourceFromFile('ctrf/ctrf-report.json'))
 */
export async function parseCtrf(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'CTRF')
  const { tool, summary, tests, environment: env } = report.results
  checkAttemptCounts(source.name, tests, resolveIngestLimits(opts.limits).maxAttemptsPerResult)
  const retries = retriesTrusted(tests)
  const cases = tests.map((t) => toCase(t, tool.name, retries.trusted))
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
  const warning = ctrfWarning(retries.problem, schemaProblems(report))
  return { format: 'ctrf', cases, meta, ...(warning ? { warnings: [warning] } : {}) }
}

/** The first field (in document order) that the CTRF spec requires and the file lacks, and how many more. */
function schemaProblems(report: CtrfReport): string[] {
  const out: string[] = []
  if (report.reportFormat !== 'CTRF') out.push('reportFormat')
  if (typeof report.specVersion !== 'string' || !/^\d+\.\d+\.\d+$/.test(report.specVersion)) out.push('specVersion')
  const { summary, tests } = report.results
  if (!summary) out.push('results.summary')
  else {
    for (const k of [...SUMMARY_COUNTS, 'start', 'stop'] as const) {
      if (typeof summary[k] !== 'number') out.push(`results.summary.${k}`)
    }
  }
  tests.forEach((t, i) => {
    if (typeof t.duration !== 'number') out.push(`results.tests[${i}].duration`)
    t.retryAttempts?.forEach((a, j) => {
      if (typeof a.attempt !== 'number') out.push(`results.tests[${i}].retryAttempts[${j}].attempt`)
    })
  })
  return out
}

/** One line for the whole file, whatever number of problems: the first field of each kind, and a count. */
function ctrfWarning(retries: RetriesProblem | null, schema: string[]): string | null {
  const parts: string[] = []
  if (retries) {
    const more = retries.count > 1 ? ` (${retries.count} tests like it)` : ''
    parts.push(`${retries.field} ${retries.why}${more}`)
  }
  if (schema.length > 0) {
    const more = schema.length > 3 ? ` and ${schema.length - 3} more` : ''
    parts.push(`not schema-valid CTRF: ${schema.slice(0, 3).join(', ')}${more} missing or malformed`)
  }
  return parts.length > 0 ? `${parts.join('; ')}; the results are stored as read` : null
}

interface RetriesProblem {
  field: string
  why: string
  count: number
}

/**
 * Whether the file's bare `retries` counts are retries that happened. Some writers put the configured retry limit
 * there (vitest-ctrf-json-reporter 0.0.3 writes `retries: 2` on every test): a test that passed, is not flagged
 * flaky and lists no attempts, yet says it was retried, shows that the count is not what happened, and then no
 * count of the file is used. `retryAttempts` that disagree with the count are used, and noted.
 */
function retriesTrusted(tests: CtrfTest[]): { trusted: boolean; problem: RetriesProblem | null } {
  let limit: RetriesProblem | null = null
  let mismatch: RetriesProblem | null = null
  tests.forEach((t, i) => {
    const retries = t.retries ?? 0
    const listed = t.retryAttempts?.length ?? 0
    if (listed > 0) {
      if (t.retries !== null && t.retries !== undefined && listed !== retries && listed !== retries + 1) {
        if (mismatch) mismatch.count++
        else {
          const why = `is ${retries} but retryAttempts lists ${listed}: the listed attempts are used`
          mismatch = { field: `results.tests[${i}].retries`, why, count: 1 }
        }
      }
      return
    }
    if (retries > 0 && t.status === 'passed' && t.flaky !== true) {
      if (limit) limit.count++
      else {
        const why =
          `is ${retries} on a test that passed without a flaky flag or retryAttempts (a configured limit, not ` +
          'retries that happened): no attempts are made from the retries counts of this file'
        limit = { field: `results.tests[${i}].retries`, why, count: 1 }
      }
    }
  })
  return { trusted: limit === null, problem: limit ?? mismatch }
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

/** How each tool joins describe titles and the test title, as its other reports and flakewatch's reporters do. */
function separatorOf(tool: string): string {
  return tool.toLowerCase() === 'vitest' ? ' > ' : ' › '
}

interface SuitePlace {
  /** The repository-relative (or absolute) file. */
  file: string
  /** A project named before the file (Playwright). */
  project: string | null
  /** Describe titles after the file. */
  describes: string[]
}

/**
 * Finds the file in the `suite` path (the segment the file path ends with), so that what comes before it (a
 * Playwright project) and after it (describe titles) can be told apart. Null when no segment is the file.
 */
function suitePlace(t: CtrfTest): SuitePlace | null {
  if (!t.filePath || !t.suite) return null
  const segments = Array.isArray(t.suite) ? t.suite : t.suite.split(' > ')
  const path = t.filePath.replace(/\\/g, '/')
  const at = segments.findIndex((seg) => {
    const s = seg.replace(/\\/g, '/').replace(/^\.\//, '')
    return s !== '' && (path === s || path.endsWith(`/${s}`))
  })
  // More than one segment before the file is not a project this parser knows.
  if (at < 0 || at > 1) return null
  return {
    file: repoRelativePath(t.filePath),
    project: at === 1 ? segments[0]! : null,
    describes: segments.slice(at + 1),
  }
}

/**
 * The test's name with its describe titles: jest-ctrf-json-reporter's `name` is the full name (describe titles
 * and title joined by spaces), Playwright's is the title alone.
 */
function nameWithin(describes: string[], name: string, separator: string): string {
  if (describes.length === 0) return name
  const spaced = `${describes.join(' ')} `
  const title = name.startsWith(spaced) && name.length > spaced.length ? name.slice(spaced.length) : name
  return [...describes, title].join(separator)
}

function toCase(t: CtrfTest, tool: string, retriesTrusted: boolean): ParsedCase {
  const place = suitePlace(t)
  const suite = Array.isArray(t.suite) ? t.suite.join(' > ') : t.suite
  const finalStatus = STATUS[t.status]
  const timedOut = t.rawStatus === 'timedOut'
  const message = clean(t.message)
  const stack = clean(t.trace)
  const attempts = attemptsOf(t, finalStatus, message, stack, retriesTrusted)
  const failedBefore = attempts.slice(0, -1).some((a) => a.status === 'failed' || a.status === 'error')
  const flakyOnRetry = finalStatus === 'passed' && (t.flaky === true || failedBefore)
  const lastFailure = flakyOnRetry ? attempts.findLast((a) => a.status === 'failed' || a.status === 'error') : undefined
  const env = { ...(place?.project ? { project: place.project } : {}), ...(t.extra?.env ?? {}) }
  const file = t.filePath ? repoRelativePath(t.filePath) : null
  return {
    module: place ? place.file : suite || file || tool,
    name: place ? nameWithin(place.describes, t.name, separatorOf(tool)) : t.name,
    file,
    status: finalStatus,
    flakyOnRetry,
    durationMs: t.duration ?? null,
    errorType: t.extra?.errorType ?? (timedOut ? 'timeout' : null),
    // A passing test's message says nothing about this run (vitest-ctrf-json-reporter keeps an earlier try's).
    message: lastFailure ? lastFailure.message : finalStatus === 'passed' ? null : message,
    stack: lastFailure ? lastFailure.stack : finalStatus === 'passed' ? null : stack,
    healingOccurred: t.extra?.healingOccurred === true,
    attempts,
    ...(Object.keys(env).length > 0 ? { env } : {}),
  }
}

/**
 * CTRF says what each attempt did (`retryAttempts`, in newer writers), whether the test passed only on a retry
 * (`flaky`), and how many retries there were (`retries`). Attempts come from the first two; the count only says how
 * many failed tries came before a flaky pass or a final failure, and only when the file's counts can be believed.
 * Writers differ on whether the list includes the final attempt; a list one longer than `retries` is complete.
 */
function attemptsOf(
  t: CtrfTest,
  finalStatus: ResultStatus,
  message: string | null,
  stack: string | null,
  retriesTrusted: boolean,
): Attempt[] {
  const final = (retry: number): Attempt => ({
    retry,
    status: finalStatus,
    durationMs: t.duration ?? null,
    message: finalStatus === 'passed' ? null : message,
    stack: finalStatus === 'passed' ? null : stack,
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
  if (finalStatus === 'skipped') return []
  const retries = retriesTrusted ? (t.retries ?? 0) : 0
  // A flaky pass failed at least once before; the count says how often when it can be believed.
  const earlier = finalStatus === 'passed' ? (t.flaky === true ? Math.max(retries, 1) : 0) : retries
  if (earlier === 0) return []
  const attempts: Attempt[] = []
  for (let i = 0; i < earlier; i++) {
    attempts.push({ retry: i, status: 'failed', durationMs: null, message: null, stack: null })
  }
  attempts.push(final(earlier))
  return attempts
}

function clean(value: string | null | undefined): string | null {
  if (!value) return null
  const text = stripAnsi(value).trim()
  return text === '' ? null : truncateText(text)
}
