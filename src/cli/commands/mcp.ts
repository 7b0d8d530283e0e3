import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { analysisOptions } from '../../config/load.js'
import { createMcpServer } from '../../mcp/server.js'
import { localSummaries } from '../../mcp/row-summaries.js'
import { cachedSummaries } from '../../mcp/summaries.js'
import { resolveAnalysisConfig } from '../../analysis/resolve-analysis-config.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { forEachAnalysis } from '../../pipeline/analyze-store.js'
import { createQuarantineManager } from '../../quarantine/manager.js'
import type { Io } from '../output.js'
import { resolveActor } from './quarantine.js'
import { withStore } from '../with-store.js'
import type { StoreFlags } from '../project-option.js'

export interface McpCommandOptions extends StoreFlags {
  /** Refuse every tool that writes (quarantine, release). */
  readOnly?: boolean
  /** Who writes are audited as (default: FLAKEWATCH_ACTOR, the CI user, else $USER). */
  actor?: string
}

/**
 * `flakewatch mcp`: the MCP server over stdio, on the local store, until the client closes stdin. Nothing but
 * JSON-RPC goes to stdout; warnings go to stderr.
 */
export async function mcp(
  opts: McpCommandOptions,
  io: Io,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<void> {
  await withStore(
    opts,
    io,
    async (store, config, project) => {
      const cfg = resolveAnalysisConfig(analysisOptions(config))
      const scanned = cachedSummaries(store, async (onTest) => {
        await forEachAnalysis(store, { config: analysisOptions(config) }, (_, a) => onTest(a))
      })
      const server = createMcpServer({
        store,
        config,
        project,
        serverUrl: config.notifications.serverUrl,
        summaries: (filter = {}) => localSummaries(store, cfg, filter, scanned),
        ownersOf: ownerLookupFromConfig(config, process.cwd(), (m) => io.stderr.write(`warning: ${m}\n`)),
        quarantine: createQuarantineManager({
          store,
          policy: config.quarantine,
          defaultOwner: config.quarantine.owner,
        }),
        actor: opts.readOnly ? null : resolveActor(opts.actor, io.env),
        localRoot: process.cwd(),
        now: Date.now,
      })
      const closed = new Promise<void>((resolve) => {
        stdin.once('end', resolve)
        stdin.once('close', resolve)
      })
      const transport = new StdioServerTransport(stdin as never, io.stdout as never)
      await server.connect(transport)
      io.stderr.write(`flakewatch mcp: serving ${store.location} over stdio\n`)
      await closed
      await server.close()
    },
    'existing',
  )
}
