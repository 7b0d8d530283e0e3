import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Run } from '../../model.js'
import type { HeatmapResponse, HeatmapRun, HeatmapTest } from '../api-types.js'
import type { VerdictKind } from '../../model.js'
import { ANALYSIS_BATCH, type AnalysisStore } from '../../store/analyses.js'
import { cellOf } from '../../analysis/window-facts.js'
import { answeredByRows, type AnalysisWindow } from '../persisted-reads.js'
import type { ServerContext } from '../context.js'
import { parseInput, runTime, selectionKey, toSelection } from '../selection.js'
import { HEATMAP_MAX_RUNS, heatOf, memoize } from '../snapshot.js'
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
    if (answeredByRows(selection)) {
      // Kept as bytes a moment: a page reads its tests' recent results, and the same page is asked for often.
      const w = await ctx.reads.window()
      const body = await ctx.reads.keep(`heatmap:${JSON.stringify(q)}`, async (analyses) =>
        Buffer.from(JSON.stringify(await fromRows(ctx, analyses, w, q))),
      )
      return reply.type('application/json; charset=utf-8').send(body)
    }
    const snapshot = await ctx.cache.get(selection)
    const key = `heatmap:${selectionKey(selection)}:${JSON.stringify(view)}:${q.offset}:${q.limit}`
    const body = memoize(snapshot, key, () => {
      const tests = viewTests(snapshot, view)
      const expiredBefore = ctx.now() - ctx.artifactExpiryDays * DAY_MS
      const runs = snapshot.heatRuns.map((r) => heatRun(r, expiredBefore))
      const limit = q.limit ?? fitting(runs, tests.slice(q.offset, q.offset + 10_000).map(heatTest))
      const page = tests.slice(q.offset, q.offset + limit)
      const response: HeatmapResponse = {
        generated_at: iso(snapshot.computedAt),
        artifact_expiry_days: ctx.artifactExpiryDays,
        runs,
        tests: page.map(heatTest),
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

function heatTest(a: {
  testId: string
  name: string
  module: string
  suite: string
  verdict: VerdictKind
  score: number
}): HeatmapTest {
  return {
    test_id: a.testId,
    name: a.name,
    module: a.module,
    suite: a.suite,
    verdict: a.verdict,
    score: Math.round(a.score * 1e4) / 1e4,
  }
}

/** How many of these rows a default page holds: rows are added while they fit {@link HEATMAP_DEFAULT_BYTES}. */
function fitting(runs: HeatmapRun[], rows: HeatmapTest[]): number {
  // Their size varies with names, the runs' with their URLs.
  let bytes = Buffer.byteLength(JSON.stringify(runs)) + 400
  let limit = 0
  for (const row of rows) {
    bytes += Buffer.byteLength(JSON.stringify(row)) + runs.length + 4
    if (bytes > HEATMAP_DEFAULT_BYTES) break
    limit++
  }
  return Math.max(1, limit)
}

/**
 * The default selection's heatmap (of one suite, or of all) from the persisted analyses and an index range: the
 * newest runs of the window (at most {@link HEATMAP_MAX_RUNS}), one page of tests in the leaderboard's order, and those tests' results in
 * those runs (`heatCells`), read by test.
 */
async function fromRows(
  ctx: ServerContext,
  analyses: AnalysisStore,
  w: AnalysisWindow,
  q: z.output<typeof HeatmapQuery>,
): Promise<HeatmapResponse> {
  const view = toView(q)
  const filter = ctx.reads.filter(w, view, q.suite)
  const [heatRuns, counts] = await Promise.all([
    ctx.store.listRuns({ since: w.since, suite: q.suite, limit: HEATMAP_MAX_RUNS }),
    analyses.countAnalyses(filter),
  ])
  heatRuns.reverse()
  const expiredBefore = ctx.now() - ctx.artifactExpiryDays * DAY_MS
  const runs = heatRuns.map((r) => heatRun(r, expiredBefore))
  // Every row takes at least a cell per run and its names: an upper bound on what a default page can hold.
  const most = q.limit ?? Math.min(10_000, Math.ceil(HEATMAP_DEFAULT_BYTES / (runs.length + 60)) + 1)
  const rows = await analyses.pageAnalyses({
    ...filter,
    sort: view.sort,
    order: view.order,
    offset: q.offset,
    limit: most,
    refsOnly: true,
  })
  const tests = rows.map(heatTest)
  const limit = q.limit ?? fitting(runs, tests)
  const page = rows.slice(0, limit)
  const column = new Map(heatRuns.map((r, i) => [r.runId, i]))
  const cells = new Map(page.map((t) => [t.testId, Buffer.alloc(heatRuns.length, '.')]))
  if (heatRuns.length && page.length) {
    // Only the cells: each page test's results in these runs, an index range per test over their times.
    const runIds = heatRuns.map((r) => r.runId)
    for (let i = 0; i < page.length; i += ANALYSIS_BATCH) {
      const testIds = page.slice(i, i + ANALYSIS_BATCH).map((t) => t.testId)
      for (const c of await ctx.store.heatCells(testIds, runIds)) {
        const col = column.get(c.runId)
        const row = cells.get(c.testId)
        if (row && col !== undefined) row[col] = cellOf(c).charCodeAt(0)
      }
    }
  }
  return {
    generated_at: iso(w.computedAt),
    artifact_expiry_days: ctx.artifactExpiryDays,
    runs,
    tests: tests.slice(0, limit),
    cells: page.map((t) => cells.get(t.testId)!.toString('latin1')),
    total_tests: counts.flaky + counts.broken + counts.healthy + counts.insufficient_data,
    offset: q.offset,
    limit,
  }
}
