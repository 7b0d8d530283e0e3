import { z } from 'zod'
import type { Attempt, ResultStatus } from '../model.js'
import { truncateText } from './bounded-text.js'
import { readJson } from './read-json.js'
import { withPositions } from './execution-order.js'
import { applyRunProperty } from './run-properties.js'
import { stripAnsi } from './strip-ansi.js'
import { isoTime, parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ReportRunMeta, ReportSource } from './types.js'

/**
 * The Playwright JSON reporter subset read (`reporter: [['json', { outputFile }]]`). Top-level suites are files;
 * nested suites are `describe` blocks; each spec has one test per project, each test one result per try.
 */
interface PwReport {
  config?: { metadata?: Record<string, unknown> | null } | null
  suites: PwSuite[]
  stats?: { startTime?: string | null; duration?: number | null } | null
}

interface PwSuite {
  title: string
  file?: string | null
  specs?: PwSpec[] | null
  suites?: PwSuite[] | null
}

interface PwSpec {
  title: string
  file?: string | null
  tests: PwTest[]
}

type PwTestStatus = 'expected' | 'unexpected' | 'flaky' | 'skipped'
type PwResultStatus = 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted'

interface PwAnnotation {
  type: string
  description?: string | null
}

interface PwTest {
  projectName?: string | null
  annotations?: PwAnnotation[] | null
  expectedStatus?: PwResultStatus | null
  status: PwTestStatus
  results: PwResult[]
}

interface PwError {
  message?: string | null
  stack?: string | null
}

interface PwResult {
  retry: number
  startTime?: string | null
  annotations?: PwAnnotation[] | null
  status?: PwResultStatus | null
  duration?: number | null
  error?: PwError | null
  errors?: PwError[] | null
}

const TEST_STATUS: Record<PwTestStatus, ResultStatus> = {
  expected: 'passed',
  flaky: 'passed',
  unexpected: 'failed',
  skipped: 'skipped',
}

const RESULT_STATUS: Record<PwResultStatus, ResultStatus> = {
  passed: 'passed',
  failed: 'failed',
  timedOut: 'failed',
  skipped: 'skipped',
  // The run was stopped (Ctrl-C, maxFailures, global timeout): the test did not get to finish.
  interrupted: 'error',
}

const FAILING = new Set<PwResultStatus>(['failed', 'timedOut', 'interrupted'])

const resultStatus = z.enum(['passed', 'failed', 'timedOut', 'skipped', 'interrupted'])
const error = z.object({ message: z.string().nullish(), stack: z.string().nullish() })
const annotation = z.object({ type: z.string(), description: z.string().nullish() })

/** Set by the flakewatch/playwright fixture when a locator was healed: the result is marked healing_occurred. */
const HEALED = 'flakewatch-healed'
const spec = z.object({
  title: z.string(),
  file: z.string().nullish(),
  tests: z.array(
    z.object({
      projectName: z.string().nullish(),
      annotations: z.array(annotation).nullish(),
      expectedStatus: resultStatus.nullish(),
      status: z.enum(['expected', 'unexpected', 'flaky', 'skipped']),
      results: z.array(
        z.object({
          retry: z.number().int().nonnegative(),
          startTime: z.string().nullish(),
          annotations: z.array(annotation).nullish(),
          status: resultStatus.nullish(),
          duration: z.number().nullish(),
          error: error.nullish(),
          errors: z.array(error).nullish(),
        }),
      ),
    }),
  ),
})
const suite: z.ZodType<PwSuite> = z.lazy(() =>
  z.object({
    title: z.string(),
    file: z.string().nullish(),
    specs: z.array(spec).nullish(),
    suites: z.array(suite).nullish(),
  }),
)
const schema: z.ZodType<PwReport> = z.object({
  config: z.object({ metadata: z.record(z.string(), z.unknown()).nullish() }).nullish(),
  suites: z.array(suite),
  stats: z.object({ startTime: z.string().nullish(), duration: z.number().nullish() }).nullish(),
})

/**
 * Parses the Playwright JSON reporter's output. Module = the spec file, name = describe titles and the test title
 * joined with ` › ` (as Playwright prints them), env facet `project` = the project name. Each result is an
 * attempt; `flaky` means passed on retry; `timedOut` is a failure with errorType `timeout`.
 * @example const report = await parsePlaywrightJson(sourceFromFile('test-results/results.json'))
 */
