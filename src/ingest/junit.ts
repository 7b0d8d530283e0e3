import type { SaxesTagPlain } from 'saxes'
import type { Attempt, ResultStatus } from '../model.js'
import { BoundedText, MAX_NAME, MAX_TEXT, ownString, truncateText } from './bounded-text.js'
import { splitFailure } from './failure-text.js'
import { rspecFile } from './ci-path.js'
import { stripAnsi } from './strip-ansi.js'
import { applyRunProperty } from './run-properties.js'
import { isoTime, isTrustedDuration, parseTimestamp, secondsToMs } from './timestamps.js'
import { ReportLimitError } from '../errors.js'
import { resolveIngestLimits, type IngestLimits } from '../limits.js'
import { CASE_CHUNK, collectReport } from './collect.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'
import { xmlSteps, type XmlContext, type XmlHandlers } from './xml-stream.js'

/*
 * The JUnit XML subset read. There is no standard, only dialects; the ones handled and their quirks:
 * - Surefire/Gradle: lone <testsuite> root; `flakyFailure`/`flakyError` (failed tries before a pass) and
 *   `rerunFailure`/`rerunError` (further failed tries) inside <testcase>, each with its own <stackTrace>.
 * - pytest xunit1/xunit2, nose (`skip=` count on the suite), go-junit-report, gotestsum, cargo-nextest, Ginkgo
 *   (`status=` on <testcase>), Bazel (`status="run"`/`"notrun"`), .NET JUnit logger, PHPUnit (nested suites,
 *   cases with `file=` and no classname), mocha xunit.
 * - jest-junit: <testsuite name> is the test file and `classname` the describe path (` › ` joined), so the
 *   module is the file and the describe path joins the name; with its default templates classname == name.
 * - mocha-junit-reporter (Cypress): a "Root Suite" carrying `file=` precedes the describe suites of that file,
 *   and `classname` is the test's own title.
 * - Playwright: <testsuites id=""> root, <testsuite hostname> is the project name (an env facet, not a host).
 * - node:test: `classname="test"` on every case, describe blocks as nested suites.
 * - rspec_junit_formatter: `classname` is the spec file dotted, `file=` the file: the file is the module.
 */
interface JunitSuiteAttributes {
  name?: string
  file?: string
  hostname?: string
  timestamp?: string
  time?: string
}

interface JunitCaseAttributes {
  name?: string
  classname?: string
  file?: string
  time?: string
  /** Ginkgo, Bazel and a few others say the outcome here too. */
  status?: string
  /** `disabled="true"` / `skipped="true"`: writers that mark a skip on the case instead of a <skipped> child. */
  disabled?: string
  skipped?: string
}

interface JunitOutcomeAttributes {
  message?: string
  type?: string
}

type JunitOutcomeElement = 'failure' | 'error' | 'skipped'
type JunitRetryElement = 'flakyFailure' | 'flakyError' | 'rerunFailure' | 'rerunError'
/** Values of <testcase status="…"> seen in Ginkgo, Bazel, node and .NET writers. */
type JunitCaseStatus =
  | 'passed'
  | 'success'
  | 'failed'
  | 'failure'
  | 'error'
  | 'errored'
  | 'panicked'
  | 'interrupted'
  | 'aborted'
  | 'timedout'
  | 'skipped'
  | 'pending'
  | 'disabled'
  | 'notrun'
  | 'run'

const OUTCOME_STATUS: Record<JunitOutcomeElement, ResultStatus> = {
  failure: 'failed',
  error: 'error',
  skipped: 'skipped',
}

const RETRY_KIND: Record<JunitRetryElement, { status: ResultStatus; flaky: boolean }> = {
  flakyFailure: { status: 'failed', flaky: true },
  flakyError: { status: 'error', flaky: true },
  rerunFailure: { status: 'failed', flaky: false },
  rerunError: { status: 'error', flaky: false },
}

/** `null`: the attribute does not decide; the child elements do (`run` is Bazel's "it ran"). */
const CASE_STATUS: Record<JunitCaseStatus, ResultStatus | null> = {
  passed: 'passed',
  success: 'passed',
  failed: 'failed',
  failure: 'failed',
  timedout: 'failed',
  error: 'error',
  errored: 'error',
  panicked: 'error',
  interrupted: 'error',
  aborted: 'error',
  skipped: 'skipped',
  pending: 'skipped',
  disabled: 'skipped',
  notrun: 'skipped',
  run: null,
}

/** `type=` values that name no error class, only the element. */
/** Attempts read from one testcase's repeated <failure>/<error> elements. */
export const MAX_ATTEMPTS_PER_CASE = 1000

