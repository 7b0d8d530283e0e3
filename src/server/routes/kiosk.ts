import type { FastifyInstance } from 'fastify'
import type { KioskResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { parseInput, SelectionQuery, toSelection } from '../selection.js'
import { memoize } from '../snapshot.js'
import { iso } from '../to-json.js'

const DAY_MS = 86_400_000
/** Rows per list: what fits a wall screen in type readable from across the room. */
const KIOSK_ROWS = 8

/** `GET /kiosk`: the wall display's data: what is broken now, the top flaky tests, and days without failures. */
export function kioskRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/kiosk', async (request): Promise<KioskResponse> => {
    const snapshot = await ctx.cache.get(toSelection(parseInput(SelectionQuery, request.query, 'query')))
    return memoize(snapshot, 'kiosk', (): KioskResponse => {
      const broken = snapshot.tests.filter((t) => t.verdict === 'broken')
      // Every panel reads the same as-of time as the verdicts (the analysis clock, not the wall clock), so that
      // a wall display left idle for a weekend does not count days the verdicts never saw.
      const asOf = snapshot.now
      const brokenSuites = new Set(broken.map((t) => t.suite))
      return {
        generated_at: iso(snapshot.computedAt),
        as_of: iso(asOf),
        newest_run_at: snapshot.newestRunAt === null ? null : iso(snapshot.newestRunAt),
        broken_total: broken.length,
        // Most recently broken first: the news on the wall.
        broken: broken
          .sort((a, b) => (b.streakSince ?? 0) - (a.streakSince ?? 0))
          .slice(0, KIOSK_ROWS)
          .map((t) => ({
            test_id: t.testId,
            name: t.name,
            suite: t.suite,
            streak: t.streak,
            since: t.streakSince === null ? null : iso(t.streakSince),
          })),
        flaky: snapshot.tests
          .filter((t) => t.verdict === 'flaky')
          .slice(0, KIOSK_ROWS)
          .map((t) => ({
            test_id: t.testId,
            name: t.name,
            suite: t.suite,
            score: Math.round(t.score * 1e4) / 1e4,
            last5: t.last5,
          })),
        suites: snapshot.suites.map((s) => ({
          suite: s.suite,
          // A suite with a test broken now has no days without failures, whatever its newest run said.
          days_without_failure: brokenSuites.has(s.suite)
            ? 0
            : s.lastFailureAt === null
              ? null
              : Math.max(0, Math.floor((asOf - s.lastFailureAt) / DAY_MS)),
          last_failure_at: s.lastFailureAt === null ? null : iso(s.lastFailureAt),
          last_run_at: s.lastRunAt === null ? null : iso(s.lastRunAt),
        })),
      }
    })
  })
}
