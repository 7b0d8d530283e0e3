import { describe, expect, it } from 'vitest'
import { ReportParseError } from '../../src/errors.js'
import { parseReport, PARSERS, sourceFromBuffer } from '../../src/ingest/index.js'
import { streamTrx } from '../../src/ingest/trx.js'
import type { ParsedReport } from '../../src/ingest/types.js'
import { caseNamed } from './helpers.js'

const parse = (name: string, text: string) => parseReport(sourceFromBuffer(name, text))

async function parseError(name: string, text: string): Promise<ReportParseError> {
  const error: unknown = await parse(name, text).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(ReportParseError)
  return error as ReportParseError
}

const attemptStatuses = (r: ParsedReport, name: string) => caseNamed(r, name).attempts.map((a) => a.status)

describe('junit', () => {
  it('reads the documented run properties, <testsuites> first, and env.* facets', async () => {
    const r = await parse(
      'props.xml',
      `<testsuites>
        <properties>
          <property name="ci.branch" value="main"/>
          <property name="ci.revision" value="abc123"/>
          <property name="ci.pipeline_id" value="77"/>
          <property name="ci.pipeline_url" value="https://ci.example/p/77"/>
          <property name="ci.job_id" value="9"/>
          <property name="ci.runner" value="runner-3"/>
          <property name="env.browser" value="firefox"/>
          <property name="java.version" value="21"/>
        </properties>
        <testsuite name="s" hostname="build-host" timestamp="2024-03-01T10:00:00" time="2">
          <properties><property name="ci.branch" value="ignored"/><property name="env.os" value="linux"/></properties>
          <testcase classname="m" name="t">
            <properties><property name="ci.branch" value="case-level"/></properties>
          </testcase>
        </testsuite>
      </testsuites>`,
    )
    expect(r.meta).toEqual({
      branch: 'main',
      revision: 'abc123',
      pipelineId: '77',
      pipelineUrl: 'https://ci.example/p/77',
      jobId: '9',
      runnerId: 'runner-3',
      env: { browser: 'firefox', os: 'linux' },
      startedAt: '2024-03-01T10:00:00.000Z',
      finishedAt: '2024-03-01T10:00:02.000Z',
      durationMs: 2000,
    })
  })

  it('node:test: nested describe suites make the module, classname="test" is ignored', async () => {
    const r = await parse(
      'node.xml',
      `<?xml version="1.0" encoding="utf-8"?>
      <testsuites>
        <testsuite name="math" time="0.003" tests="2" hostname="vm">
          <testcase name="adds" time="0.000484" classname="test"/>
          <testsuite name="nested" time="0.001" hostname="vm">
            <testcase name="deep" time="0.0009" classname="test"/>
          </testsuite>
        </testsuite>
        <testcase name="top level" time="0.000123" classname="test"/>
        <!-- tests 3 -->
      </testsuites>`,
    )
    expect(r.cases.map((c) => [c.module, c.name])).toEqual([
      ['math', 'adds'],
      ['math › nested', 'deep'],
      ['', 'top level'],
    ])
  })

  it('jest-junit default templates (classname == name) and describe paths with the file as suite', async () => {
    const r = await parse(
      'jest.xml',
      `<testsuites name="jest tests">
        <testsuite name="math"><testcase classname="math adds" name="math adds" time="0.001"/></testsuite>
        <testsuite name="src/a.test.ts"><testcase classname="outer › inner" name="works"/></testsuite>
        <testsuite name="src/b.test.ts"><testcase classname="outer › inner" name="works"/></testsuite>
      </testsuites>`,
    )
    expect(r.cases.map((c) => [c.module, c.name, c.file])).toEqual([
      ['math', 'math adds', null],
      ['src/a.test.ts', 'outer › inner › works', 'src/a.test.ts'],
      ['src/b.test.ts', 'outer › inner › works', 'src/b.test.ts'],
    ])
  })

  it('flakyError, rerunError and status attributes (Ginkgo, Bazel)', async () => {
    const r = await parse(
      'dialects.xml',
      `<testsuite name="s">
        <testcase classname="m" name="flaky-error" time="0.5">
          <flakyError message="conn reset" type="java.io.IOException">trace</flakyError>
        </testcase>
        <testcase classname="m" name="rerun-error">
          <error message="e1" type="E"/><rerunError message="e2" type="E"/>
        </testcase>
        <testcase classname="m" name="pending" status="pending"/>
        <testcase classname="m" name="notrun" status="notrun"/>
        <testcase classname="m" name="timedout" status="timedout"><failure message="took too long"/></testcase>
        <testcase classname="m" name="panicked" status="panicked"/>
        <testcase classname="m" name="skip-msg"><skipped message="not on CI"/></testcase>
        <testcase classname="m" name="skip-body"><skipped>only on linux</skipped></testcase>
        <testcase classname="m" name="disabled" disabled="true"/>
      </testsuite>`,
    )
    expect(caseNamed(r, 'flaky-error')).toMatchObject({
      status: 'passed',
      flakyOnRetry: true,
      errorType: 'java.io.IOException',
    })
    expect(attemptStatuses(r, 'flaky-error')).toEqual(['error', 'passed'])
    expect(caseNamed(r, 'flaky-error').attempts[1]!.durationMs).toBe(500)
    expect(attemptStatuses(r, 'rerun-error')).toEqual(['error', 'error'])
    expect(caseNamed(r, 'rerun-error')).toMatchObject({ status: 'error', flakyOnRetry: false, message: 'e1' })
    expect(caseNamed(r, 'pending').status).toBe('skipped')
    expect(caseNamed(r, 'notrun').status).toBe('skipped')
    expect(caseNamed(r, 'timedout')).toMatchObject({ status: 'failed', message: 'took too long' })
    expect(caseNamed(r, 'panicked').status).toBe('error')
    expect(caseNamed(r, 'skip-msg')).toMatchObject({ status: 'skipped', message: 'not on CI' })
    expect(caseNamed(r, 'skip-body')).toMatchObject({ status: 'skipped', message: 'only on linux' })
    expect(caseNamed(r, 'disabled').status).toBe('skipped')
  })

  it('repeated testcases (gotestsum --rerun-fails, pytest-rerunfailures) become attempts', async () => {
    const r = await parse(
      'rerun.xml',
      `<testsuites><testsuite name="pkg" tests="4">
        <testcase classname="pkg" name="TestFlaky" time="0.10">
          <failure message="Failed">flaky_test.go:12: boom</failure>
        </testcase>
        <testcase classname="pkg" name="TestStable" time="0.01"/>
        <testcase classname="pkg" name="TestFlaky" time="0.20"/>
        <testcase classname="pkg" name="TestBroken"><failure message="Failed">1</failure></testcase>
        <testcase classname="pkg" name="TestBroken"><failure message="Failed">2</failure></testcase>
      </testsuite></testsuites>`,
    )
    expect(r.cases.map((c) => c.name)).toEqual(['TestFlaky', 'TestStable', 'TestBroken'])
    expect(caseNamed(r, 'TestFlaky')).toMatchObject({
      status: 'passed',
      flakyOnRetry: true,
      durationMs: 300,
      message: 'Failed',
    })
    expect(attemptStatuses(r, 'TestFlaky')).toEqual(['failed', 'passed'])
    expect(caseNamed(r, 'TestBroken')).toMatchObject({ status: 'failed', flakyOnRetry: false, stack: '2' })
  })

  it('reads RFC 1123 and zone-less timestamps as UTC, and ignores placeholders', async () => {
    const at = async (ts: string) => (await parse('t.xml', `<testsuite name="s" timestamp="${ts}"/>`)).meta.startedAt
    expect(await at('Sat, 03 Dec 2022 23:10:07 GMT')).toBe('2022-12-03T23:10:07.000Z')
    expect(await at('2023-01-11T08:51:38')).toBe('2023-01-11T08:51:38.000Z')
    expect(await at('2021-04-20T08:31:33.0390097+02:00')).toBe('2021-04-20T06:31:33.039Z')
    expect(await at('0001-01-01T00:00:00Z')).toBeUndefined()
    expect(await at('yesterday')).toBeUndefined()
  })

  it('refuses a root that is not a JUnit element', async () => {
    const source = sourceFromBuffer('x.xml', '<?xml version="1.0"?>\n<html/>')
    const e: unknown = await PARSERS.junit(source).catch((x: unknown) => x)
    expect(e).toMatchObject({ file: 'x.xml', line: 2 })
    expect((e as Error).message).toMatch(/not a JUnit report: the root element is <html>/)
  })
})

