import type { FastifyInstance } from 'fastify'
import type { KioskResponse, KioskSuite } from '../api-types.js'
import { answeredByRows } from '../persisted-reads.js'
import type { ServerContext } from '../context.js'
import { parseInput, SelectionQuery, toSelection } from '../selection.js'
import { memoize, type SuiteHealth } from '../snapshot.js'
import { iso } from '../to-json.js'

const DAY_MS = 86_400_000
/** Rows per list: what fits a wall screen in type readable from across the room. */
const KIOSK_ROWS = 8

/** `GET /kiosk`: the wall display's data: what is broken now, the top flaky tests, and days without failures. */
export function kioskRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/kiosk', async (request): Promise<KioskResponse> => {
    const selection = toSelection(parseInput(SelectionQuery, request.query, 'query'))
    if (answeredByRows(selection)) return fromRows(ctx, selection.suite)
    const snapshot = await ctx.cache.get(selection)
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
        suites: kioskSuites(snapshot.suites, brokenSuites, asOf),
      }
    })
  })
}

function kioskSuites(suites: SuiteHealth[], brokenSuites: Set<string>, asOf: number): KioskSuite[] {
  return suites.map((s) => ({
    suite: s.suite,
    // A suite with a test broken now has no days without failures, whatever its newest run said.
    days_without_failure: brokenSuites.has(s.suite)
      ? 0
      : s.lastFailureAt === null
        ? null
        : Math.max(0, Math.floor((asOf - s.lastFailureAt) / DAY_MS)),
    last_failure_at: s.lastFailureAt === null ? null : iso(s.lastFailureAt),
    last_run_at: s.lastRunAt === null ? null : iso(s.lastRunAt),
  }))
}

/**
 * The default selection's wall display (of one suite, or of all) from the persisted analyses: two short pages, two
 * counts, one per suite.
 */
async function fromRows(ctx: ServerContext, suite: string | undefined): Promise<KioskResponse> {
  const w = await ctx.reads.window()
  const analyses = ctx.reads.analyses(w)
  const page = { since: w.since, suite, offset: 0, limit: KIOSK_ROWS, refsOnly: true } as const
  const [broken, brokenSuites, flaky, counts, suites, runs] = await Promise.all([
    analyses.pageAnalyses({ ...page, verdict: 'broken', sort: 'streak_since', order: 'desc' }),
    analyses.brokenSuites(w.since, suite),
    analyses.pageAnalyses({ ...page, verdict: 'flaky', sort: 'flaky', order: 'desc' }),
    analyses.countAnalyses({ since: w.since, suite, verdict: 'broken' }),
    analyses.suiteHealth(w.since, suite),
    ctx.reads.runs(w, suite),
  ])
  return {
    generated_at: iso(w.computedAt),
    as_of: iso(w.clock),
    newest_run_at: runs.newest === null ? null : iso(runs.newest),
    broken_total: counts.broken,
    broken: broken.map((t) => ({
      test_id: t.testId,
      name: t.name,
      suite: t.suite,
      streak: t.streak,
      since: t.streakSince === null ? null : iso(t.streakSince),
    })),
    flaky: flaky.map((t) => ({
      test_id: t.testId,
      name: t.name,
      suite: t.suite,
      score: Math.round(t.score * 1e4) / 1e4,
      last5: t.last5,
    })),
    suites: kioskSuites(suites, new Set(brokenSuites), w.clock),
  }
}
