import type { FastifyInstance } from 'fastify'
import { parsePolicyCandidate } from '../../config/policy-candidate.js'
import { policyPreviewToJson, policyToJson, previewPolicy } from '../../pipeline/policy-preview.js'
import type { PolicyPreviewResponse, PolicyResponse } from '../api-types.js'
import { requireRead } from '../auth.js'
import type { ServerContext } from '../context.js'
import { HttpError } from '../http-error.js'

/** A candidate policy is a few dozen settings. */
const PREVIEW_BODY_LIMIT = 64 * 1024

/**
 * `GET /policy`: the policy in force. `POST /policy/preview`: what a candidate policy (the config's `analysis`,
 * `quarantine` and `successRate` keys) would change, and why; read-only, so it needs only read access. A preview
 * analyses the whole store twice: one runs at a time, and another asked for meanwhile is told to come back (503).
 */
export function policyRoutes(api: FastifyInstance, ctx: ServerContext): void {
  api.get('/policy', (): PolicyResponse => policyToJson(ctx.config))

  let running = false
  api.post(
    '/policy/preview',
    { bodyLimit: PREVIEW_BODY_LIMIT },
    async (request, reply): Promise<PolicyPreviewResponse> => {
      // A POST that only reads: the read token, as for every GET (the API's hook checks reads on GET alone).
      requireRead(request, ctx.tokens)
      const candidate = parsePolicyCandidate(request.body ?? {}, 'body')
      if (running) {
        void reply.header('retry-after', '5')
        throw new HttpError(503, {
          code: 'FW_BUSY',
          message: 'a policy preview is running: try again in a few seconds',
        })
      }
      running = true
      try {
        return policyPreviewToJson(await previewPolicy(ctx.scanStore, ctx.config, candidate, { now: ctx.now() }))
      } finally {
        running = false
      }
    },
  )
}
