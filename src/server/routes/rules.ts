import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFoundError } from '../../errors.js'
import { isRuleActive, ruleFieldsJson, ruleMatchFromJson, RuleMatchSchema } from '../../quarantine/rules.js'
import type { QuarantineRule, RuleAuditEntry } from '../../store/store.js'
import type { RuleAuditResponse, RuleJson, RuleListResponse } from '../api-types.js'
import { writeHook } from '../auth.js'
import type { ServerContext } from '../context.js'
import { parseInput } from '../selection.js'
import { actorOf, BODY_LIMIT, reason, releaseReason } from './quarantine.js'

// Patterns, lengths and regex safety are checked by the same schema as the CLI and the quarantine file; the
// manager then checks the expiry against its clock and the rule count against MAX_RULES.
// As for single quarantines, there is no actor field: the actor is the write token's name.
const RuleBody = z
  .object({
    match: RuleMatchSchema,
    reason,
    owner: z.string().trim().max(200).nullable().optional(),
    issue_url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .nullable()
      .optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .strict()

const AuditQuery = z.object({
  rule_id: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
})

export function ruleToJson(r: QuarantineRule, now: number): RuleJson {
  return { ...ruleFieldsJson(r), active: isRuleActive(r, now) }
}

function ruleAuditToJson(a: RuleAuditEntry, now: number): RuleAuditResponse['audit'][number] {
  return {
    id: a.id,
    rule_id: a.ruleId,
    action: a.action,
    actor: a.actor,
    at: a.at,
    reason: a.reason,
    rule: a.rule === null ? null : ruleToJson(a.rule, now),
  }
}

type RuleParams = { Params: { ruleId: string } }

/**
 * Quarantine rules over HTTP, with the CLI's checks and audit trail: `GET /rules`, `GET /rules/audit`,
 * `PUT /rules/:ruleId` (create or replace) and `DELETE /rules/:ruleId`.
 */
export function ruleRoutes(api: FastifyInstance, ctx: ServerContext): void {
  const writeAuth = { bodyLimit: BODY_LIMIT, onRequest: writeHook(ctx.tokens) }

  api.get('/rules', async (): Promise<RuleListResponse> => {
    const now = ctx.now()
    return { rules: (await ctx.quarantine.listRules()).map((r) => ruleToJson(r, now)) }
  })

  api.get('/rules/audit', async (request): Promise<RuleAuditResponse> => {
    const q = parseInput(AuditQuery, request.query, 'query')
    const now = ctx.now()
    const audit = await ctx.store.listRuleAudit({ ruleId: q.rule_id, limit: q.limit })
    return { audit: audit.map((a) => ruleAuditToJson(a, now)) }
  })

  api.put<RuleParams>('/rules/:ruleId', writeAuth, async (request): Promise<RuleJson> => {
    const body = parseInput(RuleBody, request.body, 'body')
    const rule = await ctx.quarantine.putRule(request.params.ruleId, {
      match: ruleMatchFromJson(body.match),
      reason: body.reason,
      owner: body.owner,
      issueUrl: body.issue_url,
      expiresAt: body.expires_at ? new Date(body.expires_at).toISOString() : body.expires_at,
      actor: actorOf(request),
    })
    return ruleToJson(rule, ctx.now())
  })

  api.delete<RuleParams>('/rules/:ruleId', writeAuth, async (request) => {
    const { ruleId } = request.params
    const removed = await ctx.quarantine.removeRule(ruleId, { reason: releaseReason(request), actor: actorOf(request) })
    if (!removed) throw new NotFoundError(`no quarantine rule ${ruleId}`)
    return { removed: true, rule_id: ruleId }
  })
}
