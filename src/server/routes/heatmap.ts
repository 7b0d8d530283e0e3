import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Run } from '../../model.js'
import type { HeatmapResponse, HeatmapRun } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { parseInput, runTime, selectionKey, toSelection } from '../selection.js'
import { heatOf, memoize } from '../snapshot.js'
import { iso } from '../to-json.js'
import { viewTests } from '../views.js'
import { toView, viewShape } from './view-query.js'

const DAY_MS = 86_400_000

const HeatmapQuery = z.object({ ...viewShape, limit: z.coerce.number().int().min(1).max(10_000).optional() })

/**
 * The most a default heatmap answer weighs: without `limit`, the page holds as many tests as fit, and the client
 * pages the rest with `offset` (`total_tests` says how many there are).
 */
export const HEATMAP_DEFAULT_BYTES = 300_000

function heatRun(r: Run, expiredBefore: number): HeatmapRun {
  const at = runTime(r)
  return {
    run_id: r.runId,
    at: iso(at),
    suite: r.suite,
    branch: r.branch,
    revision: r.revision,
    pipeline_id: r.pipelineId,
    pipeline_url: r.pipelineUrl ?? r.jobUrl,
    artifacts_url: r.artifactsUrl,
    status: r.status,
    env: r.env,
    artifacts_expired: at < expiredBefore,
  }
}

/**
 * `GET /heatmap`: tests × runs in a compact form (one string of cells per test), so that thousands of rows
 * travel and parse fast. The serialised body is memoised per snapshot: the same view costs one string copy.
 */
export function heatmapRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/heatmap', async (request, reply) => {
    const q = parseInput(HeatmapQuery, request.query, 'query')
    const selection = toSelection(q)
    const view = toView(q)
    const snapshot = await ctx.cache.get(selection)
    const key = `heatmap:${selectionKey(selection)}:${JSON.stringify(view)}:${q.offset}:${q.limit}`
    const body = memoize(snapshot, key, () => {
      const tests = viewTests(snapshot, view)
      const expiredBefore = ctx.now() - ctx.artifactExpiryDays * DAY_MS
      const runs = snapshot.heatRuns.map((r) => heatRun(r, expiredBefore))
      const row = (a: (typeof tests)[number]) => ({
        test_id: a.testId,
        name: a.name,
        module: a.module,
        suite: a.suite,
        verdict: a.verdict,
        score: Math.round(a.score * 1e4) / 1e4,
      })
      let limit = q.limit
      if (limit === undefined) {
        // Rows are added while they fit the budget: their size varies with names, the runs' with their URLs.
        let bytes = Buffer.byteLength(JSON.stringify(runs)) + 400
        limit = 0
        for (let i = q.offset; i < tests.length && limit < 10_000; i++) {
          bytes += Buffer.byteLength(JSON.stringify(row(tests[i]!))) + snapshot.heatRuns.length + 4
          if (bytes > HEATMAP_DEFAULT_BYTES) break
          limit++
        }
        limit = Math.max(1, limit)
      }
      const page = tests.slice(q.offset, q.offset + limit)
      const response: HeatmapResponse = {
        generated_at: iso(snapshot.computedAt),
        artifact_expiry_days: ctx.artifactExpiryDays,
        runs,
        tests: page.map(row),
        cells: page.map((t) => heatOf(snapshot, t)),
        total_tests: tests.length,
        offset: q.offset,
        limit,
      }
      // Kept as bytes: the same page is sent many times, and a string would be encoded again for each.
      return Buffer.from(JSON.stringify(response))
    })
    return reply.type('application/json; charset=utf-8').send(body)
  })
}
