import type { FastifyInstance } from 'fastify'
import type { TrendsResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { parseInput, SelectionQuery, toSelection } from '../selection.js'
import { trendDefinition } from '../snapshot.js'
import { iso } from '../to-json.js'

/** `GET /trends`: flaky and broken tests per UTC day, by the definitions it returns. */
export function trendRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/trends', async (request): Promise<TrendsResponse> => {
    const snapshot = await ctx.cache.get(toSelection(parseInput(SelectionQuery, request.query, 'query')))
    return {
      generated_at: iso(snapshot.computedAt),
      definition: trendDefinition(ctx.analysis.verdict.brokenMinConsecutive),
      days: snapshot.trends,
    }
  })
}
