import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ImpactResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { impactReport } from '../impact-report.js'
import { impactFromRows } from '../impact-rows.js'
import { answeredByRows } from '../persisted-reads.js'
import { parseInput, selectionShape, toSelection } from '../selection.js'

const ImpactQuery = z.object({ ...selectionShape, limit: z.coerce.number().int().min(1).max(100).default(20) })

/** `GET /impact`: what flaky tests cost CI, per week, owner, suite and test, by the definitions it returns. */
export function impactRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/impact', async (request): Promise<ImpactResponse> => {
    const q = parseInput(ImpactQuery, request.query, 'query')
    const selection = toSelection(q)
    if (answeredByRows(selection)) {
      const fromRows = await impactFromRows(ctx, q.limit, selection.suite)
      if (fromRows) return fromRows
    }
    const snapshot = await ctx.cache.get(selection)
    return impactReport(snapshot, {
      store: ctx.scanStore,
      owners: ctx.owners,
      brokenMin: ctx.analysis.verdict.brokenMinConsecutive,
      limit: q.limit,
    })
  })
}
