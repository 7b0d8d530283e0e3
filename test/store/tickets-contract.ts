import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import type { TicketWant } from '../../src/store/tickets.js'

const AT = '2026-03-01T00:00:00.000Z'
const want = (testId: string, extra: Partial<TicketWant> = {}): TicketWant => ({
  testId,
  tracker: 'github',
  marker: `fw-${testId}`,
  wanted: { state: 'open', reason: 'became flaky' },
  at: AT,
  now: 1000,
  ...extra,
})

/**
 * The ticket concern of a store, the same on both backends. `openTwo` gives two stores on the same database (two
 * connections, as two processes would have), for the lease.
 */
export function ticketStoreContract(name: string, openTwo: () => Promise<[Store, Store]>): void {
  describe(`${name} ticket store contract`, () => {
    let a: Store
    let b: Store
    beforeEach(async () => {
      ;[a, b] = await openTwo()
    })
    afterEach(async () => {
      await a.close()
      await b.close()
    })

    it('keeps the ticket states apart from the webhooks', async () => {
      const state = { testId: 't1', verdict: 'flaky' as const, quarantined: true, expiryWarnedFor: null, updatedAt: AT }
      await a.tickets().recordChanges([state], [])
      expect(await a.tickets().listStates()).toEqual([state])
      expect(await a.notifications().listStates()).toEqual([])
    })

    it('claims a ticket with work to do once, under a lease, and forgets it once synced', async () => {
      await a.tickets().recordChanges([], [want('t1')])
      const claimed = await a.tickets().claimDue('p1', 1000, 60_000, 10)
      expect(claimed.map((t) => [t.testId, t.wanted, t.actual, t.leaseOwner])).toEqual([['t1', 'open', null, 'p1']])
      expect(await b.tickets().claimDue('p2', 1000, 60_000, 10)).toEqual([])
      const ok = await a.tickets().recordSync('t1', 'p1', {
        ok: true,
        key: '12',
        url: 'https://github.example/acme/shop/issues/12',
        actual: 'open',
        sentComment: null,
        at: AT,
      })
      expect(ok).toBe(true)
      expect(await a.tickets().get('t1')).toMatchObject({ key: '12', actual: 'open', leaseOwner: null, attempts: 0 })
      expect(await b.tickets().claimDue('p2', 2000, 60_000, 10)).toEqual([])
      // Closing is work again; so is a comment on an open ticket.
      await a.tickets().recordChanges([], [want('t1', { wanted: { state: 'closed', reason: 'fixed' }, now: 3000 })])
      expect((await b.tickets().claimDue('p2', 3000, 60_000, 10)).map((t) => t.wanted)).toEqual(['closed'])
    })

    it('a lease that runs out lets another process take the ticket, and the first one can no longer record', async () => {
      await a.tickets().recordChanges([], [want('t1')])
      expect(await a.tickets().claimDue('p1', 1000, 100, 10)).toHaveLength(1)
      expect(await b.tickets().claimDue('p2', 1050, 100, 10)).toEqual([])
      expect(await b.tickets().claimDue('p2', 1100, 100, 10)).toHaveLength(1)
      const late = await a
        .tickets()
        .recordSync('t1', 'p1', { ok: false, error: 'HTTP 500', nextAttemptAt: 9999, at: AT })
      expect(late).toBe(false)
      expect((await a.tickets().get('t1'))!.leaseOwner).toBe('p2')
    })

    it('a failed sync is retried when its next attempt falls due', async () => {
      await a.tickets().recordChanges([], [want('t1')])
      await a.tickets().claimDue('p1', 1000, 60_000, 10)
      await a.tickets().recordSync('t1', 'p1', { ok: false, error: 'HTTP 503', nextAttemptAt: 5000, at: AT })
      expect(await a.tickets().get('t1')).toMatchObject({ attempts: 1, lastError: 'HTTP 503', nextAttemptAt: 5000 })
      expect(await a.tickets().claimDue('p1', 4999, 60_000, 10)).toEqual([])
      expect(await a.tickets().claimDue('p1', 5000, 60_000, 10)).toHaveLength(1)
    })

    it('keeps a comment that arrived during a sync, and clears the one the sync sent', async () => {
      await a.tickets().recordChanges([], [want('t1')])
      await a.tickets().claimDue('p1', 1000, 60_000, 10)
      await a
        .tickets()
        .recordSync('t1', 'p1', { ok: true, key: '1', url: 'u', actual: 'open', sentComment: null, at: AT })
      await a
        .tickets()
        .recordChanges([], [want('t1', { wanted: undefined, comment: 'failed again in r5', lastFailureAt: 5 })])
      const [claimed] = await a.tickets().claimDue('p1', 1000, 60_000, 10)
      expect(claimed).toMatchObject({ pendingComment: 'failed again in r5', lastFailureAt: 5 })
      // A newer failure comes in while the comment is being sent.
      await b
        .tickets()
        .recordChanges([], [want('t1', { wanted: undefined, comment: 'failed again in r6', lastFailureAt: 6 })])
      await a.tickets().recordSync('t1', 'p1', {
        ok: true,
        key: '1',
        url: 'u',
        actual: 'open',
        sentComment: 'failed again in r5',
        at: AT,
      })
      expect(await a.tickets().get('t1')).toMatchObject({ pendingComment: 'failed again in r6', lastFailureAt: 6 })
      const [next] = await a.tickets().claimDue('p1', 1000, 60_000, 10)
      await a
        .tickets()
        .recordSync('t1', 'p1', {
          ok: true,
          key: '1',
          url: 'u',
          actual: 'open',
          sentComment: next!.pendingComment,
          at: AT,
        })
      expect((await a.tickets().get('t1'))!.pendingComment).toBeNull()
      // A comment on a ticket that is closed, or never opened, is no work.
      await a.tickets().recordChanges([], [want('t2', { wanted: undefined, comment: 'x' })])
      expect(await a.tickets().claimDue('p1', 1000, 60_000, 10)).toEqual([])
    })

    it('two processes claiming at once take different tickets, and all of them', async () => {
      await a.tickets().recordChanges(
        [],
        Array.from({ length: 40 }, (_, i) => want(`t${String(i).padStart(2, '0')}`)),
      )
      const [x, y] = await Promise.all([
        a.tickets().claimDue('p1', 1000, 60_000, 25),
        b.tickets().claimDue('p2', 1000, 60_000, 25),
      ])
      const ids = [...x, ...y].map((t) => t.testId)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids).toHaveLength(40)
      expect((await a.tickets().list()).length).toBe(40)
    })
  })
}
