import { describe, expect, it } from 'vitest'
import type { VerdictKind } from '../../src/model.js'
import type { TestState } from '../../src/store/notifications.js'
import type { TicketRow } from '../../src/store/tickets.js'
import { planTickets, ticketMarker, type PlanInput } from '../../src/tickets/plan.js'

const ID = 'unit::src/cart.test.ts::adds an item'
const NOW = Date.parse('2026-11-20T10:00:00Z')

const state = (verdict: VerdictKind, quarantined = false): TestState => ({
  testId: ID,
  verdict,
  quarantined,
  expiryWarnedFor: null,
  updatedAt: '2026-11-19T10:00:00Z',
})

const openRow: TicketRow = {
  testId: ID,
  tracker: 'github',
  marker: ticketMarker(null, ID),
  key: '12',
  url: 'https://github.com/acme/shop/issues/12',
  wanted: 'open',
  actual: 'open',
  reason: 'became flaky',
  pendingComment: null,
  lastFailureAt: null,
  attempts: 0,
  nextAttemptAt: 0,
  lastError: null,
  leaseOwner: null,
  leaseUntil: 0,
  updatedAt: '2026-11-19T10:00:00Z',
}

function plan(previous: TestState, verdict: VerdictKind): ReturnType<typeof planTickets> {
  const input: PlanInput = {
    previous: new Map([[ID, previous]]),
    current: [{ testId: ID, verdict, quarantine: null }],
    analyses: new Map(),
    rows: new Map([[ID, openRow]]),
    policy: { openOn: ['flaky', 'quarantined'], commentOnFailure: true },
    tracker: 'github',
    project: null,
    links: { serverUrl: null, project: null },
    now: NOW,
  }
  return planTickets(input)
}

describe('ticket plan: a ticket closes when the fix is earned', () => {
  it('closes the open ticket of a flaky test whose verdict became healthy (its fix earned), saying why', () => {
    const p = plan(state('flaky'), 'healthy')
    expect(p.actions).toEqual([{ testId: ID, action: 'close', reason: 'fixed: the test is healthy now' }])
    expect(p.wants[0]).toMatchObject({ testId: ID, wanted: { state: 'closed' } })
  })

  it('keeps it open while the test is still flaky (fix not yet earned) or turned broken', () => {
    expect(plan(state('flaky'), 'flaky').actions).toEqual([])
    expect(plan(state('flaky'), 'broken').actions).toEqual([])
  })

  it('says "released from quarantine" when the test left quarantine', () => {
    const p = plan(state('flaky', true), 'healthy')
    expect(p.actions).toEqual([{ testId: ID, action: 'close', reason: 'released from quarantine' }])
  })
})
