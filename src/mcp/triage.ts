import { createHash } from 'node:crypto'
import { isAbsolute, resolve } from 'node:path'
import { z } from 'zod'
import type { ClassifiedFailure } from '../comment/classify.js'
import { InputError } from '../errors.js'
import { FORMATS } from '../ingest/formats.js'
import { parseReport } from '../ingest/parse-report.js'
import { resolveRepoRoot } from '../ingest/repo-root.js'
import { sourceFromBuffer, sourceFromFile } from '../ingest/source.js'
import { testUrl } from '../notify/payload.js'
import { buildReportBatch } from '../pipeline/build-batch.js'
import { triageFailures } from '../pipeline/triage-failures.js'
import type { Result } from '../model.js'
import type { RunScope } from '../quarantine/gate.js'
import { clip } from './bounded.js'
import type { McpContext } from './context.js'

/** The largest report `triage_report` takes as text: a report an agent can hand over. */
export const MCP_MAX_REPORT_CHARS = 10_000_000
/** Failures one triage lists at most (every failure is counted). */
export const MCP_TRIAGE_MAX_LISTED = 50

export const triageInput = {
  path: z
    .string()
    .max(4096)
    .optional()
    .describe(
      'the report file (stdio only), relative to the working directory: JUnit XML, CTRF, Playwright or Jest JSON, TRX',
    ),
  content: z
    .string()
    .max(MCP_MAX_REPORT_CHARS)
    .optional()
    .describe('the report itself, when the server cannot read the file'),
  format: z.enum(FORMATS).optional().describe('the report format (default: detected from the content)'),
  suite: z
    .string()
    .max(200)
    .optional()
    .describe("the suite the report belongs to (default: the config's suite), the first part of every test id"),
  branch: z.string().max(500).optional().describe('the branch the report ran on, for rules that match branches'),
}

export type TriageArgs = z.infer<z.ZodObject<typeof triageInput>>

/** What each kind means to someone deciding whether a red build is theirs. */
const KIND_WORDS: Record<ClassifiedFailure['kind'], string> = {
  known_flaky: 'known flakiness: quarantined, or flaky by its history; not caused by this change',
  broken: 'broken before this change: it already fails on the default branch',
  new_failure: 'a new failure: no history explains it, look at this change',
  passed_on_retry: 'passed on retry: flaky in this run',
}

/**
 * A report's failures, each classified as the pull-request comment classifies them (known flaky, quarantined,
 * broken before this change, new failure, passed on retry), with counts of every kind.
 */
export async function triage(ctx: McpContext, args: TriageArgs) {
  if ((args.path === undefined) === (args.content === undefined)) {
    throw new InputError('give exactly one of path and content')
  }
  let source
  if (args.path !== undefined) {
    if (ctx.localRoot === null) {
      throw new InputError('this server reads no files for a client: send the report as content')
    }
    const file = isAbsolute(args.path) ? args.path : resolve(ctx.localRoot, args.path)
    source = sourceFromFile(file, args.path)
  } else {
    source = sourceFromBuffer('report', Buffer.from(args.content!, 'utf8'))
  }
  const parsed = await parseReport(source, { format: args.format })
  const hash = createHash('sha256')
    .update(args.path ?? args.content!)
    .digest('hex')
  const batch = buildReportBatch({
    parsed,
    file: source.name,
    contentHash: hash,
    context: { suite: args.suite ?? ctx.config.suite, branch: args.branch ?? null },
    // Test paths made relative as `ingest` makes them, so that ids match the stored ones.
    root: ctx.localRoot === null ? null : resolveRepoRoot(undefined, ctx.config.root, ctx.localRoot),
  })
  const results: Result[] = []
  const scopes = new Map<Result, RunScope>()
  for (const run of batch.runs) {
    for (const r of run.results) {
      results.push(r)
      scopes.set(r, { branch: run.run.branch, env: run.run.env })
    }
  }
  const failures = await triageFailures(ctx.store, results, { config: ctx.config, scopes, branch: args.branch })
  const counts = { known_flaky: 0, quarantined: 0, broken: 0, new_failure: 0, passed_on_retry: 0 }
  for (const f of failures) {
    counts[f.kind]++
    if (f.quarantine) counts.quarantined++
  }
  // New failures first: they are the ones the change may have caused.
  const order: ClassifiedFailure['kind'][] = ['new_failure', 'broken', 'known_flaky', 'passed_on_retry']
  const listed = [...failures].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))
  return {
    format: parsed.format,
    tests: results.length,
    failures: failures.length,
    counts,
    verdict:
      counts.new_failure > 0
        ? 'new failures: this change may have caused them'
        : failures.length > 0
          ? 'every failure is known flakiness or was broken before this change'
          : 'no failures',
    listed: listed.slice(0, MCP_TRIAGE_MAX_LISTED).map((f) => ({
      test_id: f.testId,
      kind: f.kind,
      means: KIND_WORDS[f.kind],
      quarantined: f.quarantine !== null,
      quarantine: f.quarantine && {
        reason: clip(f.quarantine.reason),
        owner: f.quarantine.owner,
        expires_at: f.quarantine.expiresAt,
        rule: f.quarantine.rule,
      },
      broken_since: f.brokenSince,
      evidence: f.evidence.slice(0, 5).map((e) => ({ kind: e.kind, detail: clip(e.detail, 300) })),
      message: clip(f.message, 500),
      dashboard_url: testUrl(ctx.serverUrl, f.testId, ctx.project),
    })),
  }
}
