import { z } from 'zod'
import { hintToJson } from '../analysis/to-analysis-json.js'
import { testUrl } from '../notify/payload.js'
import { explainTest, similarTests } from '../pipeline/explain-test.js'
import { clip } from './bounded.js'
import type { McpContext } from './context.js'

/** Recent runs an explanation lists, newest first. */
export const MCP_RECENT_RUNS = 20
/** Failure modes an explanation lists, most frequent first, each with one sample message. */
export const MCP_FAILURE_MODES = 5
/** Audit lines an explanation lists, newest first. */
export const MCP_AUDIT_LINES = 10

export const explainInput = {
  test_id: z.string().min(1).max(2000).describe('the test id, suite::module::name (list_tests gives them)'),
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * One test explained for an agent: verdict and its evidence, failure modes with a sample message, hints, owners,
 * quarantine and its audit, and the recent runs with links. Null with suggestions for an unknown id.
 */
export async function explain(ctx: McpContext, testId: string) {
  const e = await explainTest(ctx.store, ctx.config, testId, { ownersOf: ctx.ownersOf })
  if (!e) return { found: false as const, test_id: testId, did_you_mean: await similarTests(ctx.store, testId) }
  const a = e.analysis
  const entries = e.history.entries
  const recent = entries.slice(-MCP_RECENT_RUNS).reverse()
  return {
    found: true as const,
    test_id: a.testId,
    suite: e.history.test.suite,
    file: e.history.test.file,
    verdict: a.verdict,
    reason: a.reason,
    evidence: a.evidence.slice(0, 10).map((x) => ({ kind: x.kind, detail: clip(x.detail) })),
    runs: a.runs,
    failures: a.failures,
    pass_rate: a.passRate,
    flip_rate: a.flipRate,
    score: a.score,
    confidence: a.confidence,
    recommendation: a.recommendation,
    time_lost_ms: a.timeLostMs,
    failure_modes: a.failureModes.slice(0, MCP_FAILURE_MODES).map((m) => ({
      count: m.count,
      error_type: m.errorType,
      first_seen: iso(m.firstSeen),
      last_seen: iso(m.lastSeen),
      last_run_id: m.lastRunId,
      sample_message: clip(m.example ?? m.signature),
    })),
    hints: a.hints.slice(0, 10).map((h) => ({ ...hintToJson(h), message: clip(h.message) })),
    owners: e.owners,
    quarantine: e.quarantine && {
      reason: e.quarantine.reason,
      owner: e.quarantine.owner,
      issue_url: e.quarantine.issueUrl,
      created_at: e.quarantine.createdAt,
      created_by: e.quarantine.createdBy,
      expires_at: e.quarantine.expiresAt,
      source: e.quarantine.source,
    },
    audit: e.audit.slice(0, MCP_AUDIT_LINES).map((x) => ({
      at: x.at,
      action: x.action,
      actor: x.actor,
      reason: clip(x.reason),
    })),
    recent_runs: recent.map((r) => ({
      run_id: r.run.runId,
      at: iso(r.run.at),
      status: r.status,
      flaky_on_retry: r.flakyOnRetry,
      attempts: r.attempts,
      branch: r.run.branch,
      revision: r.run.revision,
      message: clip(r.message, 300),
      pipeline_url: r.run.pipelineUrl,
      artifacts_url: r.run.artifactsUrl,
    })),
    dashboard_url: testUrl(ctx.serverUrl, a.testId, ctx.project),
  }
}