export async function parsePlaywrightJson(source: ReportSource): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'Playwright JSON')
  const cases: ParsedCase[] = []
  // The first try's start orders the tests of a file (the JSON lists them in file order, not run order).
  const starts: number[] = []
  // Depth-first, in file order, without recursion: suites nest as deep as describe blocks do.
  type Frame = { suite: PwSuite; file: string; titles: string[] }
  const stack: Frame[] = report.suites.map((s) => ({ suite: s, file: s.file ?? s.title, titles: [] })).reverse()
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { suite: s, file, titles } = frame
    for (const sp of s.specs ?? []) {
      for (const t of sp.tests) {
        cases.push(toCase(sp.file ?? file, [...titles, sp.title].join(' › '), t))
        starts.push(firstStart(t))
      }
    }
    const children = s.suites ?? []
    for (let k = children.length - 1; k >= 0; k--) {
      stack.push({ suite: children[k]!, file, titles: [...titles, children[k]!.title] })
    }
  }

  const meta: ReportRunMeta = {}
  const startedAt = parseTimestamp(report.stats?.startTime)
  const duration = report.stats?.duration
  if (startedAt) meta.startedAt = startedAt
  if (typeof duration === 'number') {
    meta.durationMs = Math.round(duration)
    if (startedAt) meta.finishedAt = isoTime(Date.parse(startedAt) + Math.round(duration))
  }
  for (const [key, value] of Object.entries(report.config?.metadata ?? {})) {
    if (typeof value === 'string') applyRunProperty(meta, key, value)
  }
  return { format: 'playwright-json', cases: withPositions(cases, starts), meta }
}

/** When the test's first try started (epoch ms); NaN when unknown, so that the report's order is kept. */
function firstStart(t: PwTest): number {
  let first = Infinity
  for (const r of t.results) {
    const ms = r.startTime ? Date.parse(r.startTime) : NaN
    if (Number.isNaN(ms)) return NaN
    if (ms < first) first = ms
  }
  return t.results.length > 0 ? first : NaN
}

function toCase(file: string, name: string, t: PwTest): ParsedCase {
  const expected = t.expectedStatus ?? 'passed'
  const results = [...t.results].sort((a, b) => a.retry - b.retry)
  const attempts: Attempt[] = results.map((r, i) => {
    const err = errorText(r)
    return {
      retry: i,
      status: attemptStatus(r.status ?? 'passed', expected),
      durationMs: r.duration ?? null,
      message: err.message,
      stack: err.stack,
    }
  })
  let status = TEST_STATUS[t.status]
  if (status === 'failed' && attempts.at(-1)?.status === 'error') status = 'error'
  const flakyOnRetry = t.status === 'flaky'
  const failing = results.findLast((r) => FAILING.has(r.status ?? 'passed'))
  const shown = status === 'passed' && !flakyOnRetry ? undefined : failing
  const err = shown ? errorText(shown) : { message: null, stack: null }
  const durations = attempts.map((a) => a.durationMs).filter((d): d is number => d !== null)
  return {
    module: file,
    name,
    file,
    status,
    flakyOnRetry,
    durationMs: durations.length > 0 ? durations.reduce((a, b) => a + b, 0) : null,
    errorType: shown?.status === 'timedOut' ? 'timeout' : null,
    message: err.message,
    stack: err.stack,
    healingOccurred: [t.annotations, ...results.map((r) => r.annotations)].some((list) =>
      list?.some((a) => a.type === HEALED),
    ),
    attempts,
    ...(t.projectName ? { env: { project: t.projectName } } : {}),
  }
}

/** A result that matches `test.fail()`'s expectation is a pass; one that does not is a failure. */
function attemptStatus(actual: PwResultStatus, expected: PwResultStatus): ResultStatus {
  if (actual === 'skipped' || expected !== 'failed') return RESULT_STATUS[actual]
  return actual === 'failed' ? 'passed' : actual === 'passed' ? 'failed' : RESULT_STATUS[actual]
}

function errorText(r: PwResult): { message: string | null; stack: string | null } {
  const first = r.error ?? r.errors?.[0]
  if (!first) return { message: null, stack: null }
  const message = first.message ? truncateText(stripAnsi(first.message).trim()) : null
  // errors[] holds the located error (with the code frame) next to the summary; keep them all as the stack.
  const all = (r.errors ?? []).map((e) => e.stack ?? e.message ?? '').filter((s) => s !== '')
  const raw = all.length > 1 ? all.join('\n\n') : (first.stack ?? first.message ?? null)
  return { message, stack: raw ? truncateText(stripAnsi(raw).trim()) : null }
}
