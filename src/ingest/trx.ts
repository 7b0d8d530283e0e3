import { ReportLimitError, ReportParseError } from '../errors.js'
import { MAX_CASES_PER_REPORT } from '../limits.js'
import type { ResultStatus } from '../model.js'
import { BoundedText, MAX_NAME, ownString, truncateText } from './bounded-text.js'
import { CASE_CHUNK, collectReport } from './collect.js'
import { rankByKey } from './execution-order.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'
import { streamXml, xmlSteps } from './xml-stream.js'

/*
 * The Visual Studio TRX subset read (vstest `--logger trx` and Microsoft.Testing.Platform):
 *   <TestRun> <Times start finish/>
 *     <Results> <UnitTestResult testId testName outcome duration computerName>
 *                 <Output> <StdOut/> <ErrorInfo> <Message/> <StackTrace/> </ErrorInfo> </Output>
 *     <TestDefinitions> <UnitTest id> <TestMethod className name/> </UnitTest>
 * Results come before the definitions that give their class, so results are joined to definitions at the end.
 * Data-driven parents (<InnerResults>) are kept as one result; their rows are not separate tests.
 * Results come first and their classes last, so the file is read twice (see `streamTrx`).
 */
interface TrxResultAttributes {
  testId?: string
  testName?: string
  outcome?: string
  duration?: string
  /** Read in the first pass only. */
  startTime?: string
  computerName?: string
}

interface TrxTestMethodAttributes {
  className?: string
  name?: string
  codeBase?: string
}

/** Microsoft.VisualStudio.TestTools.Common.TestOutcome, as serialised. */
type TrxOutcome =
  | 'Passed'
  | 'Failed'
  | 'Error'
  | 'Timeout'
  | 'Aborted'
  | 'Inconclusive'
  | 'PassedButRunAborted'
  | 'NotRunnable'
  | 'NotExecuted'
  | 'Disconnected'
  | 'Warning'
  | 'Completed'
  | 'InProgress'
  | 'Pending'

const OUTCOME: Record<TrxOutcome, ResultStatus> = {
  Passed: 'passed',
  PassedButRunAborted: 'passed',
  Completed: 'passed',
  // The test passed; the warning is about its output or the adapter.
  Warning: 'passed',
  Failed: 'failed',
  Timeout: 'failed',
  Error: 'error',
  Aborted: 'error',
  Disconnected: 'error',
  InProgress: 'error',
  Inconclusive: 'skipped',
  NotRunnable: 'skipped',
  NotExecuted: 'skipped',
  Pending: 'skipped',
}

interface ResultDraft {
  attrs: TrxResultAttributes
  message: BoundedText | null
  stack: BoundedText | null
  line: number
}

/** What the first pass learns: everything a result needs that the file states only after the results. */
interface TrxIndex {
  /** Test id to its class, as `toCase` names the module (one string per distinct class). */
  classes: Map<string, string>
  /** Test id to the method name, for results without a `testName`. */
  names: Map<string, string>
  /** Each result's execution position, in file order, or null when not every result has a start time. */
  positions: number[] | null
  results: number
}

/**
 * Parses a Visual Studio TRX file (xUnit, NUnit and MSTest under `dotnet test`) whole.
 * @example const report = await parseTrx(sourceFromFile('TestResults/run.trx'))
 */
export function parseTrx(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamTrx(source, opts))
}

/**
 * Streams a TRX file in two passes, since the test definitions (which give each result its class) follow the
 * results: the first pass reads only definitions, start times and counts, refusing a report over the case limit
 * before anything is stored; the second hands results on a chunk at a time. Memory follows the number of distinct
 * tests (a class name and an id each), never the messages and stacks, which are read only in the second pass.
 * @example for await (const chunk of streamTrx(sourceFromFile('run.trx')).cases) console.log(chunk.length)
 */
export function streamTrx(source: ReportSource, _opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  return { format: 'trx', meta, cases: trxCases(source, meta) }
}

async function* trxCases(source: ReportSource, meta: ReportRunMeta): AsyncGenerator<ParsedCase[], void, undefined> {
  const index = await indexTrx(source, meta)
  let cases: ParsedCase[] = []
  let n = 0
  const steps = xmlSteps(source, (ctx) => {
    let resultDepth = -1
    let current: ResultDraft | null = null
    let target: BoundedText | null = null
    let targetDepth = -1
    return {
      open(tag, depth) {
        const a = tag.attributes
        const name = localName(tag.name)
        if (current) {
          if (name === 'Message') target = current.message ??= new BoundedText()
          else if (name === 'StackTrace') target = current.stack ??= new BoundedText()
          else return
          targetDepth = depth
          ctx.captureText(true)
        } else if (name === 'UnitTestResult') {
          current = { attrs: a, message: null, stack: null, line: ctx.line() }
          resultDepth = depth
        }
      },
      close(_name, depth) {
        if (target && depth === targetDepth) {
          target = null
          ctx.captureText(false)
        }
        if (current && depth === resultDepth) {
          const c = toCase(source.name, current, index)
          if (index.positions) c.position = index.positions[n]!
          n++
          cases.push(c)
          current = null
        }
      },
      text(text) {
        target?.push(text)
      },
    }
  })
  for await (const _ of steps) {
    if (cases.length >= CASE_CHUNK) {
      yield cases
      cases = []
    }
  }
  if (cases.length > 0) yield cases
}

