import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { prepareRecording, type RecordedCase } from '../../src/reporters/build-cases.js'
import { formatCtrf } from '../../src/reporters/ctrf.js'
import { jestReport, type JestAssertionResult } from '../../src/reporters/jest-cases.js'
import { playwrightReport, type PlaywrightAttempt, type PlaywrightTestRecord } from '../../src/reporters/playwright-cases.js'
import { vitestCase, vitestReport, type VitestTestCase, type VitestTestModule } from '../../src/reporters/vitest-cases.js'

const startTime = new Date('2026-03-01T10:00:00Z')
const run = { startTime, durationMs: 1500, status: 'complete' as const }

function attempt(retry: number, status: PlaywrightAttempt['status'], extra: Partial<PlaywrightAttempt> = {}): PlaywrightAttempt {
  const error = status === 'passed' || status === 'skipped' ? undefined : { message: `Error: try ${retry} failed`, stack: `Error: try ${retry} failed\n    at a.spec.ts:3:5` }
  return { retry, status, duration: 10 + retry, error, errors: error ? [error] : [], annotations: [], ...extra }
}

function pwRecord(title: string, attempts: PlaywrightAttempt[], extra: Partial<PlaywrightTestRecord> = {}): PlaywrightTestRecord {
  const last = attempts.at(-1)?.status
  const outcome = !last || last === 'skipped' ? 'skipped' : last !== 'passed' ? 'unexpected' : attempts.length > 1 ? 'flaky' : 'expected'
  return { project: 'chromium', file: 'tests/cart.spec.ts', describes: ['cart'], title, expectedStatus: 'passed', outcome, tags: [], annotations: [], attempts, ...extra }
}

const byName = (cases: RecordedCase[]) => new Map(cases.map((c) => [c.name, c]))

describe('playwrightReport', () => {
  it('keeps every attempt, and names tests as the JSON parser does', async () => {
    const report = await playwrightReport(
      [
        pwRecord('flaky', [attempt(0, 'failed'), attempt(1, 'passed')]),
        pwRecord('broken', [attempt(0, 'failed'), attempt(1, 'timedOut')]),
        pwRecord('deep', [attempt(0, 'passed')], { describes: ['cart', '', 'inner'] }),
        pwRecord('gone', [attempt(0, 'interrupted')]),
        pwRecord('skipped', [attempt(0, 'skipped')]),
      ],
      run,
    )
    const cases = byName(report.cases)
    expect(cases.get('cart › flaky')).toMatchObject({
      module: 'tests/cart.spec.ts',
      status: 'passed',
      flakyOnRetry: true,
      message: 'Error: try 0 failed',
      env: { project: 'chromium' },
      attempts: [
        { retry: 0, status: 'failed', durationMs: 10 },
        { retry: 1, status: 'passed', durationMs: 11 },
      ],
    })
    expect(cases.get('cart › broken')).toMatchObject({ status: 'failed', errorType: 'timeout', durationMs: 21 })
    expect(cases.get('cart ›  › inner › deep')?.status).toBe('passed')
    expect(cases.get('cart › gone')?.status).toBe('error')
    expect(cases.get('cart › skipped')?.attempts).toEqual([{ retry: 0, status: 'skipped', durationMs: 10, message: null, stack: null }])
    expect(report.meta).toMatchObject({ startedAt: '2026-03-01T10:00:00.000Z', durationMs: 1500, status: 'complete' })
  })

  it('passes a test that fails as test.fail() expects, and fails one that passes', async () => {
    const report = await playwrightReport(
      [
        pwRecord('known bug', [attempt(0, 'failed')], { expectedStatus: 'failed', outcome: 'expected' }),
        pwRecord('fixed bug', [attempt(0, 'passed')], { expectedStatus: 'failed', outcome: 'unexpected' }),
      ],
      run,
    )
    expect(report.cases.map((c) => [c.name, c.status])).toEqual([
      ['cart › known bug', 'passed'],
      ['cart › fixed bug', 'failed'],
    ])
  })

  it('turns the flakewatch-healed annotation into healingOccurred, and keeps tags and annotations', async () => {
    const healed = { type: 'flakewatch-healed', description: '#buy → [data-test=buy]' }
    const report = await playwrightReport(
      [
        pwRecord('heals', [attempt(0, 'passed', { annotations: [healed] })], { tags: ['@slow'], annotations: [{ type: 'issue', description: 'JIRA-1' }] }),
        pwRecord('plain', [attempt(0, 'passed')]),
      ],
      run,
    )
    const cases = byName(report.cases)
    expect(cases.get('cart › heals')).toMatchObject({ healingOccurred: true, tags: ['slow'] })
    expect(cases.get('cart › heals')?.annotations).toEqual([{ type: 'issue', description: 'JIRA-1' }, healed])
    expect(cases.get('cart › plain')).toMatchObject({ healingOccurred: false, tags: [], annotations: [] })
  })

  it('folds --repeat-each copies of one test into one case, and splits projects into facets', async () => {
    const report = await playwrightReport(
      [
        pwRecord('repeated', [attempt(0, 'passed')]),
        pwRecord('repeated', [attempt(0, 'failed')]),
        pwRecord('repeated', [attempt(0, 'passed')], { project: 'firefox' }),
        pwRecord('no project', [attempt(0, 'passed')], { project: '' }),
      ],
      run,
    )
    expect(report.cases).toHaveLength(3)
    expect(report.cases[0]).toMatchObject({ name: 'cart › repeated', status: 'failed', attempts: [{ status: 'passed' }, { status: 'failed' }] })
    expect(report.cases[1]?.env).toEqual({ project: 'firefox' })
    expect(report.cases[2]?.env).toBeUndefined()
  })
})

