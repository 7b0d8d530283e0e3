import { z } from 'zod'
import type { Attempt, ResultStatus } from '../model.js'
import { checkedName, truncateText } from './bounded-text.js'
import { repoRelativePath } from './ci-path.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ReportRunMeta, ReportSource } from './types.js'

/*
 * pytest-json-report (`pytest --json-report --json-report-file=report.json`, numirias/pytest-json-report): { created
 * (when the session ended, epoch seconds), duration, exitcode, root, summary, collectors, tests: [{ nodeid, lineno,
 * outcome, setup, call, teardown: { duration, outcome, crash: { path, lineno, message }, longrepr } }] }. Read whole
 * (≤256 MB). `outcome` is pytest's own word for the test: passed, failed, error (a failed setup or teardown),
 * skipped, xfailed, xpassed, and `rerun` for a test pytest-rerunfailures ran again and that then passed (the plugin
 * keeps the last rerun's stages and the word of the first rerun: a failure that passed on retry).
 */
const crash = z.object({ message: z.string().nullish() }).nullish().catch(null)
const stage = z
  .object({
    duration: z.number().nullish().catch(null),
    outcome: z.string().nullish(),
    crash,
    longrepr: z.string().nullish().catch(null),
  })
  .nullish()
  .catch(null)
const schema = z.object({
  created: z.number().nullish().catch(null),
  duration: z.number().nullish().catch(null),
  exitcode: z.number().int(),
  root: z.string().nullish(),
  tests: z
    .array(z.object({ nodeid: z.string(), outcome: z.string(), setup: stage, call: stage, teardown: stage }))
    .nullish(),
})

type Stage = z.infer<typeof stage>

const STATUS: Record<string, ResultStatus> = {
  passed: 'passed',
  failed: 'failed',
  error: 'error',
  skipped: 'skipped',
  // As pytest's JUnit writes them: an expected failure is a skip, an unexpected pass (not strict) a pass.
  xfailed: 'skipped',
  xpassed: 'passed',
  rerun: 'passed',
}

/**
 * Parses pytest-json-report's JSON. Named as pytest's own `--junitxml` names the same test, so that both reports of
 * one run give one id: module = the node id's path without `.py`, dotted, and its classes (`tests.test_cart.TestCart`),
 * name = the function with its parameters (`test_param[2]`); the file is kept. A `rerun` outcome is a failed attempt
 * and then a pass: flaky on retry.
 * @example const report = await parsePytestJson(sourceFromFile('.report.json'))
 */
export async function parsePytestJson(source: ReportSource): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'pytest-json-report')
  const cases = (report.tests ?? []).map((t, i) => {
    const nodeid = checkedName(source.name, undefined, `tests[${i}].nodeid`, t.nodeid)
    const status = STATUS[t.outcome] ?? 'error'
    const { module, name, file } = pytestNames(nodeid)
    const failedStage = [t.setup, t.call, t.teardown].find((s) => s?.outcome === 'failed') ?? null
    const shown = status === 'skipped' ? skipReason(t.setup ?? t.call) : failureOf(failedStage)
    const durations = [t.setup, t.call, t.teardown].map((s) => s?.duration).filter((d) => typeof d === 'number')
    const durationMs = durations.length > 0 ? Math.round(durations.reduce((a, b) => a + b, 0) * 1e6) / 1e3 : null
    const failed = status === 'failed' || status === 'error'
    const attempts: Attempt[] =
      t.outcome === 'rerun'
        ? [
            { retry: 0, status: 'failed', durationMs: null, message: null, stack: null },
            { retry: 1, status: 'passed', durationMs, message: null, stack: null },
          ]
        : []
    const c: ParsedCase = {
      module,
      name,
      file,
      status,
      flakyOnRetry: t.outcome === 'rerun',
      durationMs,
      errorType: t.outcome === 'error' ? 'error' : null,
      message: failed || status === 'skipped' ? shown.message : null,
      stack: failed ? shown.stack : null,
      healingOccurred: false,
      attempts,
    }
    return c
  })
  const meta: ReportRunMeta = {}
  if (typeof report.created === 'number') {
    meta.finishedAt = parseTimestamp(report.created)
    if (typeof report.duration === 'number' && report.duration >= 0) {
      meta.startedAt = parseTimestamp(report.created - report.duration)
      meta.durationMs = Math.round(report.duration * 1e6) / 1e3
    }
  }
  return { format: 'pytest-json', cases, meta }
}

/**
 * A node id as pytest's junitxml names it (`mangle_test_address`): parameters set aside (they may hold `::`), the
 * path without `.py` and dotted, classes appended, the last part the name.
 * @example pytestNames('tests/test_cart.py::TestCart::test_param[2]') // module 'tests.test_cart.TestCart', name 'test_param[2]'
 */
export function pytestNames(nodeid: string): { module: string; name: string; file: string | null } {
  const bracket = nodeid.indexOf('[')
  const path = bracket < 0 ? nodeid : nodeid.slice(0, bracket)
  const params = bracket < 0 ? '' : nodeid.slice(bracket)
  const parts = path.split('::')
  const file = parts.length > 1 || /\.py$/.test(parts[0]!) ? repoRelativePath(parts[0]!) : null
  parts[0] = parts[0]!.replace(/\//g, '.').replace(/\.py$/, '')
  parts[parts.length - 1] += params
  const name = parts.pop()!
  return { module: parts.join('.'), name, file }
}

function failureOf(s: Stage): { message: string | null; stack: string | null } {
  if (!s) return { message: null, stack: null }
  const stack = s.longrepr ? truncateText(stripAnsi(s.longrepr).trim()) : null
  const message = s.crash?.message ? truncateText(stripAnsi(s.crash.message).trim()) : firstLine(stack)
  return { message, stack }
}

/** pytest keeps a skip as the repr of a (path, line, reason) tuple: `('…/t.py', 10, 'Skipped: not today')`. */
function skipReason(s: Stage): { message: string | null; stack: null } {
  const text = s?.longrepr ?? ''
  // Anchored at the start and lazy: one pass over the path, whatever the text holds.
  const m = /^\((['"])[\s\S]*?\1, (?:\d+|None), (['"])/.exec(text)
  const quoted = m !== null && text.endsWith(`${m[2]})`)
  const reason = (quoted ? text.slice(m[0].length, -2) : text.trim()).replace(/^Skipped: /, '')
  return { message: reason === '' ? null : truncateText(reason), stack: null }
}

function firstLine(text: string | null): string | null {
  if (!text) return null
  const nl = text.indexOf('\n')
  return nl < 0 ? text : text.slice(0, nl)
}
