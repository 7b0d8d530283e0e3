import { z } from 'zod'
import { AuthError } from '../errors.js'
import { clip } from './bounded.js'
import type { McpContext } from './context.js'

const DAY = 86_400_000

export const quarantineInput = {
  test_id: z.string().min(1).max(2000).describe('the test id, suite::module::name'),
  reason: z.string().trim().min(1).max(2000).describe('why: kept in the audit log'),
  expires_in_days: z
    .number()
    .int()
    .min(1)
    .max(365)
    .optional()
    .describe("days until the quarantine ends by itself (default: the config's quarantine.expiryDays)"),
  owner: z.string().trim().max(200).optional().describe("who will fix it (default: the test's CODEOWNERS owners)"),
  issue_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional()
    .describe('the tracking issue'),
}

export const releaseInput = {
  test_id: z.string().min(1).max(2000).describe('the test id, suite::module::name'),
  reason: z.string().trim().min(1).max(2000).describe('why: kept in the audit log'),
}

/** Writes need a write token (HTTP) or a local store (stdio): a read-only client is told so, nothing changes. */
function writer(ctx: McpContext): string {
  if (ctx.actor === null) {
    throw new AuthError('this needs a write token: connect with Authorization: Bearer <a write token>')
  }
  return ctx.actor
}

/** Quarantines a test, audited as the write token's name (or the local user over stdio). */
export async function quarantineTest(ctx: McpContext, args: z.infer<z.ZodObject<typeof quarantineInput>>) {
  const actor = writer(ctx)
  const record = await ctx.quarantine.quarantine(args.test_id, {
    reason: args.reason,
    owner: args.owner,
    issueUrl: args.issue_url,
    expiresAt:
      args.expires_in_days === undefined ? undefined : new Date(ctx.now() + args.expires_in_days * DAY).toISOString(),
    actor,
    source: 'manual',
  })
  ctx.afterWrite?.()
  return {
    quarantined: true,
    test_id: record.testId,
    reason: clip(record.reason),
    owner: record.owner,
    issue_url: record.issueUrl,
    expires_at: record.expiresAt,
    actor,
  }
}

/** Releases a test from quarantine, audited like `quarantineTest`. */
export async function releaseTest(ctx: McpContext, args: z.infer<z.ZodObject<typeof releaseInput>>) {
  const actor = writer(ctx)
  const released = await ctx.quarantine.unquarantine(args.test_id, { reason: args.reason, actor })
  ctx.afterWrite?.()
  return released
    ? { released: true, test_id: args.test_id, actor }
    : { released: false, test_id: args.test_id, error: `${args.test_id} is not quarantined` }
}