function vTest(name: string, over: { state?: 'passed' | 'failed' | 'skipped' | 'pending'; retryCount?: number; errors?: { message: string; name?: string }[]; parent?: VitestTestCase['parent']; project?: string } = {}): VitestTestCase {
  return {
    type: 'test',
    name,
    parent: over.parent ?? { type: 'suite', name: 'cart', parent: { type: 'module' } },
    tags: ['db'],
    project: { name: over.project ?? '' },
    result: () => ({ state: over.state ?? 'passed', errors: over.errors }),
    diagnostic: () => ({ duration: 12.3456789, retryCount: over.retryCount ?? 0, flaky: false }),
    annotations: () => [{ type: 'note', message: 'hello' }],
  }
}

const vModule = (tests: VitestTestCase[], errors: { message: string }[] = []): VitestTestModule => ({
  relativeModuleId: 'src/cart.test.ts',
  project: { name: '' },
  children: { allTests: () => tests },
  errors: () => errors,
})

describe('vitestCase', () => {
  const err = (n: number, name = 'AssertionError') => ({ message: `expected ${n} to be 9`, name, stack: `AssertionError: expected ${n} to be 9\n    at cart.test.ts:4:5` })

  it('makes each retry a failed attempt before the final one, each with its own error', () => {
    const flaky = vitestCase(vTest('flaky', { retryCount: 1, errors: [err(1)] }), vModule([]))!
    expect(flaky).toMatchObject({
      module: 'src/cart.test.ts',
      name: 'cart > flaky',
      status: 'passed',
      flakyOnRetry: true,
      durationMs: 12.346,
      errorType: 'AssertionError',
      message: 'expected 1 to be 9',
      tags: ['db'],
      annotations: [{ type: 'note', description: 'hello' }],
    })
    expect(flaky.attempts.map((a) => [a.status, a.message])).toEqual([
      ['failed', 'expected 1 to be 9'],
      ['passed', null],
    ])
    const failed = vitestCase(vTest('fails', { state: 'failed', retryCount: 2, errors: [err(1), err(2), err(3)] }), vModule([]))!
    expect(failed.attempts.map((a) => a.message)).toEqual(['expected 1 to be 9', 'expected 2 to be 9', 'expected 3 to be 9'])
    expect(failed).toMatchObject({ status: 'failed', flakyOnRetry: false, message: 'expected 3 to be 9' })
  })

  it('does not guess which try an error belongs to when their numbers differ', () => {
    const c = vitestCase(vTest('fails', { state: 'failed', retryCount: 1, errors: [err(1), err(2), err(3)] }), vModule([]))!
    expect(c.attempts.map((a) => a.message)).toEqual([null, 'expected 3 to be 9'])
  })

  it('names timeouts, drops the generic Error class, skips unfinished tests and keeps the project', () => {
    const timeout = vitestCase(vTest('slow', { state: 'failed', errors: [{ message: 'Test timed out in 5000ms.', name: 'Error' }] }), vModule([]))
    expect(timeout?.errorType).toBe('timeout')
    expect(vitestCase(vTest('plain', { state: 'failed', errors: [err(1, 'Error')] }), vModule([]))?.errorType).toBeNull()
    expect(vitestCase(vTest('never ran', { state: 'pending' }), vModule([]))).toBeNull()
    const skipped = vitestCase(vTest('skip', { state: 'skipped', project: 'browser' }), vModule([]))!
    expect(skipped).toMatchObject({ status: 'skipped', env: { project: 'browser' } })
    expect(skipped.attempts).toHaveLength(1)
    expect(vitestCase(vTest('top', { parent: { type: 'module' } }), vModule([]))?.name).toBe('top')
  })

  it('records a module that failed to load as one error named after its file', () => {
    const report = vitestReport([vModule([], [{ message: 'Failed to load url ./missing.mjs' }])], { startTime, endTime: new Date(startTime.getTime() + 900), status: 'complete' })
    expect(report.cases).toMatchObject([{ module: 'src/cart.test.ts', name: 'src/cart.test.ts', status: 'error', message: 'Failed to load url ./missing.mjs' }])
    expect(report.meta).toMatchObject({ durationMs: 900, status: 'complete' })
  })
})

