import { describe, expect, it } from 'vitest'
import { jestReport, type JestAssertionResult } from '../../src/reporters/jest-cases.js'
import { byName, startTime } from './records.js'

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

describe('jestReport', () => {
  it('reads attempts from invocations and retryReasons, as ingest of `jest --json` does', async () => {
    const checkout = '/home/runner/work/shop/shop'
    const report = await jestReport({
      startTime: startTime.getTime(),
      wasInterrupted: true,
      testResults: [
        {
          testFilePath: `${checkout}/src/cart.test.js`,
          testResults: [
            assertion('flaky', { invocations: 2, retryReasons: ['Error: first try\n    at cart.test.js:3:1'] }),
            assertion('fails', {
              status: 'failed',
              invocations: 3,
              failureMessages: ['Error: third try'],
              retryReasons: ['Error: one', 'Error: two'],
            }),
          ],
        },
        {
          testFilePath: `${checkout}/src/broken.test.js`,
          testResults: [],
          testExecError: { message: 'SyntaxError: nope' },
        },
      ],
    })
    const cases = byName(report.cases)
    expect(cases.get('cart › flaky')).toMatchObject({
      module: 'src/cart.test.js',
      status: 'passed',
      flakyOnRetry: true,
      message: 'Error: first try',
    })
    expect(cases.get('cart › flaky')?.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    const messages = cases.get('cart › fails')?.attempts.map((a) => a.message)
    expect(messages).toEqual(['Error: one', 'Error: two', 'Error: third try'])
    expect(cases.get('Test suite failed to run')).toMatchObject({ module: 'src/broken.test.js', status: 'error' })
    expect(report.meta.status).toBe('interrupted')
  })
})
