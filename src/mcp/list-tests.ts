import { z } from 'zod'
import type { VerdictKind } from '../model.js'
import type { McpContext, TestSummary } from './context.js'

/** Tests one `list_tests` answer lists at most. */
export const MCP_LIST_MAX = 100

export const listTestsInput = {
  verdicts: z
    .array(z.enum(['flaky', 'broken', 'healthy', 'insufficient_data']))
    .max(4)
    .optional()
    .describe('only these verdicts (default: flaky and broken; with quarantined: true, any)'),
  quarantined: z.boolean().optional().describe('true: only quarantined tests; false: only tests not quarantined'),
  suite: z.string().max(500).optional().describe('only this suite'),
  owner: z.string().max(200).optional().describe('only tests this CODEOWNERS owner owns, e.g. @org/team'),
  search: z.string().max(500).optional().describe('case-insensitive part of the test id'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MCP_LIST_MAX)
    .optional()
    .describe(`at most this many (default 20, max ${MCP_LIST_MAX})`),
  offset: z.number().int().min(0).optional().describe('skip this many, for the next page'),
}

export type ListTestsArgs = z.infer<z.ZodObject<typeof listTestsInput>>

const round = (x: number | null) => (x === null ? null : Math.round(x * 10_000) / 10_000)

/**
 * Flaky, broken and quarantined tests, most harmful first, filtered and paged. The total counts every match, so
 * that an agent knows how much it was not shown; `pending`, when present, how many tests' analyses were not current
 * (the answer is partial until they are).
 */
export async function listTests(ctx: McpContext, args: ListTestsArgs) {
  const quarantines = new Map((await ctx.quarantine.list()).map((q) => [q.testId, q]))
  const verdicts: readonly VerdictKind[] | null =
    args.verdicts ?? (args.quarantined === true ? null : (['flaky', 'broken'] as const))
  const search = args.search?.toLowerCase()
  const matches: TestSummary[] = []
  const filter = {
    verdicts: verdicts ?? undefined,
    suite: args.suite || undefined,
    search: search || undefined,
    testIds: args.quarantined === true ? [...quarantines.keys()] : undefined,
  }
  for (const t of await ctx.summaries(filter)) {
    if (verdicts && !verdicts.includes(t.verdict)) continue
    if (args.quarantined !== undefined && quarantines.has(t.testId) !== args.quarantined) continue
    if (args.suite && t.suite !== args.suite) continue
    if (search && !t.testId.toLowerCase().includes(search)) continue
    if (args.owner && !ctx.ownersOf(t).includes(args.owner)) continue
    matches.push(t)
  }
  const offset = args.offset ?? 0
  const limit = args.limit ?? 20
  const page = matches.slice(offset, offset + limit)
  const pending = (await ctx.pending?.()) ?? 0
  return {
    total: matches.length,
    offset,
    limit,
    ...(pending > 0 ? { pending } : {}),
    tests: page.map((t) => {
      const q = quarantines.get(t.testId)
      return {
        test_id: t.testId,
        verdict: t.verdict,
        score: round(t.score),
        pass_rate: round(t.passRate),
        flip_rate: round(t.flipRate),
        runs: t.runs,
        failures: t.failures,
        last_failure_at: t.lastFailureAt === null ? null : new Date(t.lastFailureAt).toISOString(),
        owners: ctx.ownersOf(t),
        quarantine: q ? { reason: q.reason, expires_at: q.expiresAt, issue_url: q.issueUrl, source: q.source } : null,
      }
    }),
  }
}
