import type { FastifyInstance } from 'fastify'
import type { TrendsResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { parseInput, SelectionQuery, toSelection } from '../selection.js'
import { trendDefinition } from '../snapshot.js'
import { iso } from '../to-json.js'
import { answeredByRows } from '../persisted-reads.js'

const DAY_MS = 86_400_000

/** `GET /trends`: flaky and broken tests per UTC day, by the definitions it returns. */
export function trendRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/trends', async (request): Promise<TrendsResponse> => {
    const selection = toSelection(parseInput(SelectionQuery, request.query, 'query'))
    if (answeredByRows(selection)) {
      // Each test's share per day is kept with its analysis: the sum is one read of the window's rows.
      const w = await ctx.reads.window()
      const days = await ctx.reads.analyses(w).trendDays(w.since, selection.suite)
      return {
        generated_at: iso(w.computedAt),
        definition: trendDefinition(ctx.analysis.verdict.brokenMinConsecutive),
        days: days.map(({ day, ...c }) => ({ day: new Date(day * DAY_MS).toISOString().slice(0, 10), ...c })),
      }
    }
    const snapshot = await ctx.cache.get(selection)
    return {
      generated_at: iso(snapshot.computedAt),
      definition: trendDefinition(ctx.analysis.verdict.brokenMinConsecutive),
      days: snapshot.trends,
    }
  })
}
