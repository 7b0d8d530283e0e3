import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { isActive } from '../../quarantine/gate.js'
import type { LeaderboardResponse, LeaderboardSummary } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { cachedQuarantines } from '../quarantine-cache.js'
import { parseInput, toSelection } from '../selection.js'
import { memoize } from '../snapshot.js'
import { iso } from '../to-json.js'
import { viewTests } from '../views.js'
import { toView, viewShape } from './view-query.js'

const LeaderboardQuery = z.object({ ...viewShape, limit: z.coerce.number().int().min(1).max(1000).default(50) })

/** `GET /leaderboard`: analysed tests, most flaky first by default, paged. */
export function leaderboardRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/leaderboard', async (request, reply) => {
    const q = parseInput(LeaderboardQuery, request.query, 'query')
    const view = toView(q)
    const [snapshot, quarantines] = await Promise.all([ctx.cache.get(toSelection(q)), cachedQuarantines(ctx)])
    const now = ctx.now()
    const active = new Set<string>()
    for (const r of quarantines.values()) if (isActive(r, now)) active.add(r.testId)
    const owner = q.owner || undefined
    const viewed = viewTests(snapshot, view)
    const tests = owner ? viewed.filter((t) => ctx.owners(t).includes(owner)) : viewed
    const counts = memoize(snapshot, `summary:${view.search ?? ''}:${view.verdict ?? ''}:${owner ?? ''}`, () => {
      const c = { tests: tests.length, flaky: 0, broken: 0, healthy: 0, insufficient_data: 0 }
      for (const t of tests) c[t.verdict]++
      return c
    })
    let quarantined = 0
    for (const id of active) if (snapshot.byId.has(id)) quarantined++
    const summary: LeaderboardSummary = { ...counts, quarantined }
    const head: Omit<LeaderboardResponse, 'rows'> & { rows: [] } = {
      generated_at: iso(snapshot.computedAt),
      newest_run_at: snapshot.newestRunAt === null ? null : iso(snapshot.newestRunAt),
      runs: snapshot.runs.length,
      total: tests.length,
      offset: q.offset,
      limit: q.limit,
      sort: view.sort,
      order: view.order,
      summary,
      rows: [],
    }
    // Each row is kept serialised in the snapshot: the two per-request fields are spliced onto its end, so that a
    // page costs no parse and no serialisation of its rows (the hottest path under load).
    const rows = tests.slice(q.offset, q.offset + q.limit).map((t) => {
      const owners = JSON.stringify(ctx.owners(t))
      return `${t.row.slice(0, -1)},"quarantined":${active.has(t.testId)},"owners":${owners}}`
    })
    const json = JSON.stringify(head)
    return reply.type('application/json; charset=utf-8').send(`${json.slice(0, -3)}[${rows.join(',')}]}`)
  })
}
