import { ReportParseError } from '../errors.js'
import type { ResultStatus } from '../model.js'
import { BoundedText, MAX_NAME, ownString, truncateText } from './bounded-text.js'
import { parseTimestamp } from './timestamps.js'
import { withPositions } from './execution-order.js'
import type { ParsedCase, ParsedReport, ReportRunMeta, ReportSource } from './types.js'
import { streamXml } from './xml-stream.js'

/*
 * The Visual Studio TRX subset read (vstest `--logger trx` and Microsoft.Testing.Platform):
 *   <TestRun> <Times start finish/>
 *     <Results> <UnitTestResult testId testName outcome duration computerName>
 *                 <Output> <StdOut/> <ErrorInfo> <Message/> <StackTrace/> </ErrorInfo> </Output>
 *     <TestDefinitions> <UnitTest id> <TestMethod className name/> </UnitTest>
 * Results come before the definitions that give their class, so results are joined to definitions at the end.
 * Data-driven parents (<InnerResults>) are kept as one result; their rows are not separate tests.
 */
interface TrxResultAttributes {
  testId?: string
  testName?: string
  outcome?: string
  duration?: string
  /** The result's `startTime`, epoch ms; NaN when absent. */
  start: number
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

/**
 * Parses a Visual Studio TRX file (xUnit, NUnit and MSTest under `dotnet test`), streaming.
 * @example const report = await parseTrx(sourceFromFile('TestResults/run.trx'))
 */
export async function parseTrx(source: ReportSource): Promise<ParsedReport> {
  const drafts: ResultDraft[] = []
  const classes = new Map<string, TrxTestMethodAttributes>()
  const meta: ReportRunMeta = {}

  await streamXml(source, (ctx) => {
    let resultDepth = -1
    let current: ResultDraft | null = null
    let definition: string | null = null
    let target: BoundedText | null = null
    let targetDepth = -1
    return {
      open(tag, depth) {
        const a = tag.attributes
        const name = localName(tag.name)
        if (depth === 1 && name !== 'TestRun') {
          ctx.fail(`not a TRX report: the root element is <${tag.name}>, expected <TestRun>`)
        }
        if (current) {
          if (name === 'Message') target = current.message ??= new BoundedText()
          else if (name === 'StackTrace') target = current.stack ??= new BoundedText()
          else return
          targetDepth = depth
          ctx.captureText(true)
        } else if (name === 'UnitTestResult') {
          const outcome = a.outcome ?? 'NotExecuted'
          if (!(outcome in OUTCOME)) ctx.fail(`unknown TRX outcome "${outcome}"`)
          // Results wait for the definitions at the end of the file: keep copies, not views into input chunks.
          const attrs: TrxResultAttributes = {
            testId: owned(a.testId),
            testName: owned(a.testName),
            outcome,
            duration: a.duration,
            start: a.startTime ? Date.parse(a.startTime) : NaN,
            computerName: owned(a.computerName),
          }
          current = { attrs, message: null, stack: null, line: ctx.line() }
          resultDepth = depth
        } else if (name === 'UnitTest') {
          definition = owned(a.id) ?? null
        } else if (name === 'TestMethod' && definition) {
          classes.set(definition, { className: owned(a.className), name: owned(a.name), codeBase: owned(a.codeBase) })
        } else if (name === 'Times') {
          meta.startedAt = parseTimestamp(a.start)
          meta.finishedAt = parseTimestamp(a.finish)
        }
      },
      close(name, depth) {
        if (target && depth === targetDepth) {
          target = null
          ctx.captureText(false)
        }
        if (current && depth === resultDepth) {
          drafts.push(current)
          current = null
        } else if (localName(name) === 'UnitTest') {
          definition = null
        }
      },
      text(text) {
        target?.push(text)
      },
    }
  })

  const cases = withPositions(
    drafts.map((d) => toCase(source.name, d, classes)),
    // vstest runs a class's tests in parallel or in any order; each result's start time says which came first.
    drafts.map((d) => d.attrs.start),
  )
  const host = drafts.find((d) => d.attrs.computerName)?.attrs.computerName
  meta.runnerId = host ? ownString(host) : null
  if (meta.startedAt && meta.finishedAt) meta.durationMs = Date.parse(meta.finishedAt) - Date.parse(meta.startedAt)
  return { format: 'trx', cases, meta }
}

function toCase(file: string, d: ResultDraft, classes: Map<string, TrxTestMethodAttributes>): ParsedCase {
  const a = d.attrs
  const method = a.testId ? classes.get(a.testId) : undefined
  // vstest sometimes writes an assembly-qualified name: "Ns.Class, Assembly, Version=…".
  const className = method?.className?.split(',')[0]?.trim() || assemblyName(method?.codeBase)
  let name = (a.testName ?? method?.name ?? '').trim()
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
    module: ownString(className),
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

function owned(value: string | undefined): string | undefined {
  return value === undefined ? undefined : ownString(value)
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
