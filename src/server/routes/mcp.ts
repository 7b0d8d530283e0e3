import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createMcpServer } from '../../mcp/server.js'
import type { SummaryFilter, TestSummary } from '../../mcp/context.js'
import { rowSummaries } from '../../mcp/row-summaries.js'
import { compareSummaries } from '../../mcp/summaries.js'
import { READ_REFRESH_ROWS } from '../persisted-reads.js'
import { SelectionQuery, toSelection } from '../selection.js'
import { memoize, testRefOf, type Snapshot } from '../snapshot.js'
import { HttpError } from '../http-error.js'
import { mcpActor } from '../auth.js'
import type { ServerContext } from '../context.js'

/** Where the MCP server answers, beside the API (not under `/api/v1`: MCP clients are configured with a URL). */
export const MCP_PATH = '/mcp'

/** The dashboard's address for links: the configured one, else the address this request came to. */
function serverUrlOf(ctx: ServerContext, request: FastifyRequest): string {
  return ctx.config.notifications.serverUrl ?? `${request.protocol}://${request.host}`
}

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless (a server and transport per request, answered as
 * JSON), with the REST API's tokens: reads need the read token when one is set, and the tools that write need a
 * write token, whose name is the audit trail's actor. On a multi-project server the project comes from the
 * `X-Flakewatch-Project` header or `?project=`, as for the API. GET and DELETE (SSE streams and sessions) are not
 * offered: 405.
 */
export function mcpRoutes(app: FastifyInstance, ctx: ServerContext): void {
  // The default selection's tests, from the persisted analyses (as the leaderboard reads them): no snapshot, unless
  // more rows are pending than a read re-analyses (a store just migrated, a changed configuration), whose tests an
  // agent would otherwise not see: then from the snapshot, as before the rows, until the sweep catches up.
  const summaries = async (filter: SummaryFilter = {}): Promise<readonly TestSummary[]> => {
    const w = await ctx.reads.window()
    if (w.pending > READ_REFRESH_ROWS) return snapshotSummaries(ctx)
    return rowSummaries(ctx.reads.analyses(w), w.since, filter, 'window')
  }

  app.post(MCP_PATH, async (request, reply) => {
    const actor = mcpActor(request, ctx.tokens)
    const server = createMcpServer({
      store: ctx.store,
      config: ctx.config,
      project: ctx.project,
      serverUrl: serverUrlOf(ctx, request),
      summaries,
      pending: async () => {
        const w = await ctx.reads.window()
        return w.pending > READ_REFRESH_ROWS ? 0 : w.pending
      },
      ownersOf: ctx.owners,
      quarantine: ctx.quarantine,
      actor,
      localRoot: null,
      afterWrite: () => ctx.cache.dropValues(),
      now: ctx.now,
    })
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    try {
      await server.connect(transport)
      const headers = new Headers()
      for (const [k, v] of Object.entries(request.headers)) {
        if (typeof v === 'string') headers.set(k, v)
        else if (Array.isArray(v)) headers.set(k, v.join(', '))
      }
      const res = await transport.handleRequest(
        new Request(`http://localhost${MCP_PATH}`, { method: 'POST', headers, body: JSON.stringify(request.body) }),
        { parsedBody: request.body },
      )
      void reply.code(res.status)
      res.headers.forEach((value, key) => void reply.header(key, value))
      return reply.send(Buffer.from(await res.arrayBuffer()))
    } finally {
      await server.close()
    }
  })

  app.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    handler: (_request, reply) => {
      void reply.header('allow', 'POST')
      throw new HttpError(405, {
        code: 'FW_METHOD',
        message: 'this MCP server is stateless: POST JSON-RPC messages to /mcp (no SSE stream, no session)',
      })
    },
  })
}

/** Every test's summary from the default selection's snapshot, in `analyze`'s order (memoised with it). */
async function snapshotSummaries(ctx: ServerContext): Promise<readonly TestSummary[]> {
  const snapshot = await ctx.cache.get(toSelection(SelectionQuery.parse({})))
  return memoize(snapshot, 'mcp-summaries', () => snapshotSummariesOf(snapshot))
}

/** What `list_tests` lists of a snapshot's tests, in its order: the answer the persisted rows must equal. */
export function snapshotSummariesOf(snapshot: Snapshot): TestSummary[] {
  return snapshot.tests
    .map((t): TestSummary => ({
      ...testRefOf(t),
      verdict: t.verdict,
      score: t.score,
      passRate: t.passRate,
      flipRate: t.flipRate,
      runs: t.runs,
      failures: t.failures,
      lastFailureAt: t.lastFailure,
    }))
    .sort(compareSummaries)
}
