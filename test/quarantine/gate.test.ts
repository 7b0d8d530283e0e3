import { describe, expect, it } from 'vitest'
import { gate } from '../../src/quarantine/gate.js'
import type { QuarantineRecord } from '../../src/store/store.js'
import { flakyResult, result } from '../helpers/builders.js'

const q = (name: string, extra: Partial<QuarantineRecord> = {}): [string, QuarantineRecord] => [
  `unit::mod::${name}`,
  {
    testId: `unit::mod::${name}`,
    reason: 'flaky on CI',
    owner: 'team-a',
    issueUrl: null,
    createdAt: '2026-01-01T00:00:00Z',
    createdBy: 'alice',
    expiresAt: '2026-02-01T00:00:00Z',
    source: 'manual',
    ...extra,
  },
]
const now = Date.parse('2026-01-15T00:00:00Z')

describe('gate', () => {
  it('passes when every failure is quarantined', () => {
    const res = gate([result('a', 'passed'), result('b', 'failed'), result('c', 'error')], new Map([q('b'), q('c')]), {
      now,
    })
    expect(res.verdict).toBe('pass')
    expect(res.quarantined.map((e) => [e.test_id, e.reason, e.owner])).toEqual([
      ['unit::mod::b', 'flaky on CI', 'team-a'],
      ['unit::mod::c', 'flaky on CI', 'team-a'],
    ])
    expect(res.blocking).toEqual([])
  })

  it('fails on any failure that is not quarantined', () => {
    const res = gate([result('a', 'failed'), result('b', 'failed')], new Map([q('b')]), { now })
    expect(res.verdict).toBe('fail')
    expect(res.blocking.map((e) => e.test_id)).toEqual(['unit::mod::a'])
  })

  it('does not forgive with an expired quarantine', () => {
    const res = gate([result('a', 'failed')], new Map([q('a', { expiresAt: '2026-01-10T00:00:00Z' })]), { now })
    expect(res.verdict).toBe('fail')
  })

  it('passes a test that passed on retry unless failOnFlaky', () => {
    expect(gate([flakyResult('a')], new Map(), { now })).toMatchObject({
      verdict: 'pass',
      flaky: [{ test_id: 'unit::mod::a' }],
    })
    expect(gate([flakyResult('a')], new Map(), { now, failOnFlaky: true }).verdict).toBe('fail')
    expect(gate([flakyResult('a')], new Map([q('a')]), { now, failOnFlaky: true }).verdict).toBe('pass')
  })

  it('counts totals and ignores skipped tests', () => {
    const res = gate([result('a', 'skipped'), result('b', 'passed')], new Map(), { now })
    expect(res).toMatchObject({ verdict: 'pass', totals: { tests: 2, passed: 1, skipped: 1, failed: 0 } })
  })
})
