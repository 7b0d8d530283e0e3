import { describe, expect, it } from 'vitest'
import { playwrightReport } from '../../src/reporters/playwright-cases.js'
import { attempt, byName, pwRecord, run } from './records.js'

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
    expect(cases.get('cart › skipped')?.attempts).toEqual([
      { retry: 0, status: 'skipped', durationMs: 10, message: null, stack: null },
    ])
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
    const issue = { type: 'issue', description: 'JIRA-1' }
    const report = await playwrightReport(
      [
        pwRecord('heals', [attempt(0, 'passed', { annotations: [healed] })], { tags: ['@slow'], annotations: [issue] }),
        pwRecord('plain', [attempt(0, 'passed')]),
      ],
      run,
    )
    const cases = byName(report.cases)
    const heals = cases.get('cart › heals')
    expect(heals).toMatchObject({ healingOccurred: true, tags: ['slow'], annotations: [issue, healed] })
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
    expect(report.cases[0]).toMatchObject({
      name: 'cart › repeated',
      status: 'failed',
      attempts: [{ status: 'passed' }, { status: 'failed' }],
    })
    expect(report.cases[1]?.env).toEqual({ project: 'firefox' })
    expect(report.cases[2]?.env).toBeUndefined()
  })
})
