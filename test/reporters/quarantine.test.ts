import { describe, expect, it } from 'vitest'
import { decideQuarantine, formatForgiven, type QuarantineInput } from '../../src/reporters/quarantine.js'
import type { QuarantineRecord } from '../../src/store/store.js'
import { result } from '../helpers/builders.js'

const now = Date.parse('2026-03-01T12:00:00Z')

function quarantine(name: string, extra: Partial<QuarantineRecord> = {}): QuarantineRecord {
  return {
    testId: `unit::mod::${name}`,
    reason: 'flaky backend',
    owner: 'team-cart',
    issueUrl: null,
    createdAt: '2026-02-01T00:00:00Z',
    createdBy: 'alice',
    expiresAt: null,
    source: 'manual',
    ...extra,
  }
}

const input = (over: Partial<QuarantineInput>): QuarantineInput => ({
  status: 'failed',
  incomplete: null,
  results: [result('ok', 'passed'), result('broken', 'failed')],
  quarantines: [quarantine('broken')],
  failOnFlaky: false,
  now,
  ...over,
})

describe('decideQuarantine', () => {
  it('passes a failed run whose every failure is quarantined, and lists them', () => {
    const d = decideQuarantine(input({}))
    expect(d.pass).toBe(true)
    expect(d.forgiven.map((f) => f.test_id)).toEqual(['unit::mod::broken'])
    const line = '  failed unit::mod::broken (quarantined: flaky backend; owner team-cart)'
    expect(formatForgiven(d.forgiven)).toEqual([line])
  })

  it('keeps the run failed when one failure is not quarantined, or its quarantine expired', () => {
    expect(decideQuarantine(input({ results: [result('broken', 'failed'), result('new', 'error')] })).pass).toBe(false)
    const expired = quarantine('broken', { expiresAt: '2026-02-15T00:00:00Z' })
    expect(decideQuarantine(input({ quarantines: [expired] })).pass).toBe(false)
  })

  it('never passes an interrupted, timed-out or incomplete run', () => {
    for (const status of ['interrupted', 'timedout'] as const) {
      const d = decideQuarantine(input({ status }))
      expect(d.pass).toBe(false)
      expect(d.note).toMatch(/quarantine does not apply/)
    }
    const d = decideQuarantine(input({ incomplete: 'Playwright reported 1 error(s) outside the tests' }))
    const note = 'Playwright reported 1 error(s) outside the tests; quarantine does not apply'
    expect(d).toMatchObject({ pass: false, note })
  })

  it('leaves a passed run alone, and a failed run without a failing test', () => {
    expect(decideQuarantine(input({ status: 'passed' }))).toEqual({ pass: false, forgiven: [], note: null })
    expect(decideQuarantine(input({ results: [result('ok', 'passed')] })).pass).toBe(false)
  })

  it('forgives flaky tests the runner fails on (failOnFlakyTests) only when they are quarantined', () => {
    const flaky = result('broken', 'passed', { flakyOnRetry: true })
    expect(decideQuarantine(input({ results: [flaky], failOnFlaky: true })).pass).toBe(true)
    expect(decideQuarantine(input({ results: [flaky], failOnFlaky: true, quarantines: [] })).pass).toBe(false)
  })
})
