import { z } from 'zod'
import { ReportLimitError } from '../errors.js'
import { resolveIngestLimits } from '../limits.js'
import type { Attempt, ResultStatus } from '../model.js'
import { truncateText } from './bounded-text.js'
import { repoRelativePath } from './ci-path.js'
import { splitFailure } from './failure-text.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/*
 * Mocha's built-in `json` reporter ({ stats, tests, pending, failures, passes }, each test with `fullTitle`,
 * `file`, `currentRetry` and `err`) and mochawesome's JSON ({ stats, results: [suite], meta }, suites nested,
 * tests with `state`). Both are read whole (≤256 MB).
 */
interface MochaError {
  message?: string | null
  stack?: string | null
  estack?: string | null
  name?: string | null
  code?: string | null
}

interface MochaTest {
  title: string
  fullTitle: string
  file?: string | null
  duration?: number | null
  /** The retry this result came from (`this.retries(n)`, `--retries`): the tries before it failed. */
  currentRetry?: number | null
  err?: MochaError | null
  state?: MochaState | null
  pending?: boolean | null
  timedOut?: boolean | null
}

type MochaState = 'passed' | 'failed' | 'pending' | 'skipped'

const STATE: Record<MochaState, ResultStatus> = {
  passed: 'passed',
  failed: 'failed',
  pending: 'skipped',
  skipped: 'skipped',
}

interface MochaStats {
  start?: string | null
  end?: string | null
  duration?: number | null
}

const error = z.object({
  message: z.string().nullish(),
  stack: z.string().nullish(),
  estack: z.string().nullish(),
  name: z.string().nullish(),
  code: z.string().nullish().catch(null),
})
const test = z.object({
  title: z.string(),
  fullTitle: z.string(),
  file: z.string().nullish(),
  duration: z.number().nullish(),
  currentRetry: z.number().int().nonnegative().nullish(),
  err: error.nullish().catch(null),
  state: z.enum(['passed', 'failed', 'pending', 'skipped']).nullish().catch(null),
  pending: z.boolean().nullish(),
  timedOut: z.boolean().nullish(),
})
const stats = z.object({ start: z.string().nullish(), end: z.string().nullish(), duration: z.number().nullish() })
const mochaSchema = z.object({
  stats: stats.nullish(),
  tests: z.array(test),
  pending: z.array(test).nullish(),
  failures: z.array(test).nullish(),
})

interface AwesomeSuite {
  fullFile?: string | null
  file?: string | null
  tests?: MochaTest[] | null
  suites?: AwesomeSuite[] | null
}
const awesomeSuite: z.ZodType<AwesomeSuite> = z.lazy(() =>
  z.object({
    fullFile: z.string().nullish(),
    file: z.string().nullish(),
    tests: z.array(test).nullish(),
    suites: z.array(awesomeSuite).nullish(),
  }),
)
const awesomeSchema = z.object({ stats: stats.nullish(), results: z.array(awesomeSuite) })

/**
 * Parses mocha's `--reporter json` output. Module = the test file (made repository-relative), name = the full
 * title (describe titles and the test's, space-joined, as mocha-junit-reporter names the same test). A test that
 * passed on `currentRetry` n failed n times before: those are attempts, and it is flaky on retry.
 * @example const report = await parseMochaJson(sourceFromFile('mocha.json'))
 */
export async function parseMochaJson(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  const report = await readJson(source, mochaSchema, 'mocha JSON')
  const max = resolveIngestLimits(opts.limits).maxAttemptsPerResult
  const cases = report.tests.map((t, i) => {
    const retries = t.currentRetry ?? 0
    if (retries + 1 > max) throw new ReportLimitError(source.name, `tests[${i}].currentRetry + 1`, max, retries + 1)
    return toCase(t, t.file ?? null, mochaStatus(t))
  })
  return { format: 'mocha-json', cases, meta: metaOf(report.stats) }
}

/**
 * Parses mochawesome's JSON (`--reporter mochawesome --reporter-options json=true`): nested suites, each with its
 * file. Named as mocha's own JSON names the same tests. mochawesome keeps no retry count, so a retried pass reads
 * as a pass.
 * @example const report = await parseMochawesome(sourceFromFile('mochawesome-report/mochawesome.json'))
 */
export async function parseMochawesome(source: ReportSource): Promise<ParsedReport> {
  const report = await readJson(source, awesomeSchema, 'mochawesome JSON')
  const cases: ParsedCase[] = []
  const stack: { suite: AwesomeSuite; file: string | null }[] = report.results
    .map((s) => ({ suite: s, file: null }))
    .reverse()
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const file = frame.suite.fullFile || frame.suite.file || frame.file
    for (const t of frame.suite.tests ?? []) cases.push(toCase({ ...t, currentRetry: 0 }, file, awesomeStatus(t)))
    const children = frame.suite.suites ?? []
    for (let k = children.length - 1; k >= 0; k--) stack.push({ suite: children[k]!, file })
  }
  return { format: 'mochawesome', cases, meta: metaOf(report.stats) }
}

/** Mocha's JSON lists pending tests with an empty `err` and no duration; a failure has an `err` with a message. */
function mochaStatus(t: MochaTest): ResultStatus {
  if (t.err && (t.err.message || t.err.stack)) return 'failed'
  if (t.duration === undefined || t.duration === null) return 'skipped'
  return 'passed'
}

function awesomeStatus(t: MochaTest): ResultStatus {
  if (t.state) return STATE[t.state]
  return t.pending ? 'skipped' : 'passed'
}

function toCase(t: MochaTest, file: string | null, status: ResultStatus): ParsedCase {
  const path = file ? repoRelativePath(file) : null
  const failed = status === 'failed'
  const stackText = t.err?.stack ?? t.err?.estack ?? null
  const split = splitFailure(stackText ? stripAnsi(stackText) : null)
  const message = failed ? (clean(t.err?.message) ?? split.message) : null
  const retries = t.currentRetry ?? 0
  const attempts: Attempt[] = []
  if (retries > 0) {
    for (let i = 0; i < retries; i++)
      attempts.push({ retry: i, status: 'failed', durationMs: null, message: null, stack: null })
    attempts.push({
      retry: retries,
      status,
      durationMs: t.duration ?? null,
      message,
      stack: failed ? split.stack : null,
    })
  }
  return {
    module: path ?? '',
    name: t.fullTitle,
    file: path,
    status,
    flakyOnRetry: status === 'passed' && retries > 0,
    durationMs: t.duration ?? null,
    errorType: failed ? (timedOut(t, message) ? 'timeout' : (t.err?.name ?? t.err?.code ?? null)) : null,
    message,
    stack: failed ? split.stack : null,
    healingOccurred: false,
    attempts,
  }
}

/** mochawesome says so; mocha's own JSON only by the error's code (mocha 8+) or message. */
function timedOut(t: MochaTest, message: string | null): boolean {
  return t.timedOut === true || t.err?.code === 'ERR_MOCHA_TIMEOUT' || /^Timeout of \d+ms exceeded/.test(message ?? '')
}

function clean(text: string | null | undefined): string | null {
  if (!text) return null
  const t = stripAnsi(text).trim()
  return t === '' ? null : truncateText(t)
}

function metaOf(stats: MochaStats | null | undefined): ReportRunMeta {
  const meta: ReportRunMeta = {}
  meta.startedAt = parseTimestamp(stats?.start)
  meta.finishedAt = parseTimestamp(stats?.end)
  if (typeof stats?.duration === 'number') meta.durationMs = stats.duration
  return meta
}