/** The first pass: definitions, start times, run times and host, and the result count checked against its limit. */
async function indexTrx(source: ReportSource, meta: ReportRunMeta): Promise<TrxIndex> {
  const classes = new Map<string, string>()
  const names = new Map<string, string>()
  // One string per distinct class name, however many tests share it.
  const classNames = new Map<string, string>()
  const starts: number[] = []
  let host: string | null = null
  await streamXml(source, (ctx) => {
    let resultDepth = -1
    let definition: string | null = null
    return {
      open(tag, depth) {
        const a = tag.attributes
        const name = localName(tag.name)
        if (depth === 1 && name !== 'TestRun') {
          ctx.fail(`not a TRX report: the root element is <${tag.name}>, expected <TestRun>`)
        }
        if (resultDepth >= 0) return
        if (name === 'UnitTestResult') {
          const r = a as TrxResultAttributes
          const outcome = r.outcome ?? 'NotExecuted'
          if (!(outcome in OUTCOME)) ctx.fail(`unknown TRX outcome "${outcome}"`)
          if (starts.length >= MAX_CASES_PER_REPORT) {
            throw new ReportLimitError(ctx.file, 'test cases', MAX_CASES_PER_REPORT, undefined)
          }
          starts.push(r.startTime ? Date.parse(r.startTime) : NaN)
          if (host === null && r.computerName) host = ownString(r.computerName)
          resultDepth = depth
        } else if (name === 'UnitTest') {
          definition = a.id === undefined ? null : ownString(a.id)
        } else if (name === 'TestMethod' && definition) {
          const m = a as TrxTestMethodAttributes
          // vstest sometimes writes an assembly-qualified name: "Ns.Class, Assembly, Version=…".
          const className = m.className?.split(',')[0]?.trim() || assemblyName(m.codeBase)
          let shared = classNames.get(className)
          if (shared === undefined) classNames.set(className, (shared = ownString(className)))
          classes.set(definition, shared)
          if (m.name !== undefined) names.set(definition, ownString(m.name))
        } else if (name === 'Times') {
          meta.startedAt = parseTimestamp(a.start)
          meta.finishedAt = parseTimestamp(a.finish)
        }
      },
      close(name, depth) {
        if (depth === resultDepth) resultDepth = -1
        else if (localName(name) === 'UnitTest') definition = null
      },
      text() {},
    }
  })
  meta.runnerId = host
  if (meta.startedAt && meta.finishedAt) meta.durationMs = Date.parse(meta.finishedAt) - Date.parse(meta.startedAt)
  // vstest runs a class's tests in parallel or in any order; each result's start time says which came first.
  return { classes, names, positions: rankByKey(starts), results: starts.length }
}

function toCase(file: string, d: ResultDraft, index: TrxIndex): ParsedCase {
  const a = d.attrs
  const className = (a.testId ? index.classes.get(a.testId) : undefined) ?? ''
  const methodName = a.testId ? index.names.get(a.testId) : undefined
  let name = (a.testName ?? methodName ?? '').trim()
  if (className && name.startsWith(`${className}.`)) name = name.slice(className.length + 1)
  if (name.length > MAX_NAME || className.length > MAX_NAME) {
    throw new ReportParseError(file, d.line, `test name longer than ${MAX_NAME} characters`)
  }
  const outcome = (a.outcome ?? 'NotExecuted') as TrxOutcome
  const status = OUTCOME[outcome]
  // Windows line ends survive XML parsing as &#xD; references.
  const message = d.message?.value().replace(/\r\n?/g, '\n').trim() || null
  const stack = d.stack?.value().replace(/\r\n?/g, '\n').trim() || null
  return {
    module: className,
    name: ownString(name || '(unnamed)'),
    file: null,
    status,
    flakyOnRetry: false,
    durationMs: parseTimeSpan(a.duration),
    errorType: outcome === 'Timeout' ? 'timeout' : null,
    message: message === null ? null : truncateText(message),
    stack,
    healingOccurred: false,
    attempts: [],
  }
}

/** Class-less results (xUnit v3 "[Test Class Cleanup Failure (…)]") belong to their test assembly. */
function assemblyName(codeBase: string | undefined): string {
  const base = codeBase?.split(/[/\\]/).at(-1) ?? ''
  return base.replace(/\.(dll|exe)$/i, '')
}

/** Drops a namespace prefix: some writers use `<t:TestRun xmlns:t=…>`. */
function localName(name: string): string {
  const colon = name.indexOf(':')
  return colon < 0 ? name : name.slice(colon + 1)
}

/** A .NET TimeSpan, `[d.]hh:mm:ss[.fffffff]`, to milliseconds. */
function parseTimeSpan(value: string | undefined): number | null {
  const m = value ? /^(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(value.trim()) : null
  if (!m) return null
  const [, days, hours, minutes, seconds] = m
  const ms = ((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000
  return Math.round(ms * 1000) / 1000
}