describe('trx', () => {
  const trx = (results: string, definitions = '') => `<?xml version="1.0" encoding="utf-8"?>
<TestRun id="r1" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
  <Times start="2024-01-02T03:04:05.0000000+00:00" finish="2024-01-02T03:04:06.5000000+00:00"/>
  <Results>${results}</Results>
  <TestDefinitions>${definitions}</TestDefinitions>
</TestRun>`
  const result = (id: string, name: string, outcome: string, inner = '') =>
    `<UnitTestResult testId="${id}" testName="${name}" outcome="${outcome}" duration="00:00:01.2500000"
      computerName="agent-1">${inner}</UnitTestResult>`
  const errorInfo =
    '<Output><ErrorInfo><Message>boom&#xD;\nline 2</Message><StackTrace>at X</StackTrace></ErrorInfo></Output>'
  const def = (id: string, className: string) =>
    `<UnitTest id="${id}" name="x"><TestMethod className="${className}" name="x" codeBase="/b/Tests.dll"/></UnitTest>`

  it('maps every outcome with one table and joins results to their class', async () => {
    const r = await parse(
      'run.trx',
      trx(
        [
          result('1', 'Ns.Calc.Adds', 'Passed'),
          result('2', 'Ns.Calc.Warns', 'Warning'),
          result('3', 'Ns.Calc.Slow', 'Timeout'),
          result('4', 'Ns.Calc.Ignored', 'NotExecuted'),
          result('5', 'Ns.Calc.Broken', 'Error', errorInfo),
          result('6', 'Custom display name', 'Inconclusive'),
        ].join('\n'),
        ['1', '2', '3', '4', '5'].map((id) => def(id, 'Ns.Calc')).join('') + def('6', 'Ns.Calc, Tests, Version=1.0'),
      ),
    )
    expect(r.cases.map((c) => [c.module, c.name, c.status, c.errorType])).toEqual([
      ['Ns.Calc', 'Adds', 'passed', null],
      ['Ns.Calc', 'Warns', 'passed', null],
      ['Ns.Calc', 'Slow', 'failed', 'timeout'],
      ['Ns.Calc', 'Ignored', 'skipped', null],
      ['Ns.Calc', 'Broken', 'error', null],
      ['Ns.Calc', 'Custom display name', 'skipped', null],
    ])
    expect(caseNamed(r, 'Broken')).toMatchObject({ message: 'boom\nline 2', stack: 'at X', durationMs: 1250 })
    expect(r.meta).toMatchObject({ runnerId: 'agent-1', startedAt: '2024-01-02T03:04:05.000Z', durationMs: 1500 })
  })

  it('streams: results come out in chunks, joined to classes defined after them, in start-time order', async () => {
    const n = 4500
    const results = Array.from({ length: n }, (_, i) => {
      const start = new Date(Date.UTC(2024, 0, 2, 3, 0, 0) + (n - i) * 1000).toISOString()
      return `<UnitTestResult testId="${i}" testName="Ns.C${i % 3}.T${i}" outcome="Passed" startTime="${start}"/>`
    })
    const defs = Array.from({ length: n }, (_, i) => def(String(i), `Ns.C${i % 3}`))
    const whole = sourceFromBuffer('big.trx', trx(results.join('\n'), defs.join('')))
    // Counts the input chunks read by the pass under way, to see results handed on before the input is all read.
    let read = 0
    let total = 0
    const source = {
      ...whole,
      async *chunks() {
        read = 0
        for await (const c of whole.chunks()) {
          read++
          yield c
        }
        total = read
      },
    }
    const stream = streamTrx(source)
    const sizes: number[] = []
    const readAtFirstChunk: number[] = []
    const seen: [string, string, number | null | undefined][] = []
    for await (const chunk of stream.cases) {
      if (sizes.length === 0) readAtFirstChunk.push(read)
      sizes.push(chunk.length)
      for (const c of chunk) seen.push([c.module, c.name, c.position])
    }
    expect(readAtFirstChunk[0]).toBeLessThan(total)
    // Handed on as the input is read (a chunk closes after the 64 KB of input that filled it), never all at once.
    expect(sizes.length).toBeGreaterThan(1)
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(n)
    expect(seen[0]).toEqual(['Ns.C0', 'T0', n - 1])
    expect(seen[n - 1]).toEqual([`Ns.C${(n - 1) % 3}`, `T${n - 1}`, 0])
  })

  it('refuses a bad result near the end before handing on any result (the first pass reads it all)', async () => {
    const good = Array.from({ length: 3000 }, (_, i) => result(String(i), `A.t${i}`, 'Passed')).join('\n')
    const stream = streamTrx(sourceFromBuffer('late.trx', trx(`${good}\n${result('x', 'A.b', 'Exploded')}`)))
    let handedOn = 0
    const error = await (async () => {
      for await (const chunk of stream.cases) handedOn += chunk.length
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReportParseError)
    expect((error as ReportParseError).message).toMatch(/unknown TRX outcome "Exploded"/)
    expect(handedOn).toBe(0)
  })

  it('refuses an outcome it does not know, at its line', async () => {
    const e = await parseError('odd.trx', trx(`\n\n${result('1', 'A.b', 'Exploded')}`))
    // The line where the element's start tag ends.
    expect(e.line).toBe(7)
    expect(e.detail).toBe('unknown TRX outcome "Exploded"')
  })
})

describe('ctrf', () => {
  const ctrf = (tests: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      results: { tool: { name: 'pw' }, summary: { start: 1700000000000, stop: 1700000005000 }, tests, ...extra },
    })

  it('turns retries and flaky into attempts', async () => {
    const r = await parse(
      'ctrf.json',
      ctrf([
        { name: 'flaky', status: 'passed', duration: 30, retries: 2, flaky: true, suite: ['chromium', 'a.ts', 'c'] },
        { name: 'broken', status: 'failed', duration: 20, retries: 1, message: '\u001b[31mboom\u001b[39m' },
        { name: 'pending', status: 'pending', duration: 0 },
        { name: 'todo', status: 'other', duration: 0 },
      ]),
    )
    expect(caseNamed(r, 'flaky')).toMatchObject({ module: 'chromium > a.ts > c', status: 'passed', flakyOnRetry: true })
    expect(attemptStatuses(r, 'flaky')).toEqual(['failed', 'failed', 'passed'])
    expect(caseNamed(r, 'broken')).toMatchObject({ module: 'pw', status: 'failed', message: 'boom' })
    expect(attemptStatuses(r, 'broken')).toEqual(['failed', 'failed'])
    expect(caseNamed(r, 'pending').status).toBe('skipped')
    expect(caseNamed(r, 'todo').status).toBe('skipped')
    expect(r.meta).toMatchObject({ startedAt: '2023-11-14T22:13:20.000Z', durationMs: 5000 })
  })

  it('uses retryAttempts when given, with or without the final attempt', async () => {
    const r = await parse(
      'ctrf.json',
      ctrf([
        {
          name: 'complete',
          status: 'passed',
          duration: 9,
          retries: 1,
          retryAttempts: [
            { attempt: 1, status: 'passed', duration: 4 },
            { attempt: 0, status: 'failed', duration: 5, message: 'first try' },
          ],
        },
        {
          name: 'previous-only',
          status: 'failed',
          duration: 3,
          retries: 1,
          retryAttempts: [{ attempt: 0, status: 'failed', duration: 2 }],
        },
      ]),
    )
    expect(caseNamed(r, 'complete').attempts).toEqual([
      { retry: 0, status: 'failed', durationMs: 5, message: 'first try', stack: null },
      { retry: 1, status: 'passed', durationMs: 4, message: null, stack: null },
    ])
    expect(caseNamed(r, 'complete')).toMatchObject({ flakyOnRetry: true, message: 'first try' })
    expect(attemptStatuses(r, 'previous-only')).toEqual(['failed', 'failed'])
  })

  it('never makes attempts from a retries count the file contradicts, and says so in one warning', async () => {
    // As vitest-ctrf-json-reporter 0.0.3 writes: the configured retry limit on every test, no retryAttempts, no
    // flaky flag, no reportFormat or specVersion (test/ingest/real-runners.test.ts runs the real package).
    const test = (name: string, status: string) => ({ name, status, duration: 1, filePath: 'a.test.ts', retries: 2 })
    const r = await parse('ctrf.json', ctrf([test('ok', 'passed'), test('also ok', 'passed'), test('bad', 'failed')]))
    expect(caseNamed(r, 'ok')).toMatchObject({ status: 'passed', flakyOnRetry: false })
    expect(attemptStatuses(r, 'ok')).toEqual(['passed'])
    // Its count cannot be believed either: one attempt, the final failure.
    expect(attemptStatuses(r, 'bad')).toEqual(['failed'])
    expect(r.warnings).toHaveLength(1)
    expect(r.warnings![0]).toMatch(/^results\.tests\[0\]\.retries is 2 on a test that passed .*\(2 tests like it\)/)
    expect(r.warnings![0]).toMatch(
      /not schema-valid CTRF: reportFormat, specVersion, results\.summary\.tests and \d+ more/,
    )
  })

  it('takes a flaky flag as one failed try, and notes retryAttempts that disagree with retries', async () => {
    const valid = { reportFormat: 'CTRF', specVersion: '0.0.0' }
    const summary = { tests: 2, passed: 2, failed: 0, pending: 0, skipped: 0, other: 0, start: 1700000000000, stop: 1700000005000 }
    const doc = (tests: unknown[]) => JSON.stringify({ ...valid, results: { tool: { name: 'pw' }, summary, tests } })
    const flag = await parse('ctrf.json', doc([{ name: 'f', status: 'passed', duration: 1, flaky: true }]))
    expect(attemptStatuses(flag, 'f')).toEqual(['failed', 'passed'])
    expect(flag.warnings).toBeUndefined()
    const listed = [{ attempt: 0, status: 'failed' }]
    const odd = await parse(
      'ctrf.json',
      doc([{ name: 'g', status: 'passed', duration: 1, retries: 3, retryAttempts: listed }]),
    )
    expect(attemptStatuses(odd, 'g')).toEqual(['failed', 'passed'])
    expect(odd.warnings).toEqual([
      expect.stringMatching(/^results\.tests\[0\]\.retries is 3 but retryAttempts lists 1/),
    ])
  })

  it('maps the environment to run metadata: the build is the CI job', async () => {
    const environment = { branchName: 'main', commit: 'beef', buildId: 42, buildUrl: 'https://ci/42', osPlatform: 'os' }
    const r = await parse('ctrf.json', ctrf([], { environment }))
    expect(r.meta).toMatchObject({
      branch: 'main',
      revision: 'beef',
      jobId: '42',
      jobUrl: 'https://ci/42',
      env: { os: 'os' },
    })
    expect(r.meta.pipelineId).toBeUndefined()
    const withPipeline = { ...environment, extra: { pipelineId: 7, pipelineUrl: 'https://ci/p/7' } }
    const p = await parse('ctrf.json', ctrf([], { environment: withPipeline }))
    expect(p.meta).toMatchObject({ jobId: '42', pipelineId: '7', pipelineUrl: 'https://ci/p/7' })
  })

  it('names the fields of a wrong shape', async () => {
    const e = await parseError('bad.json', ctrf([{ name: 'a', status: 'exploded' }]))
    expect(e.detail).toMatch(/^not a valid CTRF report: results\.tests\[0\]\.status: /)
  })
})

