import type { FastifyInstance } from 'fastify'
import type { HealthResponse } from '../api-types.js'
import type { ServerContext } from '../context.js'
import { HttpError } from '../http-error.js'

/** `GET /healthz`: open, tiny, and it really touches the store, so that a load balancer sees a dead database. */
export function healthRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get('/healthz', async (request, reply): Promise<HealthResponse> => {
    try {
      await ctx.store.listRuns({ limit: 1 })
    } catch (error) {
      request.log.error({ err: error }, 'health check failed')
      throw new HttpError(503, { code: 'FW_STORE', message: 'the store is not answering' })
    }
    void reply.header('cache-control', 'no-store')
    const notifier = ctx.notifier?.()
    // A replica that cannot be reached is reported, never a failed check: reads go to the primary meanwhile.
    const replica = ctx.replica ? await ctx.replica.health() : undefined
    return {
      status: 'ok',
      store: ctx.store.kind,
      uploads: ctx.uploads.stats(),
      ...(replica && { replica }),
      ...(notifier && {
        notifications: { runs_in: app.flakewatchAnalysis, looks: notifier.looks, last_look_at: notifier.lastLookAt },
      }),
    }
  })
}
