import type { ResultStatus } from '../model.js'
import { BoundedText, checkedName, ownString, textOf, truncateText } from './bounded-text.js'
import { chunkCases, collectReport } from './collect.js'
import { parseTimestamp, secondsToMs } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'
import { xmlSteps, type XmlContext } from './xml-stream.js'

/*
 * NUnit's result XML. NUnit 3 (nunit3-console `--result`, the NUnit3TestAdapter's per-assembly output):
 *   <test-run start-time end-time> <test-suite type="Assembly"> <environment machine-name/> … nested
 *   <test-suite> … <test-case name fullname classname methodname result label duration>
 *   <failure><message/><stack-trace/></failure> <reason><message/></reason> <output/> </test-case>
 * The adapter's files have a <test-suite> root. NUnit 2 (<test-results>) is read too: its <test-case name> is the
 * full name, its outcome `result` plus `executed`, its time in seconds.
 * NUnit's `[Retry(n)]` keeps only the last try: NUnit 3 writes the limit as `<property name="Retry">`, and no NUnit
 * version writes how many tries ran, so a retried pass reads as a pass.
 */
interface NunitCaseAttributes {
  name?: string
  fullname?: string
  classname?: string
  methodname?: string
  result?: string
  label?: string
  duration?: string
  /** NUnit 2: seconds; `executed="False"` for tests not run. */
  time?: string
  executed?: string
  'start-time'?: string
}

/** NUnit 3 `result` values (TestStatus), and NUnit 2's. */
type NunitResult =
  | 'Passed'
  | 'Failed'
  | 'Skipped'
  | 'Inconclusive'
  | 'Warning'
  | 'Success'
  | 'Failure'
  | 'Error'
  | 'Ignored'
  | 'NotRunnable'
  | 'Cancelled'

const RESULT: Record<NunitResult, ResultStatus> = {
  Passed: 'passed',
  Success: 'passed',
  // A warning (Assert.Warn) does not fail the run.
  Warning: 'passed',
  Failed: 'failed',
  Failure: 'failed',
  Error: 'error',
  Cancelled: 'error',
  NotRunnable: 'error',
  Skipped: 'skipped',
  Ignored: 'skipped',
  Inconclusive: 'skipped',
}

/** NUnit 3 labels that turn a `Failed` result into an error: the test did not get to assert. */
const ERROR_LABELS = new Set(['Error', 'Cancelled', 'Invalid'])

const ROOTS = new Set(['test-run', 'test-suite', 'test-results'])

interface CaseDraft {
  attrs: NunitCaseAttributes
  depth: number
  line: number
  message: BoundedText | null
  stack: BoundedText | null
  output: BoundedText | null
}

/**
 * Parses an NUnit result XML file whole.
 * @example const report = await parseNunit(sourceFromFile('TestResult.xml'))
 */
export function parseNunit(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamNunit(source, opts))
}

/**
 * Streams NUnit 3 (and NUnit 2) result XML case by case. Module = the fully qualified class (`classname`), name =
 * the rest of the full name (`Add(1,2)` with its arguments), as TRX and JUnit loggers name NUnit tests; the run
 * takes its times from <test-run> and its host from <environment machine-name>.
 * @example for await (const chunk of streamNunit(sourceFromFile('TestResult.xml')).cases) console.log(chunk.length)
 */
export function streamNunit(source: ReportSource, _opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  const out: ParsedCase[] = []
  const steps = xmlSteps(source, (ctx) => {
    let current: CaseDraft | null = null
    let target: BoundedText | null = null
    let targetDepth = -1
    let inFailure = false
    return {
      open(tag, depth) {
        const a = tag.attributes
        const name = tag.name
        if (depth === 1) {
          if (!ROOTS.has(name)) ctx.fail(`not an NUnit report: the root element is <${name}>, expected <test-run>`)
          if (name === 'test-run') {
            meta.startedAt = parseTimestamp(a['start-time'])
            meta.finishedAt = parseTimestamp(a['end-time'])
            const duration = secondsToMs(a.duration)
            if (duration !== null && Number.isFinite(duration)) meta.durationMs = duration
          }
        }
        if (!current) {
          if (name === 'test-case') {
            current = { attrs: a, depth, line: ctx.line(), message: null, stack: null, output: null }
          } else if (name === 'environment' && a['machine-name']) {
            meta.runnerId ??= ownString(a['machine-name'])
          }
          return
        }
        if (name === 'failure' || name === 'reason') inFailure = true
        else if (inFailure && name === 'message') target = current.message ??= new BoundedText()
        else if (inFailure && name === 'stack-trace') target = current.stack ??= new BoundedText()
        else if (name === 'output') target = current.output ??= new BoundedText()
        else return
        targetDepth = depth
        ctx.captureText(true)
      },
      close(name, depth) {
        if (target && depth === targetDepth) {
          target = null
          ctx.captureText(false)
        }
        if (!current) return
        if (name === 'failure' || name === 'reason') inFailure = false
        else if (name === 'test-case' && depth === current.depth) {
          out.push(toCase(ctx, current))
          current = null
        }
      },
      text(text) {
        target?.push(text)
      },
    }
  })
  return { format: 'nunit', meta, cases: chunkCases(steps, out) }
}

function toCase(ctx: XmlContext, d: CaseDraft): ParsedCase {
  const a = d.attrs
  const full = checkedName(ctx.file, d.line, 'test full name', a.fullname ?? a.name)
  let module = checkedName(ctx.file, d.line, 'test class name', a.classname)
  let name = full
  if (module && full.startsWith(`${module}.`)) name = full.slice(module.length + 1)
  else if (!module) {
    // NUnit 2 names a case by its full name only: the class is everything before the method's last dot.
    const args = full.indexOf('(')
    const dot = full.lastIndexOf('.', args < 0 ? full.length : args)
    if (dot > 0) {
      module = full.slice(0, dot)
      name = full.slice(dot + 1)
    }
  }
  const result = (a.result ?? '') as NunitResult
  let status: ResultStatus = RESULT[result] ?? (a.executed === 'False' ? 'skipped' : 'passed')
  if (status === 'failed' && a.label && ERROR_LABELS.has(a.label)) status = 'error'
  if (a.executed === 'False') status = 'skipped'
  const message = textOf(d.message)
  const stack = textOf(d.stack)
  const failing = status === 'failed' || status === 'error'
  return {
    module: ownString(module),
    name: ownString(name || '(unnamed)'),
    file: null,
    status,
    flakyOnRetry: false,
    durationMs: secondsToMs(a.duration ?? a.time),
    errorType: failing ? errorTypeOf(message) : null,
    message: failing || status === 'skipped' ? message && truncateText(message) : null,
    stack: failing ? (stack ?? textOf(d.output)) : null,
    healingOccurred: false,
    attempts: [],
  }
}

/** NUnit writes an unexpected exception as `System.IO.IOException : message`. */
function errorTypeOf(message: string | null): string | null {
  const m = message ? /^([A-Za-z_][\w.]*(?:Exception|Error)) : /.exec(message) : null
  return m ? ownString(m[1]!) : null
}
