import { describe, expect, it } from 'vitest'
import { detectChanges, eventId, type CurrentTest } from '../../src/notify/detect.js'
import type { TestState } from '../../src/store/notifications.js'
import type { QuarantineRecord } from '../../src/store/store.js'

const NOW = Date.UTC(2026, 2, 10)
const DAY = 86_400_000
const opts = { now: NOW, expiringWithinMs: 3 * DAY }

function state(testId: string, extra: Partial<TestState> = {}): TestState {
  return {
    testId,
    verdict: 'healthy',
    quarantined: false,
    expiryWarnedFor: null,
    updatedAt: '2026-03-01T00:00:00.000Z',
    ...extra,
  }
}

function quarantine(testId: string, expiresAt: string | null = null): QuarantineRecord {
  return {
    testId,
    reason: 'flaky',
    owner: null,
    issueUrl: null,
    createdAt: '2026-03-01T00:00:00.000Z',
    createdBy: 'flakewatch',
    expiresAt,
    source: 'auto',
  }
}

const prev = (...states: TestState[]) => new Map(states.map((s) => [s.testId, s]))
const t = (testId: string, verdict: CurrentTest['verdict'], q: QuarantineRecord | null = null): CurrentTest => ({
  testId,
  verdict,
  quarantine: q,
})

describe('detectChanges', () => {
  it('records every test on the first look and announces nothing', () => {
    const r = detectChanges(new Map(), [t('a', 'flaky', quarantine('a')), t('b', 'healthy')], opts)
    expect(r.baseline).toBe(true)
    expect(r.changes).toEqual([])
    expect(r.states.map((s) => [s.testId, s.verdict, s.quarantined])).toEqual([
      ['a', 'flaky', true],
      ['b', 'healthy', false],
    ])
  })

  it('announces became_flaky, became_broken and fixed, and quarantined and released, from the previous state', () => {
    const r = detectChanges(
      prev(state('a'), state('b'), state('c', { verdict: 'broken' }), state('d'), state('e', { quarantined: true })),
      [t('a', 'flaky'), t('b', 'broken'), t('c', 'healthy'), t('d', 'healthy', quarantine('d')), t('e', 'healthy')],
      opts,
    )
    expect(r.baseline).toBe(false)
    expect(r.changes.map((c) => [c.event, c.testId])).toEqual([
      ['became_flaky', 'a'],
      ['became_broken', 'b'],
      ['fixed', 'c'],
      ['quarantined', 'd'],
      ['released', 'e'],
    ])
    expect(r.changes[0]).toMatchObject({
      previous: { verdict: 'healthy', quarantined: false },
      current: { verdict: 'flaky', quarantined: false },
    })
  })

  it('saves nothing and announces nothing for a test that did not change', () => {
    const r = detectChanges(prev(state('a', { verdict: 'flaky' })), [t('a', 'flaky')], opts)
    expect(r).toEqual({ changes: [], states: [], baseline: false })
  })

  it('keeps the last definite verdict through insufficient data, so a flaky test that comes back healthy is fixed', () => {
    const first = detectChanges(prev(state('a', { verdict: 'flaky' })), [t('a', 'insufficient_data')], opts)
    expect(first.changes).toEqual([])
    expect(first.states).toEqual([])
    const second = detectChanges(prev(state('a', { verdict: 'flaky' })), [t('a', 'healthy')], opts)
    expect(second.changes.map((c) => c.event)).toEqual(['fixed'])
  })

  it('does not call a new healthy test fixed, but a new flaky test became flaky', () => {
    const r = detectChanges(prev(state('old')), [t('new-ok', 'healthy'), t('new-bad', 'flaky')], opts)
    expect(r.changes.map((c) => [c.event, c.testId])).toEqual([['became_flaky', 'new-bad']])
    expect(r.changes[0]!.previous).toBeNull()
  })

  it('warns once per expiry when a quarantine is about to expire, and again after it is extended', () => {
    const soon = new Date(NOW + 2 * DAY).toISOString()
    const q = quarantine('a', soon)
    const first = detectChanges(prev(state('a', { verdict: 'flaky', quarantined: true })), [t('a', 'flaky', q)], opts)
    expect(first.changes.map((c) => c.event)).toEqual(['quarantine_expiring'])
    expect(first.states[0]!.expiryWarnedFor).toBe(soon)
    const again = detectChanges(prev(first.states[0]!), [t('a', 'flaky', q)], opts)
    expect(again.changes).toEqual([])
    const later = new Date(NOW + 2.5 * DAY).toISOString()
    const extended = detectChanges(prev(first.states[0]!), [t('a', 'flaky', quarantine('a', later))], opts)
    expect(extended.changes.map((c) => c.event)).toEqual(['quarantine_expiring'])
  })

  it('does not warn about a far expiry, or one already past', () => {
    const far = quarantine('a', new Date(NOW + 10 * DAY).toISOString())
    const past = quarantine('b', new Date(NOW - DAY).toISOString())
    const r = detectChanges(
      prev(state('a', { verdict: 'flaky', quarantined: true }), state('b', { verdict: 'flaky', quarantined: true })),
      [t('a', 'flaky', far), t('b', 'flaky', past)],
      opts,
    )
    expect(r.changes).toEqual([])
  })

  it('gives one transition the same id whoever sees it, and the next transition another', () => {
    const before = prev(state('a'))
    const one = detectChanges(before, [t('a', 'flaky')], opts).changes[0]!
    const two = detectChanges(before, [t('a', 'flaky')], { ...opts, now: NOW + 5000 }).changes[0]!
    expect(one.id).toBe(two.id)
    expect(one.id).toBe(eventId('became_flaky', 'a', '2026-03-01T00:00:00.000Z'))
    const next = detectChanges(prev(state('a', { updatedAt: '2026-03-05T00:00:00.000Z' })), [t('a', 'flaky')], opts)
    expect(next.changes[0]!.id).not.toBe(one.id)
  })
})
