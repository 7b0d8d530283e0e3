import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFoundError } from '../../errors.js'
import type { AttemptsResponse, HistoryResponse, TestDetailResponse, TestsResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { cachedAudit, cachedQuarantines } from '../quarantine-cache.js'
import { testRefOf } from '../snapshot.js'
import { parseInput, SelectionQuery, toSelection, type Selection } from '../selection.js'
import { answeredByRows } from '../persisted-reads.js'
import type { TestRef } from '../../model.js'
import { attemptToJson, auditToJson, entryToJson, iso, quarantineToJson, testRefToJson } from '../to-json.js'

const TestsQuery = z.object({
  search: z.string().trim().max(500).optional(),
  suite: z.string().trim().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
})

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1' || v === '')

const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  attempts: flag,
})

type TestParams = { Params: { testId: string } }

/** `GET /tests`, `GET /tests/:testId`, `GET /tests/:testId/history`, `GET /tests/:testId/runs/:runId/attempts`. */
export function testRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/tests', async (request): Promise<TestsResponse> => {
    const q = parseInput(TestsQuery, request.query, 'query')
    const filter = { search: q.search || undefined, suite: q.suite, limit: q.limit, offset: q.offset }
    const tests = await ctx.store.listTests(filter)
    return { tests: tests.map(testRefToJson), offset: q.offset, limit: q.limit }
  })

  api.get<TestParams>('/tests/:testId', async (request, reply) => {
    const { testId } = request.params
    const selection = toSelection(parseInput(SelectionQuery, request.query, 'query'))
    // All at once: on PostgreSQL each query is a round trip, and one after the other they add up under load.
    const [known, quarantines, audit] = await Promise.all([
      analysedTest(ctx, selection, testId),
      cachedQuarantines(ctx),
      cachedAudit(ctx, testId),
    ])
    const test = known.ref ?? (await ctx.store.getTest(testId))
    if (!test) throw new NotFoundError(`no test "${testId}"`)
    const quarantine = quarantines.get(testId)
    const head: Pick<TestDetailResponse, 'generated_at' | 'test'> = {
      generated_at: iso(known.computedAt),
      test: testRefToJson(test),
    }
    const tail: Pick<TestDetailResponse, 'quarantine' | 'audit'> = {
      quarantine: quarantine ? quarantineToJson(quarantine, ctx.now()) : null,
      audit: audit.map(auditToJson),
    }
    // The analysis is kept serialised: spliced in as it is, never parsed and written again.
    const analysis = known.detail ?? 'null'
    return reply
      .type('application/json; charset=utf-8')
      .send(`${JSON.stringify(head).slice(0, -1)},"analysis":${analysis},${JSON.stringify(tail).slice(1)}`)
  })

  api.get<TestParams>('/tests/:testId/history', async (request): Promise<HistoryResponse> => {
    const { testId } = request.params
    const q = parseInput(HistoryQuery, request.query, 'query')
    const history = await ctx.store.getTestHistory(testId, { limit: q.limit })
    if (!history) throw new NotFoundError(`no test "${testId}"`)
    const entries = history.entries.map(entryToJson)
    if (q.attempts) {
      for (const e of entries) e.attempt_details = (await ctx.store.getAttempts(testId, e.run_id)).map(attemptToJson)
    }
    return { test_id: testId, entries }
  })

  type AttemptParams = { Params: { testId: string; runId: string } }
  api.get<AttemptParams>('/tests/:testId/runs/:runId/attempts', async (request): Promise<AttemptsResponse> => {
    const { testId, runId } = request.params
    const attempts = await ctx.store.getAttempts(testId, runId)
    if (attempts.length === 0) throw new NotFoundError(`no result of "${testId}" in run "${runId}"`)
    return { test_id: testId, run_id: runId, attempts: attempts.map(attemptToJson) }
  })
}

/**
 * A test's analysis in a selection, serialised, with its ref when known: for the default selection (of its suite,
 * or of all) its persisted row (when it has a result in the analysis window), else the selection's snapshot.
 */
async function analysedTest(
  ctx: ServerContext,
  selection: Selection,
  testId: string,
): Promise<{ ref: TestRef | null; detail: string | null; computedAt: number }> {
  if (answeredByRows(selection)) {
    const w = await ctx.reads.window()
    const [row] = await ctx.reads.analyses(w).pageAnalyses({
      since: w.since,
      suite: selection.suite,
      testIds: [testId],
      sort: 'flaky',
      order: 'desc',
      offset: 0,
      limit: 1,
    })
    if (row?.json) {
      const ref = { testId: row.testId, suite: row.suite, module: row.module, name: row.name, file: row.file }
      return { ref, detail: row.json, computedAt: w.computedAt }
    }
    if (selection.suite !== undefined) {
      // A test of another suite has no analysis in this one.
      const ref = await ctx.store.getTest(testId)
      if (ref?.suite !== selection.suite) return { ref, detail: null, computedAt: w.computedAt }
    }
    // No analysed row: a read-only instance over a store whose rows its writer left stale (a reporter writing
    // SQLite directly) still shows the test's analysis, made from its file alone.
    return { ref: null, detail: await ctx.reads.analyseAfresh(w, testId), computedAt: w.computedAt }
  }
  const snapshot = await ctx.cache.get(selection)
  const known = snapshot.byId.get(testId)
  return { ref: known ? testRefOf(known) : null, detail: known?.detail ?? null, computedAt: snapshot.computedAt }
}
