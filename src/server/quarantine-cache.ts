import type { AuditEntry, QuarantineRecord } from '../store/store.js'
import type { ServerContext } from './context.js'

/**
 * The quarantine table as the read endpoints see it, by test id: cached like the facet lists (dropped when this
 * process writes, at most the probe interval behind other instances), so that a leaderboard page or a test's
 * detail costs no query for it. On PostgreSQL each such query is a round trip on the thread that answers.
 */
export function cachedQuarantines(ctx: Pick<ServerContext, 'cache' | 'store'>): Promise<Map<string, QuarantineRecord>> {
  return ctx.cache.value('quarantines', async () => {
    const byId = new Map<string, QuarantineRecord>()
    for (const q of await ctx.store.listQuarantines()) byId.set(q.testId, q)
    return byId
  })
}

/** A test's last 50 quarantine audit entries, cached the same way (only quarantine changes append to them). */
export function cachedAudit(ctx: Pick<ServerContext, 'cache' | 'store'>, testId: string): Promise<AuditEntry[]> {
  return ctx.cache.value(`audit:${testId}`, () => ctx.store.listAudit({ testId, limit: 50 }))
}
