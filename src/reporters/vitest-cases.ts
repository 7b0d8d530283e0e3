import { truncateText } from '../ingest/bounded-text.js'
import { rankByKey, withPositions } from '../ingest/execution-order.js'
import { mergeRepeatedCases } from '../ingest/merge-attempts.js'
import { stripAnsi } from '../ingest/strip-ansi.js'
import type { Attempt, ResultStatus, RunStatus } from '../model.js'
import type { RecordedCase, RecordedReport } from './build-cases.js'

/*
 * The subset of Vitest 4's reported tasks (`vitest/node`: TestModule, TestSuite, TestCase) the reporter reads.
 * Declared here rather than imported so that flakewatch's types do not depend on one Vitest version.
 */
export interface VitestError {
  message?: string
  stack?: string
  name?: string
}

export interface VitestTestResult {
  state: 'passed' | 'failed' | 'skipped' | 'pending'
  errors?: ReadonlyArray<VitestError>
}

export interface VitestDiagnostic {
  duration: number
  /** Epoch ms; whole milliseconds, so quick tests of one file often share it. */
  startTime?: number
  retryCount: number
  flaky: boolean
}

export interface VitestParent {
  type: 'suite' | 'module'
  name?: string
  parent?: VitestParent
}

export interface VitestTestCase {
  type: 'test'
  id?: string
  name: string
  parent: VitestParent
  tags?: ReadonlyArray<string>
  project: { name: string }
  result(): VitestTestResult
  diagnostic(): VitestDiagnostic | undefined
  annotations(): ReadonlyArray<{ type: string; message?: string }>
}

export interface VitestTestModule {
  /** The file relative to the project root: the JUnit reporter's classname. */
  relativeModuleId: string
  project: { name: string }
  children: { allTests(): Iterable<VitestTestCase> }
  errors(): ReadonlyArray<VitestError>
}

const STATE: Record<Exclude<VitestTestResult['state'], 'pending'>, ResultStatus> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
}

/** Vitest's own wording of a test timeout. */
const TIMEOUT = /^Test timed out in \d+ms/

/** An error class that says nothing beyond "it failed" (the JUnit parser drops the same `type`). */
const GENERIC_ERROR = /^error$/i

/** Vitest's JUnit reporter writes times in seconds with three decimals; the same precision gives the same data. */
const roundMs = (ms: number | undefined): number | null => (ms === undefined ? null : Math.round(ms * 1000) / 1000)

/**
 * A Vitest test's identity as Vitest's JUnit reporter writes it (and `flakewatch ingest` reads it): the module
 * relative to the project root, and the describe titles and the test's name joined with ` > `.
 * @example vitestName(testCase) // 'cart > adds an item'
 */
export function vitestName(test: Pick<VitestTestCase, 'name' | 'parent'>): string {
  const titles = [test.name]
  for (let p: VitestParent | undefined = test.parent; p?.type === 'suite'; p = p.parent) titles.unshift(p.name ?? '')
  return titles.join(' > ')
}

function text(e: VitestError | undefined): { message: string | null; stack: string | null } {
  if (!e) return { message: null, stack: null }
  const message = e.message ? truncateText(stripAnsi(e.message).trim()) : null
  const stack = e.stack ? truncateText(stripAnsi(e.stack).trim()) : message
  return { message, stack }
}

function errorType(e: VitestError | undefined): string | null {
  if (!e) return null
  if (e.message && TIMEOUT.test(e.message)) return 'timeout'
  return e.name && !GENERIC_ERROR.test(e.name) ? e.name : null
}

/**
 * One Vitest test as a case, or null if it never finished (the run was cut short). Vitest runs retries within
 * one task and reports their count (`diagnostic().retryCount`) and every error of every try, so each retry is a
 * failed attempt before the final one. Errors are matched to tries one to one when their numbers agree; else only
 * the final failure gets one. Vitest times the tries together: the case has the total, the attempts have none.
 * @example vitestCase(testCase, testModule)?.attempts.length // 2 for a test that passed on its first retry
 */