describe('jestReport', () => {
  const assertion = (title: string, extra: Partial<JestAssertionResult> = {}): JestAssertionResult => ({
    ancestorTitles: ['cart'],
    title,
    status: 'passed',
    duration: 5,
    failureMessages: [],
    invocations: 1,
    retryReasons: [],
    ...extra,
  })

  it('reads attempts from invocations and retryReasons, as ingest of `jest --json` does', async () => {
    const report = await jestReport({
      startTime: startTime.getTime(),
      wasInterrupted: true,
      testResults: [
        {
          testFilePath: '/home/runner/work/shop/shop/src/cart.test.js',
          testResults: [
            assertion('flaky', { invocations: 2, retryReasons: ['Error: first try\n    at cart.test.js:3:1'] }),
            assertion('fails', { status: 'failed', invocations: 3, failureMessages: ['Error: third try'], retryReasons: ['Error: one', 'Error: two'] }),
          ],
        },
        { testFilePath: '/home/runner/work/shop/shop/src/broken.test.js', testResults: [], testExecError: { message: 'SyntaxError: nope' } },
      ],
    })
    const cases = byName(report.cases)
    expect(cases.get('cart › flaky')).toMatchObject({ module: 'src/cart.test.js', status: 'passed', flakyOnRetry: true, message: 'Error: first try' })
    expect(cases.get('cart › flaky')?.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    expect(cases.get('cart › fails')?.attempts.map((a) => a.message)).toEqual(['Error: one', 'Error: two', 'Error: third try'])
    expect(cases.get('Test suite failed to run')).toMatchObject({ module: 'src/broken.test.js', status: 'error' })
    expect(report.meta.status).toBe('interrupted')
  })
})

describe('formatCtrf', () => {
  it('writes a CTRF report that ingest reads back to the same ids, statuses and attempts', async () => {
    const report = await playwrightReport(
      [
        pwRecord('flaky', [attempt(0, 'failed'), attempt(1, 'passed')], { tags: ['@slow'] }),
        pwRecord('slow', [attempt(0, 'timedOut')]),
        pwRecord('skipped', [attempt(0, 'skipped')]),
      ],
      run,
    )
    const { context, batch } = prepareRecording(report, { suite: 'e2e', env: { FLAKEWATCH_BRANCH: 'main', FLAKEWATCH_REVISION: 'abc' }, source: 'test' })
    const ctrf = formatCtrf(report, context, { name: 'playwright', version: '1.65.1' })
    expect(ctrf.results.summary).toMatchObject({ tests: 3, passed: 1, failed: 1, skipped: 1, flaky: 1, start: startTime.getTime(), stop: startTime.getTime() + 1500 })
    expect(ctrf.results.environment).toEqual({ branchName: 'main', commit: 'abc' })
    expect(ctrf.results.tests[0]).toMatchObject({ tags: ['slow'], extra: { env: { project: 'chromium' } } })

    const back = await parseReport(sourceFromBuffer('ctrf.json', JSON.stringify(ctrf)))
    expect(back.format).toBe('ctrf')
    const again = prepareRecording({ ...back, cases: back.cases.map((c) => ({ ...c, tags: [], annotations: [] })) }, { suite: 'e2e', env: {}, source: 'ctrf' })
    const shape = (results: typeof batch.runs[number]['results']) =>
      results.map((r) => [r.test.testId, r.status, r.flakyOnRetry, r.errorType, r.attempts.map((a) => a.status)])
    expect(shape(again.batch.runs[0]!.results)).toEqual(shape(batch.runs[0]!.results))
    expect(again.batch.runs[0]!.run).toMatchObject({ branch: 'main', revision: 'abc', startedAt: '2026-03-01T10:00:00.000Z' })
  })
})

describe('prepareRecording', () => {
  it('takes the run context from CI variables as ingest does, the suite option winning over FLAKEWATCH_SUITE', async () => {
    const report = await playwrightReport([pwRecord('a', [attempt(0, 'passed')])], run)
    const env = { GITLAB_CI: 'true', CI_JOB_ID: '77', CI_COMMIT_SHA: 'def', CI_COMMIT_BRANCH: 'main', FLAKEWATCH_SUITE: 'from-env' }
    const { batch } = prepareRecording(report, { suite: 'e2e', env, source: 'test' })
    expect(batch.runs[0]!.run).toMatchObject({ runId: 'gitlab-77', suite: 'e2e', revision: 'def', branch: 'main', jobId: '77', env: { project: 'chromium' } })
    expect(batch.runs[0]!.results[0]!.test.testId).toBe('e2e::tests/cart.spec.ts::cart › a')
    expect(prepareRecording(report, { suite: undefined, env, source: 'test' }).batch.runs[0]!.run.suite).toBe('from-env')
    const local = prepareRecording(report, { suite: undefined, env: {}, source: 'test' }).batch.runs[0]!.run
    expect(local.runId).toMatch(/^local-[0-9a-f]{16}$/)
    expect(local.suite).toBe('default')
  })
})
