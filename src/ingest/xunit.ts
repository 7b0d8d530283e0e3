import type { ResultStatus } from '../model.js'
import { BoundedText, checkedName, ownString, textOf, truncateText } from './bounded-text.js'
import { chunkCases, collectReport } from './collect.js'
import { parseTimestamp, secondsToMs } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'
import { xmlSteps, type XmlContext } from './xml-stream.js'

/*
 * xUnit.net v2 XML (`xunit.console -xml`, `dotnet test -- xUnit…`, also written by Fixie and others):
 *   <assemblies timestamp> <assembly name run-date run-time time environment test-framework>
 *     <collection name> <test name type method time result="Pass|Fail|Skip|NotRun">
 *       <traits/> <failure exception-type><message/><stack-trace/></failure> <reason/> <output/>
 * xUnit.net has no retries of its own.
 */
interface XunitTestAttributes {
  name?: string
  type?: string
  method?: string
  time?: string
  result?: string
}

type XunitResult = 'Pass' | 'Fail' | 'Skip' | 'NotRun'

const RESULT: Record<XunitResult, ResultStatus> = { Pass: 'passed', Fail: 'failed', Skip: 'skipped', NotRun: 'skipped' }

interface TestDraft {
  attrs: XunitTestAttributes
  depth: number
  line: number
  exceptionType: string | null
  message: BoundedText | null
  stack: BoundedText | null
  reason: BoundedText | null
}

/**
 * Parses an xUnit.net v2 XML file whole.
 * @example const report = await parseXunit(sourceFromFile('TestResults.xml'))
 */
export function parseXunit(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamXunit(source, opts))
}

/**
 * Streams xUnit.net v2 XML test by test. Module = the fully qualified class (`type`), name = the test's name
 * without that class (`Adds(x: 1)`, arguments kept), as TRX names xUnit tests. The run starts at the earliest
 * assembly's `run-date`/`run-time` (or `<assemblies timestamp>`).
 * @example for await (const chunk of streamXunit(sourceFromFile('TestResults.xml')).cases) console.log(chunk.length)
 */
export function streamXunit(source: ReportSource, _opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  const out: ParsedCase[] = []
  let totalMs = 0
  const steps = xmlSteps(source, (ctx) => {
    let current: TestDraft | null = null
    let target: BoundedText | null = null
    let targetDepth = -1
    return {
      open(tag, depth) {
        const a = tag.attributes
        const name = tag.name
        if (depth === 1 && name !== 'assemblies' && name !== 'assembly') {
          ctx.fail(`not an xUnit.net report: the root element is <${name}>, expected <assemblies>`)
        }
        if (!current) {
          if (name === 'test') {
            current = {
              attrs: a,
              depth,
              line: ctx.line(),
              exceptionType: null,
              message: null,
              stack: null,
              reason: null,
            }
          } else if (name === 'assembly') {
            const start = parseTimestamp(
              a['run-date'] && a['run-time'] ? `${a['run-date']}T${a['run-time']}` : undefined,
            )
            if (start && (!meta.startedAt || start < meta.startedAt)) meta.startedAt = start
            const time = secondsToMs(a.time)
            if (time !== null && Number.isFinite(time)) totalMs += time
          } else if (name === 'assemblies' && a.timestamp) {
            meta.startedAt ??= parseTimestamp(a.timestamp)
          }
          return
        }
        if (name === 'failure') current.exceptionType = a['exception-type'] ? ownString(a['exception-type']) : null
        else if (name === 'message') target = current.message ??= new BoundedText()
        else if (name === 'stack-trace') target = current.stack ??= new BoundedText()
        else if (name === 'reason') target = current.reason ??= new BoundedText()
        else return
        targetDepth = depth
        ctx.captureText(true)
      },
      close(name, depth) {
        if (target && depth === targetDepth) {
          target = null
          ctx.captureText(false)
        }
        if (current && name === 'test' && depth === current.depth) {
          out.push(toCase(ctx, current))
          current = null
        }
      },
      text(text) {
        target?.push(text)
      },
    }
  })
  async function* withTotals(): AsyncGenerator<void> {
    for await (const _ of steps) yield
    if (totalMs > 0) meta.durationMs = totalMs
  }
  return { format: 'xunit', meta, cases: chunkCases(withTotals(), out) }
}

function toCase(ctx: XmlContext, d: TestDraft): ParsedCase {
  const a = d.attrs
  const type = checkedName(ctx.file, d.line, 'test class name', a.type)
  let name = checkedName(ctx.file, d.line, 'test name', a.name ?? a.method)
  if (type && name.startsWith(`${type}.`)) name = name.slice(type.length + 1)
  const status = RESULT[(a.result ?? '') as XunitResult] ?? 'passed'
  const failing = status === 'failed'
  const message = textOf(failing ? d.message : d.reason)
  return {
    module: type,
    name: ownString(name || '(unnamed)'),
    file: null,
    status,
    flakyOnRetry: false,
    durationMs: secondsToMs(a.time),
    errorType: failing ? d.exceptionType : null,
    message: message && truncateText(message),
    stack: failing ? textOf(d.stack) : null,
    healingOccurred: false,
    attempts: [],
  }
}