describe('playwright-json', () => {
  const report = (tests: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      config: { rootDir: '/p', metadata: { 'ci.branch': 'feature/x', 'env.os': 'linux', other: 1 } },
      suites: [
        {
          title: 'cart.spec.ts',
          file: 'cart.spec.ts',
          specs: [],
          suites: [{ title: 'cart', file: 'cart.spec.ts', specs: [{ title: 'adds', tests }] }],
        },
      ],
      stats: { startTime: '2025-01-01T00:00:00.000Z', duration: 1234.5 },
      ...extra,
    })
  const result = (retry: number, status: string, message?: string) => ({
    retry,
    status,
    duration: 100 + retry,
    ...(message ? { error: { message, stack: `${message}\n    at x` }, errors: [{ message }] } : {}),
  })

  it('flaky: each result an attempt, passed on retry', async () => {
    const r = await parse(
      'pw.json',
      report([
        {
          projectName: 'firefox',
          expectedStatus: 'passed',
          status: 'flaky',
          results: [result(0, 'failed', '\u001b[31mnope\u001b[39m'), result(1, 'passed')],
        },
      ]),
    )
    const c = caseNamed(r, 'cart › adds')
    expect(c).toMatchObject({
      module: 'cart.spec.ts',
      env: { project: 'firefox' },
      status: 'passed',
      flakyOnRetry: true,
      message: 'nope',
      durationMs: 201,
    })
    expect(c.attempts.map((a) => [a.retry, a.status, a.durationMs])).toEqual([
      [0, 'failed', 100],
      [1, 'passed', 101],
    ])
    expect(r.meta).toEqual({
      startedAt: '2025-01-01T00:00:00.000Z',
      finishedAt: '2025-01-01T00:00:01.235Z',
      durationMs: 1235,
      branch: 'feature/x',
      env: { os: 'linux' },
    })
  })

  it('test.fail(), interrupted runs, timeouts and tests that never ran', async () => {
    const tests = (projectName: string, t: Record<string, unknown>) => [{ projectName, ...t }]
    const tm = 'Test timeout of 5ms exceeded.'
    const cases = await Promise.all(
      [
        tests('a', { expectedStatus: 'failed', status: 'expected', results: [result(0, 'failed', 'as expected')] }),
        tests('b', { expectedStatus: 'passed', status: 'unexpected', results: [result(0, 'interrupted')] }),
        tests('c', { status: 'unexpected', results: [result(0, 'timedOut', tm), result(1, 'timedOut', tm)] }),
        tests('d', { expectedStatus: 'skipped', status: 'skipped', results: [] }),
      ].map(async (t) => (await parse('pw.json', report(t))).cases[0]!),
    )
    expect(cases.map((c) => [c.env?.project, c.status, c.errorType, c.attempts.map((a) => a.status)])).toEqual([
      ['a', 'passed', null, ['passed']],
      ['b', 'error', null, ['error']],
      ['c', 'failed', 'timeout', ['failed', 'failed']],
      ['d', 'skipped', null, ['skipped']],
    ])
  })
})

