import { ReportLimitError } from '../errors.js'
import { MAX_OPEN_OUTPUT, MAX_OPEN_TESTS, MAX_RUN_TIMINGS, MAX_TEXT } from '../limits.js'
import type { ResultStatus, RunTiming } from '../model.js'
import { checkedName, ownString, truncateText } from './bounded-text.js'
import { chunkCases, collectReport } from './collect.js'
import { parseJsonLine, sourceLines } from './line-stream.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/*
 * `go test -json` (cmd/test2json): one JSON event per line. gotestsum's `--jsonfile` is the same stream, with the
 * reruns of `--rerun-fails` appended; `-count=N` repeats each test's run..pass/fail events. Every finished run of a
 * test becomes one case, and ingest folds the repeats of one test into attempts: a failure and then a pass is
 * flaky on retry.
 */
interface GoEvent {
  Time?: string
  Action: GoAction
  Package?: string
  Test?: string
  Elapsed?: number
  Output?: string
}

type GoAction = 'start' | 'run' | 'pause' | 'cont' | 'pass' | 'bench' | 'fail' | 'output' | 'skip'

const STATUS: Partial<Record<GoAction, ResultStatus>> = {
  pass: 'passed',
  bench: 'passed',
  fail: 'failed',
  skip: 'skipped',
}

const ACTIONS = new Set<string>(['start', 'run', 'pause', 'cont', 'pass', 'bench', 'fail', 'output', 'skip'])

/** gotestsum's name for a package that failed outside any test (TestMain, init, a panic, a build error). */
const PACKAGE_FAILURE = 'TestMain'

/** The framing lines go test prints around a test's own output. */
const FRAMING = /^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:PASS|FAIL|SKIP):|PASS$|FAIL$|ok\s|FAIL\s)/

interface OpenTest {
  output: string[]
  held: number
  cut: boolean
}

interface PackageState {
  failedTests: number
  output: OpenTest
}

/**
 * Parses `go test -json` output (and gotestsum's `--jsonfile`) whole.
 * @example const report = await parseGoJson(sourceFromFile('go-test.json'))
 */
export function parseGoJson(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamGoJson(source, opts))
}

/**
 * Streams `go test -json` events line by line. Module = the package import path, name = the test name with its
 * subtests (`TestTable/two`), as gotestsum's and go-junit-report's JUnit write them, so both reports of one run
 * give one id. A package that fails with no failed test gives a `TestMain` failure, as gotestsum does. Output is
 * kept only for tests still running (each up to 64 KB, all together up to `MAX_OPEN_OUTPUT`).
 * @example for await (const chunk of streamGoJson(sourceFromFile('go-test.json')).cases) console.log(chunk.length)
 */
export function streamGoJson(source: ReportSource, _opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  const out: ParsedCase[] = []
  return { format: 'go-json', meta, cases: chunkCases(goSteps(source, meta, out), out) }
}

