import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { FlakewatchError } from '../errors.js'
import { VERSION } from '../version.js'
import { boundedJson } from './bounded.js'
import type { McpContext } from './context.js'
import { explain, explainInput } from './explain.js'
import { HISTORY_URI_TEMPLATE, historyUri, testHistory } from './history.js'
import { listTests, listTestsInput } from './list-tests.js'
import { quarantineInput, quarantineTest, releaseInput, releaseTest } from './quarantine.js'
import { setupPlan, setupPlanInput } from './setup-plan.js'
import { triage, triageInput } from './triage.js'

/** A tool's answer: its JSON, bounded in size; a flakewatch error becomes a tool error the agent can read. */
async function answer(run: () => unknown): Promise<CallToolResult> {
  try {
    const value = (await run()) as Record<string, unknown>
    return { content: [{ type: 'text', text: boundedJson(value) }] }
  } catch (error) {
    if (!(error instanceof FlakewatchError)) throw error
    const text = JSON.stringify({ error: { code: error.code, message: error.message } })
    return { isError: true, content: [{ type: 'text', text }] }
  }
}

const READ = { readOnlyHint: true, openWorldHint: false } as const
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const

/**
 * flakewatch as an MCP server: tools to list flaky, broken and quarantined tests, explain one, triage a report,
 * quarantine or release a test, and plan a repository's set-up, and a resource per test for its history. The
 * same server runs over stdio (`flakewatch mcp`) and Streamable HTTP (`/mcp` on `serve`); `ctx` says which store,
 * who writes, and which files it may read.
 * @example await createMcpServer(ctx).connect(new StdioServerTransport())
 */
export function createMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: 'flakewatch', version: VERSION },
    {
      instructions:
        'flakewatch knows which tests are flaky (pass and fail on the same code) or broken, from CI history. ' +
        'Before blaming a change for a red build, call triage_report on its report; explain_test tells why a test ' +
        'is flaky and what its failures look like.',
    },
  )
  server.registerTool(
    'list_tests',
    {
      title: 'List flaky, broken or quarantined tests',
      description:
        'Tests by verdict (flaky, broken, healthy, insufficient_data), quarantine, suite, code owner or id, most harmful first, a page at a time.',
      inputSchema: listTestsInput,
      annotations: READ,
    },
    (args) => answer(() => listTests(ctx, args)),
  )
  server.registerTool(
    'explain_test',
    {
      title: 'Explain one test',
      description:
        'Why a test is flaky or broken: verdict and evidence, failure modes with a sample message, hints (runner, environment, time of day, order), owners, quarantine and audit, recent runs with links.',
      inputSchema: explainInput,
      annotations: READ,
    },
    (args) => answer(() => explain(ctx, args.test_id)),
  )
  server.registerTool(
    'triage_report',
    {
      title: 'Triage a test report',
      description:
        "Classifies each failure of a report as known flaky, quarantined, broken before this change, or a new failure, as flakewatch's pull-request comment does: is this red build this change's fault?",
      inputSchema: triageInput,
      annotations: READ,
    },
    (args) => answer(() => triage(ctx, args)),
  )
  server.registerTool(
    'quarantine_test',
    {
      title: 'Quarantine a test',
      description:
        "Quarantines a test: its failures stop failing builds while it keeps running. Audited under the token's name. Needs a write token.",
      inputSchema: quarantineInput,
      annotations: WRITE,
    },
    (args) => answer(() => quarantineTest(ctx, args)),
  )
  server.registerTool(
    'release_test',
    {
      title: 'Release a test from quarantine',
      description: "Ends a test's quarantine: its failures fail builds again. Audited. Needs a write token.",
      inputSchema: releaseInput,
      annotations: WRITE,
    },
    (args) => answer(() => releaseTest(ctx, args)),
  )
  server.registerTool(
    'setup_plan',
    {
      title: 'Plan flakewatch for a repository',
      description:
        "Detects a repository's test runners and CI from its files and gives the exact reporter and CI lines to add, from flakewatch's docs.",
      inputSchema: setupPlanInput,
      annotations: READ,
    },
    (args) => answer(() => setupPlan(ctx, args)),
  )
  server.registerResource(
    'test_history',
    new ResourceTemplate(HISTORY_URI_TEMPLATE, { list: undefined }),
    {
      title: "A test's history",
      description: 'The newest results of one test, oldest first, with their runs (branch, revision, links).',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const raw = variables.test_id
      const testId = decodeURIComponent(Array.isArray(raw) ? raw.join('/') : (raw ?? ''))
      const history = await testHistory(ctx, testId)
      const text = boundedJson(history ?? { error: { code: 'FW_NOT_FOUND', message: `no test "${testId}"` } })
      return {
        contents: [
          { uri: historyUri(testId) === uri.href ? uri.href : historyUri(testId), mimeType: 'application/json', text },
        ],
      }
    },
  )
  return server
}