describe('jest-json', () => {
  it('turns retryReasons into attempts, todo into skipped, and keeps suites that failed to run', async () => {
    const r = await parse(
      'jest.json',
      JSON.stringify({
        numTotalTests: 3,
        startTime: 1700000000000,
        testResults: [
          {
            name: '/home/runner/work/shop/shop/src/cart.test.ts',
            endTime: 1700000002000,
            assertionResults: [
              {
                ancestorTitles: ['cart'],
                title: 'adds',
                status: 'passed',
                duration: 7,
                invocations: 3,
                retryReasons: ['Error: one\n    at a', 'Error: two\n    at b'],
              },
              { ancestorTitles: [], title: 'later', status: 'todo', duration: null },
            ],
          },
          {
            name: '/home/runner/work/shop/shop/src/broken.test.ts',
            status: 'failed',
            message: '  ● Test suite failed to run\n\n    SyntaxError: x',
            assertionResults: [],
          },
        ],
      }),
    )
    const adds = caseNamed(r, 'cart › adds')
    expect(adds).toMatchObject({ module: 'src/cart.test.ts', status: 'passed', flakyOnRetry: true })
    expect(adds.message).toBe('Error: two')
    expect(adds.attempts.map((a) => [a.status, a.message])).toEqual([
      ['failed', 'Error: one'],
      ['failed', 'Error: two'],
      ['passed', null],
    ])
    expect(caseNamed(r, 'later')).toMatchObject({ status: 'skipped', durationMs: null })
    expect(caseNamed(r, 'Test suite failed to run')).toMatchObject({ module: 'src/broken.test.ts', status: 'error' })
    expect(r.meta).toMatchObject({ startedAt: '2023-11-14T22:13:20.000Z', durationMs: 2000 })
  })
})

describe('simple-json', () => {
  it('splits keys at the last slash and maps metadata', async () => {
    const r = await parse(
      'ci.json',
      JSON.stringify({
        metadata: { ref: 'main', pipeline_id: 1234, pipeline_status: 'failed', job_id: '5678', job_status: 'failed' },
        tests: { 'Checkout/Payment/pays by card': true, 'Checkout/Payment/refunds': false, smoke: true },
      }),
    )
    expect(r.format).toBe('simple-json')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['Checkout/Payment', 'pays by card', 'passed'],
      ['Checkout/Payment', 'refunds', 'failed'],
      ['', 'smoke', 'passed'],
    ])
    expect(r.meta).toEqual({
      branch: 'main',
      pipelineId: '1234',
      pipelineStatus: 'failed',
      jobId: '5678',
      jobStatus: 'failed',
    })
  })

  it('names a non-boolean outcome', async () => {
    const e = await parseError('ci.json', '{"metadata": {"ref": "main", "job_id": 1}, "tests": {"a/b": "yes"}}')
    expect(e.detail).toMatch(/^not a valid simple CI JSON report: tests\.a\/b: .*expected boolean/)
  })
})