async function* goSteps(source: ReportSource, meta: ReportRunMeta, out: ParsedCase[]): AsyncGenerator<void> {
  const file = source.name
  const open = new Map<string, Map<string, OpenTest>>()
  const packages = new Map<string, PackageState>()
  let held = 0
  let running = 0
  let first: number | null = null
  let last: number | null = null
  // A package's own pass/fail/skip event carries its whole time. gotestsum's reruns give a package again: its
  // times add up, and its last verdict stands.
  const timings = new Map<string, RunTiming>()
  const timePackage = (name: string, action: 'pass' | 'fail' | 'skip', elapsed: unknown, line: number) => {
    if (typeof elapsed !== 'number' || !Number.isFinite(elapsed) || elapsed < 0) return
    const durationMs = Math.round(elapsed * 1e6) / 1e3
    const status = STATUS[action] as RunTiming['status']
    const before = timings.get(name)
    if (before) {
      before.durationMs = Math.round((before.durationMs + durationMs) * 1e3) / 1e3
      before.status = status
    } else {
      if (timings.size >= MAX_RUN_TIMINGS) {
        throw new ReportLimitError(file, `line ${line}: packages with a time`, MAX_RUN_TIMINGS, undefined)
      }
      timings.set(name, { name, durationMs, status })
    }
  }

  const append = (t: OpenTest, text: string) => {
    if (t.cut || t.held + text.length > MAX_TEXT || held + text.length > MAX_OPEN_OUTPUT) {
      t.cut = true
      return
    }
    t.output.push(text)
    t.held += text.length
    held += text.length
  }
  const release = (t: OpenTest) => {
    held -= t.held
    t.held = 0
  }
  const packageOf = (name: string): PackageState => {
    let p = packages.get(name)
    if (!p) packages.set(name, (p = { failedTests: 0, output: { output: [], held: 0, cut: false } }))
    return p
  }
  const finish = (
    pkg: string,
    test: string,
    status: ResultStatus,
    t: OpenTest | undefined,
    elapsed: number | undefined,
  ) => {
    if (t) release(t)
    const text = t ? failureText(t) : null
    out.push({
      module: pkg,
      name: test,
      file: null,
      status,
      flakyOnRetry: false,
      durationMs: typeof elapsed === 'number' ? Math.round(elapsed * 1e6) / 1e3 : null,
      errorType: null,
      message: status === 'passed' ? null : firstLine(text),
      stack: status === 'failed' || status === 'error' ? text : null,
      healingOccurred: false,
      attempts: [],
    })
  }

  for await (const batch of sourceLines(source)) {
    for (const { text, number } of batch) {
      if (text.trim() === '') continue
      // A build error or a vet warning printed between the events (go test -json writes those to stderr, but
      // `2>&1` is common): not an event, and not worth refusing the report over.
      if (!text.startsWith('{')) continue
      const e = parseJsonLine(file, number, text) as GoEvent
      if (typeof e !== 'object' || e === null || typeof e.Action !== 'string' || !ACTIONS.has(e.Action)) {
        continue
      }
      const at = e.Time ? Date.parse(e.Time) : NaN
      if (Number.isFinite(at)) {
        if (first === null || at < first) first = at
        if (last === null || at > last) last = at
      }
      if (typeof e.Package !== 'string') continue
      const pkgName = checkedName(file, number, 'package path', e.Package)
      const tests = open.get(pkgName) ?? new Map<string, OpenTest>()
      if (!open.has(pkgName)) open.set(pkgName, tests)
      if (typeof e.Test !== 'string' || e.Test === '') {
        const pkg = packageOf(pkgName)
        if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') {
          timePackage(pkgName, e.Action, e.Elapsed, number)
        }
        if (e.Action === 'output' && typeof e.Output === 'string') append(pkg.output, e.Output)
        else if (e.Action === 'fail') {
          // Tests still running when their package failed (a panic, a timeout) did not finish.
          for (const [name, t] of tests) finish(pkgName, name, 'error', t, undefined)
          running -= tests.size
          tests.clear()
          if (pkg.failedTests === 0) finish(pkgName, PACKAGE_FAILURE, 'failed', pkg.output, e.Elapsed)
          release(pkg.output)
          packages.delete(pkgName)
        } else if (e.Action === 'pass' || e.Action === 'skip') {
          release(pkg.output)
          packages.delete(pkgName)
        }
        continue
      }
      const name = checkedName(file, number, 'test name', e.Test)
      if (e.Action === 'run') {
        const before = tests.get(name)
        if (before) release(before)
        else if (++running > MAX_OPEN_TESTS) {
          throw new ReportLimitError(file, `line ${number}: tests running at once`, MAX_OPEN_TESTS, undefined)
        }
        tests.set(name, { output: [], held: 0, cut: false })
      } else if (e.Action === 'output') {
        const t = tests.get(name)
        if (t && typeof e.Output === 'string') append(t, e.Output)
      } else {
        const status = STATUS[e.Action]
        if (!status) continue
        const t = tests.get(name)
        if (t) {
          tests.delete(name)
          running--
        }
        if (status === 'failed') packageOf(pkgName).failedTests++
        finish(pkgName, name, status, t, e.Elapsed)
      }
    }
    yield
  }
  // Tests that never finished: the stream was cut (a killed job) or the package crashed without a verdict.
  for (const [pkg, tests] of open) for (const [name, t] of tests) finish(pkg, name, 'error', t, undefined)
  if (first !== null) meta.startedAt = parseTimestamp(first)
  if (last !== null) meta.finishedAt = parseTimestamp(last)
  if (first !== null && last !== null) meta.durationMs = last - first
  if (timings.size > 0) meta.timings = [...timings.values()]
}

/** The test's own output, without go test's framing lines; null when it printed nothing else. */
function failureText(t: OpenTest): string | null {
  const lines = t.output
    .join('')
    .split('\n')
    .filter((l) => l.trim() !== '' && !FRAMING.test(l))
  const text = dedent(lines).join('\n').trim()
  if (text === '') return null
  return ownString(truncateText(t.cut ? `${text}\n… [output cut]` : text))
}

function dedent(lines: string[]): string[] {
  let indent = Infinity
  for (const l of lines) indent = Math.min(indent, /^ */.exec(l)![0].length)
  return indent > 0 && indent < Infinity ? lines.map((l) => l.slice(indent)) : lines
}

function firstLine(text: string | null): string | null {
  if (!text) return null
  const nl = text.indexOf('\n')
  return nl < 0 ? text : text.slice(0, nl)
}