const GENERIC_TYPES = new Set(['', 'failure', 'failed', 'error', 'test failure', 'skipped', 'skip'])

/** Hostnames that identify nothing. */
const ANONYMOUS_HOSTS = new Set(['', 'localhost', 'redacted', 'unknown', 'hostname'])

/** Test files of JS runners, whose jest-junit suite names are the file and classnames the describe path. */
const JS_TEST_FILE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/i

const PLAYWRIGHT_LOCATION = /^\S+:\d+:\d+ /

/** mocha-junit-reporter's name for the per-file root suite. */
const MOCHA_ROOT_SUITE = 'Root Suite'
/** node:test writes this classname on every case. */
const NODE_TEST_CLASSNAME = 'test'

interface SuiteFrame {
  name: string
  file: string | null
  hostname: string | null
  hasTimestamp: boolean
  /** A mocha "Root Suite" file= applies to the sibling suites that follow it. */
  siblingFile: string | null
}

interface OutcomeDraft {
  status: ResultStatus
  message: string | null
  type: string | null
  body: BoundedText
}

interface RetryDraft {
  status: ResultStatus
  flaky: boolean
  message: string | null
  type: string | null
  durationMs: number | null
  body: BoundedText
  stack: BoundedText
}

interface CaseDraft {
  attrs: JunitCaseAttributes
  depth: number
  suite: SuiteFrame | undefined
  suitePath: string
  outcome: OutcomeDraft | null
  /** Further <failure>/<error> elements: Vitest writes one per attempt of a test that failed every retry. */
  repeated: OutcomeDraft[] | null
  retries: RetryDraft[]
  systemOut: BoundedText | null
  systemErr: BoundedText | null
}

/**
 * Parses JUnit XML in every common dialect (see the list at the top of this file), whole.
 * @example const report = await parseJunit(sourceFromFile('target/surefire-reports/TEST-FooTest.xml'))
 */
export function parseJunit(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamJunit(source, opts))
}

/**
 * Streams JUnit XML: cases come out a chunk at a time as the file is read, so memory stays flat whatever the file
 * size (only bounded text, 64 KB per message, stack or output, is kept per case). `meta.startedAt` is the earliest
 * suite timestamp seen so far.
 * @example for await (const chunk of streamJunit(sourceFromFile('junit.xml')).cases) console.log(chunk.length)
 */
export function streamJunit(source: ReportSource, opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  return { format: 'junit', meta, cases: junitCases(source, meta, resolveIngestLimits(opts.limits)) }
}

