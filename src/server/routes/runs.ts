import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFoundError } from '../../errors.js'
import type { Run } from '../../model.js'
import type { RunSummary } from '../../store/store.js'
import type { FacetsResponse, RunJson, RunsResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { parseInput, runTime } from '../selection.js'
import { runToJson } from '../to-json.js'

const RunsQuery = z.object({
  suite: z.string().trim().min(1).optional(),
  branch: z.string().trim().min(1).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  offset: z.coerce.number().int().min(0).default(0),
})

/** One run's counts: the runs stored at its time (usually just it), or what an analysis in memory knows. */
async function runCounts(ctx: ServerContext, run: Run): Promise<RunSummary | undefined> {
  const at = runTime(run)
  const near = await ctx.store.runSummaries({ since: at, until: at })
  const found = near.find((s) => s.runId === run.runId)
  if (found) return found
  for (const s of ctx.cache.cached()) {
    const c = s.runCounts.get(run.runId)
    if (c) return c
  }
  return undefined
}

/** `GET /runs`, `GET /runs/:runId`, `GET /facets`. */
export function runRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/runs', async (request): Promise<RunsResponse> => {
    const q = parseInput(RunsQuery, request.query, 'query')
    const filter = {
      suite: q.suite,
      branch: q.branch,
      since: q.since ? Date.parse(q.since) : undefined,
      until: q.until ? Date.parse(q.until) : undefined,
      limit: q.limit,
      offset: q.offset,
    }
    // Same filter, same order: the page of counts matches the page of runs (the store keeps counts per run).
    const [runs, summaries] = await Promise.all([ctx.store.listRuns(filter), ctx.store.runSummaries(filter)])
    const counts = new Map(summaries.map((s) => [s.runId, s]))
    return { runs: runs.map((r) => runToJson(r, counts.get(r.runId))), offset: q.offset, limit: q.limit }
  })

  api.get<{ Params: { runId: string } }>('/runs/:runId', async (request): Promise<RunJson> => {
    const run = await ctx.store.getRun(request.params.runId)
    if (!run) throw new NotFoundError(`no run "${request.params.runId}"`)
    const timings = await ctx.store.getRunTimings(run.runId)
    return {
      ...runToJson(run, await runCounts(ctx, run)),
      timings: timings.map((t) => ({ name: t.name, duration_ms: t.durationMs, status: t.status })),
    }
  })

  api.get('/facets', (): Promise<FacetsResponse> =>
    ctx.cache.value('facets', async () => {
      const runs = await ctx.store.listRuns()
      const suites = new Set<string>()
      const branches = new Set<string>()
      const env = new Map<string, Set<string>>()
      for (const r of runs) {
        suites.add(r.suite)
        if (r.branch) branches.add(r.branch)
        for (const [k, v] of Object.entries(r.env)) {
          let values = env.get(k)
          if (!values) env.set(k, (values = new Set()))
          values.add(v)
        }
      }
      const sorted = (s: Set<string>) => [...s].sort()
      const newest = runs[0]
      const owners = new Set<string>()
      for (const t of await ctx.store.listTests()) for (const o of ctx.owners(t)) owners.add(o)
      return {
        suites: sorted(suites),
        branches: sorted(branches),
        env: Object.fromEntries([...env.keys()].sort().map((k) => [k, sorted(env.get(k)!)])),
        runs: runs.length,
        newest_run_at: newest ? (newest.startedAt ?? newest.uploadedAt) : null,
        owners: sorted(owners),
      }
    }),
  )
}
