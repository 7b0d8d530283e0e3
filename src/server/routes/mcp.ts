import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createMcpServer } from '../../mcp/server.js'
import { compareSummaries } from '../../mcp/summaries.js'
import type { TestSummary } from '../../mcp/context.js'
import { HttpError } from '../http-error.js'
import { mcpActor } from '../auth.js'
import type { ServerContext } from '../context.js'
import { memoize } from '../snapshot.js'
import { SelectionQuery, toSelection } from '../selection.js'

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
  const summaries = async (): Promise<readonly TestSummary[]> => {
    const snapshot = await ctx.cache.get(toSelection(SelectionQuery.parse({})))
    return memoize(snapshot, 'mcp-summaries', () =>
      snapshot.tests
        .map((t): TestSummary => ({
          testId: t.testId,
          suite: t.suite,
          module: t.module,
          name: t.name,
          file: t.file,
          verdict: t.verdict,
          score: t.score,
          passRate: t.passRate,
          flipRate: t.flipRate,
          runs: t.runs,
          failures: t.failures,
          lastFailureAt: t.lastFailure,
        }))
        .sort(compareSummaries),
    )
  }

  app.post(MCP_PATH, async (request, reply) => {
    const actor = mcpActor(request, ctx.tokens)
    const server = createMcpServer({
      store: ctx.store,
      config: ctx.config,
      project: ctx.project,
      serverUrl: serverUrlOf(ctx, request),
      summaries,
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