export function vitestCase(
  test: VitestTestCase,
  module: Pick<VitestTestModule, 'relativeModuleId'>,
): RecordedCase | null {
  const result = test.result()
  if (result.state === 'pending') return null
  const status = STATE[result.state]
  const diag = test.diagnostic()
  const retries = status === 'skipped' ? 0 : (diag?.retryCount ?? 0)
  const errors = result.errors ?? []
  const failedTries = status === 'failed' ? retries + 1 : retries
  const matched = errors.length === failedTries
  const attempts: Attempt[] = []
  for (let i = 0; i < retries; i++) {
    attempts.push({ retry: i, status: 'failed', durationMs: null, ...text(matched ? errors[i] : undefined) })
  }
  const finalError = status === 'failed' ? errors.at(-1) : undefined
  const finalMs = retries === 0 ? roundMs(diag?.duration) : null
  attempts.push({ retry: retries, status, durationMs: finalMs, ...text(finalError) })
  const flakyOnRetry = status === 'passed' && retries > 0
  const shown = status === 'failed' ? finalError : flakyOnRetry ? errors.at(-1) : undefined
  const { message, stack } = text(shown)
  return {
    module: module.relativeModuleId,
    name: vitestName(test),
    file: module.relativeModuleId,
    status,
    flakyOnRetry,
    durationMs: roundMs(diag?.duration),
    errorType: errorType(shown),
    message,
    stack,
    healingOccurred: false,
    attempts,
    ...(test.project.name ? { env: { project: test.project.name } } : {}),
    tags: [...(test.tags ?? [])],
    annotations: test.annotations().map((a) => ({ type: a.type, ...(a.message ? { description: a.message } : {}) })),
  }
}

/**
 * Every finished test of a Vitest run as a report. A module that failed to load (no tests, errors) is one errored
 * case named after its file, the id Vitest's JUnit report gives it. Repeated identities fold into attempts, as in
 * ingest.
 * Vitest lists a module's tests in the order they are written, not the order they ran (`sequence.shuffle`), so
 * each case's position comes from `startOrder` (test id → the order the tests started in, which the reporter
 * sees) or else from the test's start time.
 * @example vitestReport(testModules, { startTime, endTime: new Date(), status: 'complete' })
 */
export function vitestReport(
  modules: ReadonlyArray<VitestTestModule>,
  run: { startTime: Date; endTime: Date; status: RunStatus },
  startOrder: ReadonlyMap<string, number> = new Map(),
): RecordedReport {
  const cases: RecordedCase[] = []
  const ran: RecordedCase[] = []
  const sequence: (number | undefined)[] = []
  const starts: (number | undefined)[] = []
  for (const m of modules) {
    let count = 0
    for (const t of m.children.allTests()) {
      const c = vitestCase(t, m)
      if (c) {
        cases.push(c)
        ran.push(c)
        // A skipped test never starts; it goes last, and the order analysis ignores it anyway.
        const never = c.status === 'skipped' ? Number.MAX_VALUE : undefined
        sequence.push((t.id === undefined ? undefined : startOrder.get(t.id)) ?? never)
        starts.push(t.diagnostic()?.startTime ?? never)
      }
      count++
    }
    const failure = m.errors()[0]
    if (count === 0 && failure) {
      const { message, stack } = text(failure)
      cases.push({
        module: m.relativeModuleId,
        name: m.relativeModuleId,
        file: m.relativeModuleId,
        status: 'error',
        flakyOnRetry: false,
        durationMs: null,
        errorType: errorType(failure),
        message,
        stack,
        healingOccurred: false,
        attempts: [{ retry: 0, status: 'error', durationMs: null, message, stack }],
        ...(m.project.name ? { env: { project: m.project.name } } : {}),
        tags: [],
        annotations: [],
      })
    }
  }
  withPositions(ran, rankByKey(sequence) ? sequence : starts)
  return {
    format: 'vitest',
    // The fold keeps the first case's own fields, tags and annotations among them.
    cases: mergeRepeatedCases(cases) as RecordedCase[],
    meta: {
      startedAt: run.startTime.toISOString(),
      finishedAt: run.endTime.toISOString(),
      durationMs: run.endTime.getTime() - run.startTime.getTime(),
      status: run.status,
    },
  }
}
