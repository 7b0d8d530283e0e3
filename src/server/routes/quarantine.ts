import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { NotFoundError } from '../../errors.js'
import type { AuditResponse, QuarantineJson, QuarantineListResponse } from '../api-types.js'
import { SINGLE_TOKEN_ACTOR, writeHook } from '../auth.js'
import type { ServerContext } from '../context.js'
import { parseInput } from '../selection.js'
import { auditToJson, quarantineToJson } from '../to-json.js'

export const reason = z.string().trim().min(1, 'a reason is required').max(2000)

const QuarantineBody = z.object({
  reason,
  owner: z.string().trim().max(200).nullable().optional(),
  issue_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .nullable()
    .optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  /** Quarantine an id the store has never seen (refused by default: usually a typo or a wrong suite). */
  allow_unknown: z.boolean().optional(),
})

// No actor field: the actor is the write token's name, never what the client says (an `actor` sent by an older
// client is dropped).
const ReleaseBody = z.object({ reason })

/** A release's reason: DELETE bodies are dropped by some clients, so it may come as a query parameter too. */
export function releaseReason(request: FastifyRequest): string {
  const input = { ...(request.query as object), ...(request.body as object | undefined) }
  return parseInput(ReleaseBody, input, 'body').reason
}

const AuditQuery = z.object({
  test_id: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
})

/** Small JSON bodies only: a quarantine is a few lines of text. */
export const BODY_LIMIT = 64 * 1024

/** The write hook ran first, so a write request always has its token's name. */
export function actorOf(request: FastifyRequest): string {
  return request.flakewatchActor ?? SINGLE_TOKEN_ACTOR
}

type TestParams = { Params: { testId: string } }

/** `GET /quarantine`, `GET /quarantine/audit`, `PUT /quarantine/:testId`, `DELETE /quarantine/:testId`. */
export function quarantineRoutes(api: FastifyInstance, ctx: ServerContext): void {
  const writeAuth = { bodyLimit: BODY_LIMIT, onRequest: writeHook(ctx.tokens) }

  api.get('/quarantine', async (): Promise<QuarantineListResponse> => {
    const now = ctx.now()
    return { quarantined: (await ctx.quarantine.list()).map((q) => quarantineToJson(q, now)) }
  })

  api.get('/quarantine/audit', async (request): Promise<AuditResponse> => {
    const q = parseInput(AuditQuery, request.query, 'query')
    return { audit: (await ctx.store.listAudit({ testId: q.test_id, limit: q.limit })).map(auditToJson) }
  })

  api.put<TestParams>('/quarantine/:testId', writeAuth, async (request): Promise<QuarantineJson> => {
    const body = parseInput(QuarantineBody, request.body, 'body')
    const record = await ctx.quarantine.quarantine(request.params.testId, {
      reason: body.reason,
      owner: body.owner,
      issueUrl: body.issue_url,
      expiresAt: body.expires_at ? new Date(body.expires_at).toISOString() : body.expires_at,
      actor: actorOf(request),
      source: 'manual',
      allowUnknown: body.allow_unknown,
    })
    ctx.cache.dropValues()
    return quarantineToJson(record, ctx.now())
  })

  api.delete<TestParams>('/quarantine/:testId', writeAuth, async (request) => {
    const { testId } = request.params
    const released = await ctx.quarantine.unquarantine(testId, {
      reason: releaseReason(request),
      actor: actorOf(request),
    })
    ctx.cache.dropValues()
    if (!released) throw new NotFoundError(`${testId} is not quarantined`)
    return { released: true, test_id: testId }
  })
}
