import { describe, expect, it } from 'vitest'
import { vitestCase, vitestReport } from '../../src/reporters/vitest-cases.js'
import { startTime, vModule, vTest } from './records.js'

const err = (n: number, name = 'AssertionError') => ({
  message: `expected ${n} to be 9`,
  name,
  stack: `AssertionError: expected ${n} to be 9\n    at cart.test.ts:4:5`,
})

describe('vitestCase', () => {
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
    const errors = [err(1), err(2), err(3)]
    const failed = vitestCase(vTest('fails', { state: 'failed', retryCount: 2, errors }), vModule([]))
    expect(failed?.attempts.map((a) => a.message)).toEqual(errors.map((e) => e.message))
    expect(failed).toMatchObject({ status: 'failed', flakyOnRetry: false, message: 'expected 3 to be 9' })
  })

  it('does not guess which try an error belongs to when their numbers differ', () => {
    const errors = [err(1), err(2), err(3)]
    const c = vitestCase(vTest('fails', { state: 'failed', retryCount: 1, errors }), vModule([]))
    expect(c?.attempts.map((a) => a.message)).toEqual([null, 'expected 3 to be 9'])
  })

  it('names timeouts, drops the generic Error class, skips unfinished tests and keeps the project', () => {
    const timedOut = [{ message: 'Test timed out in 5000ms.', name: 'Error' }]
    expect(vitestCase(vTest('slow', { state: 'failed', errors: timedOut }), vModule([]))?.errorType).toBe('timeout')
    const plain = vitestCase(vTest('plain', { state: 'failed', errors: [err(1, 'Error')] }), vModule([]))
    expect(plain?.errorType).toBeNull()
    expect(vitestCase(vTest('never ran', { state: 'pending' }), vModule([]))).toBeNull()
    const skipped = vitestCase(vTest('skip', { state: 'skipped', project: 'browser' }), vModule([]))
    expect(skipped).toMatchObject({ status: 'skipped', env: { project: 'browser' } })
    expect(skipped?.attempts).toHaveLength(1)
    expect(vitestCase(vTest('top', { parent: { type: 'module' } }), vModule([]))?.name).toBe('top')
  })
})

describe('vitestReport', () => {
  it('records a module that failed to load as one error named after its file', () => {
    const broken = vModule([], [{ message: 'Failed to load url ./missing.mjs' }])
    const endTime = new Date(startTime.getTime() + 900)
    const report = vitestReport([broken], { startTime, endTime, status: 'complete' })
    expect(report.cases).toMatchObject([
      {
        module: 'src/cart.test.ts',
        name: 'src/cart.test.ts',
        status: 'error',
        message: 'Failed to load url ./missing.mjs',
      },
    ])
    expect(report.meta).toMatchObject({ durationMs: 900, status: 'complete' })
  })

  it('folds two tests of one name into one case with both attempts, as ingest does', () => {
    const report = vitestReport([vModule([vTest('twin'), vTest('twin', { state: 'failed', errors: [err(1)] })])], {
      startTime,
      endTime: startTime,
      status: 'interrupted',
    })
    expect(report.cases).toHaveLength(1)
    expect(report.cases[0]).toMatchObject({ status: 'failed', attempts: [{ status: 'passed' }, { status: 'failed' }] })
    expect(report.meta.status).toBe('interrupted')
  })
})