async function* junitCases(
  source: ReportSource,
  meta: ReportRunMeta,
  limits: IngestLimits,
): AsyncGenerator<ParsedCase[], void, undefined> {
  let cases: ParsedCase[] = []
  let rootTime: number | null = null
  let earliest: number | null = null
  let latestEnd: number | null = null
  const noteStart = (ms: number) => {
    if (earliest !== null && ms >= earliest) return
    earliest = ms
    meta.startedAt = isoTime(ms)
  }

  const steps = xmlSteps(source, (ctx) => {
    const suites: SuiteFrame[] = []
    const top: SuiteFrame = { name: '', file: null, hostname: null, hasTimestamp: false, siblingFile: null }
    let playwright = false
    // <properties> of <testsuites>/<testsuite> describe the run; those inside a <testcase> never get here.
    let inRunProperties = false
    let current: CaseDraft | null = null
    let retry: RetryDraft | null = null
    let retryDepth = -1
    // Where text goes: a stack, because <stackTrace> and <system-out> nest inside the retry elements.
    const targets: { text: BoundedText; depth: number }[] = []
    const interned = new Map<string, string>()
    const intern = (s: string) => {
      let v = interned.get(s)
      if (v === undefined) interned.set(s, (v = ownString(s)))
      return v
    }

    const capture = (text: BoundedText, depth: number) => {
      targets.push({ text, depth })
      ctx.captureText(true)
    }

    const openSuite = (attrs: JunitSuiteAttributes) => {
      const parent = suites.at(-1) ?? top
      const name = (attrs.name ?? '').trim()
      const ownFile = attrs.file?.trim() || null
      if (name === MOCHA_ROOT_SUITE && ownFile) parent.siblingFile = ownFile
      const hostname = attrs.hostname?.trim() || null
      suites.push({
        name,
        file: ownFile ?? parent.file ?? parent.siblingFile,
        hostname,
        hasTimestamp: attrs.timestamp !== undefined,
        siblingFile: null,
      })
      const start = parseTimestamp(attrs.timestamp)
      if (start) {
        const ms = Date.parse(start)
        noteStart(ms)
        const time = secondsToMs(attrs.time)
        // An untrusted suite time (NaN, negative) says nothing about when the run ended.
        if (time !== null && isTrustedDuration(time) && (latestEnd === null || ms + time > latestEnd)) {
          latestEnd = ms + time
        }
      }
      if (hostname && !playwright && !ANONYMOUS_HOSTS.has(hostname.toLowerCase())) meta.runnerId ??= intern(hostname)
    }

    const handlers: XmlHandlers = {
      open(tag: SaxesTagPlain, depth: number) {
        const a = tag.attributes
        const name = tag.name
        if (depth === 1) {
          if (name !== 'testsuites' && name !== 'testsuite') {
            ctx.fail(`not a JUnit report: the root element is <${name}>, expected <testsuites> or <testsuite>`)
          }
          playwright = name === 'testsuites' && 'id' in a
          rootTime = secondsToMs(a.time)
          if (name === 'testsuites') {
            const start = parseTimestamp(a.timestamp)
            if (start) noteStart(Date.parse(start))
          }
        }
        if (current) {
          openInCase(current, name, a, depth)
          return
        }
        if (name === 'testsuite') openSuite(a)
        else if (name === 'testcase') {
          current = {
            attrs: a,
            depth,
            suite: suites.at(-1),
            suitePath: suitePath(suites),
            outcome: null,
            repeated: null,
            retries: [],
            systemOut: null,
            systemErr: null,
          }
        } else if (name === 'properties') {
          inRunProperties = true
        } else if (name === 'property' && inRunProperties && a.name !== undefined) {
          applyRunProperty(meta, a.name, a.value ?? '')
        }
      },
      close(name: string, depth: number) {
        const target = targets.at(-1)
        if (target && target.depth === depth) {
          targets.pop()
          if (targets.length === 0) ctx.captureText(false)
        }
        if (current) {
          if (retry && depth === retryDepth) retry = null
          if (name === 'testcase' && depth === current.depth) {
            cases.push(finishCase(ctx, current, playwright, intern))
            current = null
          }
          return
        }
        if (name === 'testsuite') suites.pop()
        else if (name === 'properties') inRunProperties = false
      },
      text(text: string) {
        targets.at(-1)?.text.push(text)
      },
    }

    const openInCase = (c: CaseDraft, name: string, a: Record<string, string>, depth: number) => {
      if (name in RETRY_KIND) {
        const kind = RETRY_KIND[name as JunitRetryElement]
        const attrs = a as JunitOutcomeAttributes & { time?: string }
        retry = {
          ...kind,
          message: optionalText(attrs.message),
          type: attrs.type ?? null,
          durationMs: secondsToMs(attrs.time),
          body: new BoundedText(),
          stack: new BoundedText(),
        }
        retryDepth = depth
        // The final outcome is one more attempt.
        if (c.retries.length + 2 > limits.maxAttemptsPerResult) {
          const field = `line ${ctx.line()}: <testcase name="${(c.attrs.name ?? '').slice(0, 100)}"> attempts (retry elements + 1)`
          throw new ReportLimitError(ctx.file, field, limits.maxAttemptsPerResult, undefined)
        }
        c.retries.push(retry)
        capture(retry.body, depth)
      } else if (retry && name === 'stackTrace') {
        capture(retry.stack, depth)
      } else if (retry) {
        // <system-out>/<system-err> of one retry: not kept, and not mixed into the retry's stack either.
        if (name === 'system-out' || name === 'system-err') capture(new BoundedText(0), depth)
      } else if (name in OUTCOME_STATUS) {
        const status = OUTCOME_STATUS[name as JunitOutcomeElement]
        const attrs = a as JunitOutcomeAttributes
        // The first failing element decides; a <skipped> never overrides a failure.
        if (!c.outcome || (c.outcome.status === 'skipped' && status !== 'skipped')) {
          const message = optionalText(attrs.message)
          c.outcome = { status, message, type: attrs.type ?? null, body: new BoundedText() }
          capture(c.outcome.body, depth)
        } else if (status !== 'skipped') {
          c.repeated ??= []
          if (c.repeated.length + 1 >= MAX_ATTEMPTS_PER_CASE) {
            ctx.fail(
              `a testcase has more than ${MAX_ATTEMPTS_PER_CASE} <failure>/<error> elements (limit ${MAX_ATTEMPTS_PER_CASE})`,
            )
          }
          const again: OutcomeDraft = {
            status,
            message: optionalText(attrs.message),
            type: attrs.type ?? null,
            body: new BoundedText(),
          }
          c.repeated.push(again)
          capture(again.body, depth)
        }
      } else if (name === 'system-out') {
        capture((c.systemOut ??= new BoundedText()), depth)
      } else if (name === 'system-err') {
        capture((c.systemErr ??= new BoundedText()), depth)
      }
    }
    return handlers
  })
  for await (const _ of steps) {
    if (cases.length >= CASE_CHUNK) {
      yield cases
      cases = []
    }
  }
  if (cases.length > 0) yield cases

  if (latestEnd !== null) meta.finishedAt = isoTime(latestEnd)
  meta.durationMs = rootTime ?? (earliest !== null && latestEnd !== null ? Math.round(latestEnd - earliest) : null)
}

