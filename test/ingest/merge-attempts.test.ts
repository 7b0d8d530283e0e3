import { describe, expect, it } from 'vitest'
import { mergeRepeatedCases } from '../../src/ingest/merge-attempts.js'
import type { ParsedCase } from '../../src/ingest/types.js'
import type { ResultStatus } from '../../src/model.js'

function tc(name: string, status: ResultStatus, extra: Partial<ParsedCase> = {}): ParsedCase {
  return {
    module: 'pkg',
    name,
    file: null,
    status,
    flakyOnRetry: false,
    durationMs: 10,
    errorType: status === 'failed' ? 'AssertionError' : null,
    message: status === 'failed' ? `${name} failed` : null,
    stack: null,
    healingOccurred: false,
    attempts: [],
    ...extra,
  }
}

const statuses = (c: ParsedCase) => c.attempts.map((a) => a.status)

describe('mergeRepeatedCases', () => {
  it('returns the same array when every identity is unique', () => {
    const cases = [tc('a', 'passed'), tc('b', 'failed'), tc('a', 'passed', { module: 'other' })]
    expect(mergeRepeatedCases(cases)).toBe(cases)
  })

  it('fail then pass (gotestsum --rerun-fails): passed on retry, at the first occurrence', () => {
    const cases = [tc('a', 'failed'), tc('b', 'passed'), tc('a', 'passed', { durationMs: 5 })]
    const [merged, other] = mergeRepeatedCases(cases)
    expect(merged).toMatchObject({ name: 'a', status: 'passed', flakyOnRetry: true, durationMs: 15 })
    expect(merged!.attempts).toEqual([
      { retry: 0, status: 'failed', durationMs: 10, message: 'a failed', stack: null },
      { retry: 1, status: 'passed', durationMs: 5, message: null, stack: null },
    ])
    // Why it flaked stays visible on the result.
    expect(merged).toMatchObject({ message: 'a failed', errorType: 'AssertionError' })
    expect(other!.name).toBe('b')
  })

  it('pass then fail is a real failure', () => {
    const [merged] = mergeRepeatedCases([tc('a', 'passed'), tc('a', 'failed')])
    expect(merged).toMatchObject({ status: 'failed', flakyOnRetry: false, message: 'a failed' })
    expect(statuses(merged!)).toEqual(['passed', 'failed'])
  })

  it('every attempt failed (Playwright repeat-each in CTRF): failed, not flaky', () => {
    const [merged] = mergeRepeatedCases([tc('a', 'failed'), tc('a', 'failed'), tc('a', 'error')])
    expect(merged).toMatchObject({ status: 'error', flakyOnRetry: false })
    expect(merged!.attempts.map((a) => a.retry)).toEqual([0, 1, 2])
  })

  it('concatenates cases that already have attempts and renumbers them', () => {
    const withAttempts = tc('a', 'passed', {
      flakyOnRetry: true,
      attempts: [
        { retry: 0, status: 'failed', durationMs: 1, message: 'x', stack: null },
        { retry: 1, status: 'passed', durationMs: 2, message: null, stack: null },
      ],
    })
    const [merged] = mergeRepeatedCases([tc('a', 'failed'), withAttempts])
    expect(merged!.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
      [2, 'passed'],
    ])
    expect(merged!.flakyOnRetry).toBe(true)
  })

  it('skipped attempts do not decide unless all were skipped', () => {
    const [ranThenSkipped] = mergeRepeatedCases([tc('a', 'failed'), tc('a', 'passed'), tc('a', 'skipped')])
    expect(ranThenSkipped).toMatchObject({ status: 'passed', flakyOnRetry: true })
    const [onlySkipped] = mergeRepeatedCases([tc('a', 'skipped'), tc('a', 'skipped')])
    expect(onlySkipped).toMatchObject({ status: 'skipped', flakyOnRetry: false, message: null })
    const [skippedThenFailed] = mergeRepeatedCases([tc('a', 'skipped'), tc('a', 'failed')])
    expect(skippedThenFailed!.status).toBe('failed')
  })

  it('keeps different env facets apart (same test on two Playwright projects)', () => {
    const cases = [
      tc('a', 'failed', { env: { project: 'chromium' } }),
      tc('a', 'passed', { env: { project: 'firefox' } }),
      tc('a', 'passed', { env: { project: 'chromium' } }),
    ]
    const merged = mergeRepeatedCases(cases)
    expect(merged.map((c) => [c.env?.project, c.status, c.attempts.length])).toEqual([
      ['chromium', 'passed', 2],
      ['firefox', 'passed', 0],
    ])
  })

  it('takes the first known file and any healing', () => {
    const later = tc('a', 'passed', { file: 'a_test.go', healingOccurred: true })
    const [merged] = mergeRepeatedCases([tc('a', 'failed'), later])
    expect(merged).toMatchObject({ file: 'a_test.go', healingOccurred: true })
  })
})
