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
import type { TestAnalysisJson } from '../../analysis/index.js'
import type { VerdictKind } from '../../model.js'
import { ANALYSIS_BATCH, type AnalysisPageRow } from '../../store/analyses.js'
import { answeredByRows, leaderboardRowOf } from '../persisted-reads.js'
import { toView, viewShape } from './view-query.js'

const LeaderboardQuery = z.object({ ...viewShape, limit: z.coerce.number().int().min(1).max(1000).default(50) })

/** `GET /leaderboard`: analysed tests, most flaky first by default, paged. */
export function leaderboardRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/leaderboard', async (request, reply) => {
    const q = parseInput(LeaderboardQuery, request.query, 'query')
    const view = toView(q)
    const selection = toSelection(q)
    if (answeredByRows(selection)) return reply.type('application/json; charset=utf-8').send(await fromRows(ctx, q))
    const [snapshot, quarantines] = await Promise.all([ctx.cache.get(selection), cachedQuarantines(ctx)])
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

/**
 * The default selection's leaderboard (of one suite, or of all) from the persisted analyses: a count per verdict
 * and one page, each an indexed query (the owner filter, which CODEOWNERS patterns decide, reads the window's refs
 * and filters them here).
 */
async function fromRows(ctx: ServerContext, q: z.output<typeof LeaderboardQuery>): Promise<string> {
  const view = toView(q)
  const [w, quarantines] = await Promise.all([ctx.reads.window(), cachedQuarantines(ctx)])
  const analyses = ctx.reads.analyses(w)
  const now = ctx.now()
  const active: string[] = []
  for (const r of quarantines.values()) if (isActive(r, now)) active.push(r.testId)
  const filter = ctx.reads.filter(w, view, q.suite)
  const runs = ctx.reads.runs(w, q.suite)
  const owner = q.owner || undefined
  const page = { ...filter, sort: view.sort, order: view.order }
  let counts: Record<VerdictKind, number>
  let rows: AnalysisPageRow[]
  if (owner) {
    const owned = (await analyses.pageAnalyses({ ...page, offset: 0, limit: null, refsOnly: true })).filter((t) =>
      ctx.owners(t).includes(owner),
    )
    counts = { flaky: 0, broken: 0, healthy: 0, insufficient_data: 0 }
    for (const t of owned) counts[t.verdict]++
    const ids = owned.slice(q.offset, q.offset + q.limit).map((t) => t.testId)
    const byId = new Map(
      (await analyses.pageAnalyses({ ...page, testIds: ids, offset: 0, limit: null })).map((t) => [t.testId, t]),
    )
    rows = ids.flatMap((id) => byId.get(id) ?? [])
  } else {
    ;[counts, rows] = await Promise.all([
      analyses.countAnalyses(filter),
      analyses.pageAnalyses({ ...page, offset: q.offset, limit: q.limit }),
    ])
  }
  let quarantined = 0
  for (let i = 0; i < active.length; i += ANALYSIS_BATCH) {
    const c = await analyses.countAnalyses({
      since: w.since,
      suite: q.suite,
      testIds: active.slice(i, i + ANALYSIS_BATCH),
    })
    quarantined += c.flaky + c.broken + c.healthy + c.insufficient_data
  }
  const total = counts.flaky + counts.broken + counts.healthy + counts.insufficient_data
  const activeSet = new Set(active)
  const { runs: runCount, newest } = await runs
  const body: LeaderboardResponse = {
    generated_at: iso(w.computedAt),
    newest_run_at: newest === null ? null : iso(newest),
    runs: runCount,
    total,
    offset: q.offset,
    limit: q.limit,
    sort: view.sort,
    order: view.order,
    summary: { tests: total, ...counts, quarantined },
    ...(w.pending > 0 ? { pending: w.pending } : {}),
    rows: rows.flatMap((t) =>
      t.json === null
        ? []
        : [
            {
              ...leaderboardRowOf(t, JSON.parse(t.json) as TestAnalysisJson),
              quarantined: activeSet.has(t.testId),
              owners: ctx.owners(t),
            },
          ],
    ),
  }
  return JSON.stringify(body)
}