function suitePath(suites: SuiteFrame[]): string {
  return suites
    .map((s) => s.name)
    .filter((n) => n !== '' && n !== MOCHA_ROOT_SUITE)
    .join(' › ')
}

function optionalText(value: string | undefined): string | null {
  if (value === undefined) return null
  const text = cleanText(value)
  return text === '' ? null : ownString(truncateText(text, MAX_TEXT))
}

/**
 * Text as runners write it, made comparable: .NET writers encode Windows line ends as `&#xD;&#xA;`, which XML
 * parsing keeps; colour codes arrive raw or as `&#x1B;` (not a legal XML character, so saxes leaves the
 * reference as text) and are removed either way.
 */
function cleanText(value: string): string {
  return stripAnsi(value.replace(/&#(?:x0*1[bB]|0*27);/g, '\u001b').replace(/\r\n?/g, '\n')).trim()
}

function bodyText(text: BoundedText | null | undefined): string | null {
  if (!text) return null
  return cleanText(text.value()) || null
}

function identityPart(ctx: XmlContext, what: string, value: string | undefined): string {
  const text = (value ?? '').trim()
  if (text.length > MAX_NAME) ctx.fail(`testcase ${what} is ${text.length} characters long (limit ${MAX_NAME})`)
  return text
}

function errorTypeOf(type: string | null, message: string | null, body: string | null): string | null {
  const t = type?.trim() ?? ''
  if (t === 'testTimeoutFailure' || /^Test timeout of \d+ms exceeded/m.test(`${message ?? ''}\n${body ?? ''}`)) {
    return 'timeout'
  }
  return GENERIC_TYPES.has(t.toLowerCase()) ? null : ownString(t)
}

/** Turns what was collected for one <testcase> into a case, deciding module, name, status and attempts. */
function finishCase(ctx: XmlContext, c: CaseDraft, playwright: boolean, intern: (s: string) => string): ParsedCase {
  const a = c.attrs
  let name = identityPart(ctx, 'name', a.name)
  let classname = identityPart(ctx, 'classname', a.classname)
  const suiteName = c.suite?.name ?? ''
  // jest-junit names suites after the file and Playwright/vitest use it as classname: keep it for display.
  const file =
    identityPart(ctx, 'file', a.file) ||
    c.suite?.file ||
    (JS_TEST_FILE.test(suiteName) ? suiteName : null) ||
    (JS_TEST_FILE.test(classname) ? classname : null)
  if (classname === NODE_TEST_CLASSNAME && !c.suite?.hasTimestamp) classname = ''
  // mocha-junit-reporter and jest-junit's default templates put the test's own title in classname.
  const classnameIsTitle = classname !== '' && (name === classname || name.endsWith(` ${classname}`))
  if (name === '') name = classname || '(unnamed)'

  let module: string
  const rspec = rspecJunitFile(classname, file)
  if (rspec) {
    module = rspec
  } else if (classname !== '' && !classnameIsTitle) {
    const describePath = JS_TEST_FILE.test(suiteName) && classname !== suiteName && !JS_TEST_FILE.test(classname)
    if (describePath) {
      module = suiteName
      name = `${classname} › ${name}`
    } else {
      module = classname
    }
  } else {
    module = file ?? (c.suitePath || '')
  }
  // The suite's name stands in for a file the report does not give: a label, which id reconciliation may ignore.
  const moduleIsLabel = classnameIsTitle && file === null && !rspec

  const statusAttr = a.status?.trim().toLowerCase()
  const fromAttr = statusAttr && statusAttr in CASE_STATUS ? CASE_STATUS[statusAttr as JunitCaseStatus] : null
  const outcome = c.outcome
  const flaggedSkip = a.disabled === 'true' || a.skipped === 'true'
  const status: ResultStatus = outcome?.status ?? fromAttr ?? (flaggedSkip ? 'skipped' : 'passed')
  const durationMs = secondsToMs(a.time)

  let message: string | null = null
  let stack: string | null = null
  let errorType: string | null = null
  if (outcome && outcome.status !== 'skipped') {
    const body = bodyText(outcome.body)
    const split = splitFailure(playwright ? dropPlaywrightHeader(body) : body)
    // Older Playwright versions put `file:line:col title` in message=, which says nothing about the failure.
    const located = playwright && outcome.message !== null && PLAYWRIGHT_LOCATION.test(outcome.message)
    message = (located ? null : outcome.message) ?? split.message
    stack = split.stack ?? fallbackOutput(c)
    errorType = errorTypeOf(outcome.type, message, body)
  } else if (outcome) {
    message = outcome.message ?? bodyText(outcome.body)
  } else if (statusAttr === 'timedout') {
    errorType = 'timeout'
  }

  const attempts: Attempt[] = []
  let flakyOnRetry = false
  const flaky = c.retries.filter((r) => r.flaky)
  const reruns = c.retries.filter((r) => !r.flaky)
  if (flaky.length > 0) {
    for (const r of flaky) attempts.push(retryAttempt(attempts.length, r))
    attempts.push({ retry: attempts.length, status, durationMs, message, stack })
    flakyOnRetry = status === 'passed'
    if (flakyOnRetry) {
      // Why it flaked: the last failed try, as for every other pass-on-retry.
      const lastFailure = attempts.at(-2)!
      message = lastFailure.message
      stack = lastFailure.stack
      errorType = errorTypeOf(flaky.at(-1)!.type, message, null)
    }
  } else if (reruns.length > 0) {
    attempts.push({ retry: 0, status, durationMs, message, stack })
    for (const r of reruns) attempts.push(retryAttempt(attempts.length, r))
  } else if (c.repeated !== null && outcome && outcome.status !== 'skipped') {
    attempts.push(...repeatedAttempts(c.repeated, { status, durationMs, message, stack }, playwright))
  }

  const env = playwright && c.suite?.hostname ? { project: intern(c.suite.hostname) } : undefined
  return {
    module: intern(module),
    name: ownString(name),
    file: file === null ? null : intern(rspec ?? file),
    ...(moduleIsLabel ? { moduleIsLabel } : {}),
    status,
    flakyOnRetry,
    durationMs,
    errorType: errorType === null ? null : intern(errorType),
    message,
    stack,
    healingOccurred: false,
    attempts,
    ...(env ? { env } : {}),
  }
}

/**
 * One attempt per <failure>/<error> element of one testcase (Vitest writes one per try of a test that failed
 * every retry). The duration is the testcase's, on the first attempt only: the report gives no split.
 */
function repeatedAttempts(
  repeated: readonly OutcomeDraft[],
  first: Omit<Attempt, 'retry'>,
  playwright: boolean,
): Attempt[] {
  const out: Attempt[] = [{ retry: 0, ...first }]
  for (const o of repeated) {
    const split = splitFailure(playwright ? dropPlaywrightHeader(bodyText(o.body)) : bodyText(o.body))
    out.push({
      retry: out.length,
      status: o.status,
      durationMs: null,
      message: o.message ?? split.message,
      stack: split.stack,
    })
  }
  return out
}

function retryAttempt(retry: number, r: RetryDraft): Attempt {
  const stack = bodyText(r.stack) ?? bodyText(r.body)
  return {
    retry,
    status: r.status,
    durationMs: r.durationMs,
    message: r.message ?? splitFailure(stack).message,
    stack,
  }
}

/** The `  [project] › file:line:col › title ───` line Playwright puts first in a failure body. */
function dropPlaywrightHeader(body: string | null): string | null {
  return body?.replace(/^\s*\[[^\]\n]*\] › [^\n]*\n/, '') ?? null
}

/**
 * rspec_junit_formatter writes `classname="spec.models.cart_spec" file="./spec/models/cart_spec.rb"`: the file,
 * dotted. Its module is the file then, as RSpec's JSON names it, so that both reports give one id per example.
 */
function rspecJunitFile(classname: string, file: string | null): string | null {
  if (!file || !file.endsWith('.rb') || classname === '') return null
  const path = rspecFile(file)
  return path.slice(0, -'.rb'.length).replace(/\//g, '.') === classname ? path : null
}

/** A failure without a body (go-junit-report, Bazel) may still have its story in the captured output. */
function fallbackOutput(c: CaseDraft): string | null {
  return bodyText(c.systemErr) ?? bodyText(c.systemOut)
}
