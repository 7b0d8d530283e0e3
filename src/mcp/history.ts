import { clip } from './bounded.js'
import type { McpContext } from './context.js'

/** Results a test's history resource gives, newest last. */
export const MCP_HISTORY_ENTRIES = 200

/** The URI template of a test's history; the id is percent-encoded (it holds `::`, `/` and spaces). */
export const HISTORY_URI_TEMPLATE = 'flakewatch://tests/{test_id}/history'

export function historyUri(testId: string): string {
  return `flakewatch://tests/${encodeURIComponent(testId)}/history`
}

/** One test's newest results, oldest first, each with its run and links. Null for an unknown test. */
export async function testHistory(ctx: McpContext, testId: string) {
  const h = await ctx.store.getTestHistory(testId, { limit: MCP_HISTORY_ENTRIES })
  if (!h) return null
  return {
    test_id: testId,
    entries: h.entries.map((e) => ({
      run_id: e.run.runId,
      at: new Date(e.run.at).toISOString(),
      status: e.status,
      flaky_on_retry: e.flakyOnRetry,
      attempts: e.attempts,
      duration_ms: e.durationMs,
      branch: e.run.branch,
      revision: e.run.revision,
      runner_id: e.run.runnerId,
      error_type: e.errorType,
      message: clip(e.message, 200),
      pipeline_url: e.run.pipelineUrl,
    })),
  }
}
