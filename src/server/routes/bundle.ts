import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { analysisOptions } from '../../config/load.js'
import { resolveBundleExport } from '../../export/write-bundle.js'
import { bundleStream } from '../bundle-stream.js'
import type { ServerContext } from '../context.js'
import { parseInput } from '../selection.js'

const BundleQuery = z.object({
  days: z.coerce.number().int().min(1).max(3650).optional(),
  suite: z.string().trim().min(1).optional(),
  classification: z.enum(['thresholds', 'verdict']).optional(),
  /** Comma-separated env facet names that make a context. */
  context_keys: z.string().trim().min(1).max(1000).optional(),
})

/**
 * `GET /bundle`: the store as a GitLabViz flake-history bundle, streamed as it is written (in a worker thread, see
 * `bundleStream`) so that memory stays flat however large the store and other requests never wait for it. Options
 * are checked before the first byte, so bad ones are a clean 400.
 */
export function bundleRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/bundle', async (request, reply) => {
    const q = parseInput(BundleQuery, request.query, 'query')
    const opts = {
      days: q.days,
      suite: q.suite,
      classification: q.classification,
      contextKeys: q.context_keys?.split(',').map((k) => k.trim()),
      analysis: analysisOptions(ctx.config),
      now: ctx.now(),
    }
    resolveBundleExport(opts)
    const stamp = new Date(opts.now).toISOString().slice(0, 10)
    return reply
      .type('application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="flake-history-${stamp}.json"`)
      .send(
        bundleStream({
          scanStore: ctx.scanStore,
          db: ctx.db,
          options: opts,
          owners: ctx.owners,
          ownersConfig: { config: { codeowners: ctx.config.codeowners, file: ctx.config.file }, cwd: process.cwd() },
        }),
      )
  })
}
