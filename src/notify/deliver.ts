import type { WebhookConfig } from '../config/defaults.js'
import { retryAfterMs, retryingFetch } from '../http/retrying-fetch.js'
import type { Delivery, NotificationStore } from '../store/notifications.js'
import { VERSION } from '../version.js'
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signBody } from './payload.js'

/** A webhook with its URL and secret read from the config or the environment. */
export interface ResolvedWebhook {
  name: string
  url: string
  secret: string | null
}

export interface DeliverySettings {
  maxAttempts: number
  backoffSeconds: number
  timeoutSeconds: number
}

/** A claimed delivery is left alone by other processes this long; a crash makes it due again after it. */
export const DELIVERY_LEASE_MS = 5 * 60_000
/** The longest delay between two attempts of one delivery. */
export const MAX_BACKOFF_MS = 3_600_000
/** Attempts one pass makes at most, whatever the outbox holds: a pass always ends. */
export const MAX_ATTEMPTS_PER_PASS = 1_000
const CLAIM_BATCH = 50

/**
 * The webhooks whose URL this process knows. One whose `urlEnv` is unset here is left out with a warning: its
 * deliveries stay queued for a process that has it (a developer's `quarantine auto` must not drop CI's messages).
 */
export function resolveWebhooks(
  hooks: WebhookConfig[],
  env: NodeJS.ProcessEnv,
): { webhooks: ResolvedWebhook[]; warnings: string[] } {
  const webhooks: ResolvedWebhook[] = []
  const warnings: string[] = []
  for (const h of hooks) {
    const url = h.url ?? (h.urlEnv ? env[h.urlEnv] : undefined)
    if (!url) {
      warnings.push(`webhook ${h.name}: ${h.urlEnv} is not set; its deliveries stay queued`)
      continue
    }
    if (!/^https?:\/\//i.test(url)) {
      warnings.push(`webhook ${h.name}: ${h.urlEnv} is not an http(s) URL; its deliveries stay queued`)
      continue
    }
    const secret = h.secret ?? (h.secretEnv ? env[h.secretEnv] : undefined) ?? null
    if (h.secretEnv && !secret) {
      warnings.push(`webhook ${h.name}: ${h.secretEnv} is not set; its deliveries stay queued unsigned`)
      continue
    }
    webhooks.push({ name: h.name, url, secret })
  }
  return { webhooks, warnings }
}

export interface DeliverOptions {
  store: NotificationStore
  webhooks: ResolvedWebhook[]
  /** Names in the config; a delivery for any other name is marked failed. */
  configured: string[]
  settings: DeliverySettings
  /** How long this pass may wait for a retry that falls due (default 0: each due delivery is tried once). */
  maxWaitMs?: number
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

export interface DeliverSummary {
  attempts: number
  delivered: number
  /** Given up: out of attempts, or refused by the receiver. */
  failed: number
  /** Left queued for a later pass. */
  pending: number
  /** One line per failed attempt. */
  errors: string[]
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The delay before attempt n+1 after n failed ones: `backoff × 2^(n-1)`, capped. */
export function backoffMs(attemptsMade: number, backoffSeconds: number): number {
  return Math.min(backoffSeconds * 1000 * 2 ** Math.max(0, attemptsMade - 1), MAX_BACKOFF_MS)
}

/** One POST of one delivery, signed afresh: the timestamp is part of what is signed. */
async function post(d: Delivery, hook: ResolvedWebhook, timeoutMs: number, now: number) {
  const timestamp = String(Math.floor(now / 1000))
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `flakewatch/${VERSION}`,
    'x-flakewatch-event': d.event,
    'x-flakewatch-delivery': d.eventId,
    [TIMESTAMP_HEADER]: timestamp,
  }
  if (hook.secret) headers[SIGNATURE_HEADER] = signBody(hook.secret, timestamp, d.body)
  return retryingFetch(hook.url, { method: 'POST', headers, body: d.body }, { retries: 0, timeoutMs })
}

/**
 * Sends the deliveries that are due, records every attempt in the delivery log, and schedules retries with
 * exponential backoff (or the receiver's `Retry-After`). A 2xx delivers; a 4xx other than 408, 425 and 429 is a
 * refusal and is not retried; anything else is retried until `maxAttempts`. A retry that falls due within
 * `maxWaitMs` is made in this pass; a later one is left for a later pass. Never throws for a receiver's failure.
 */
export async function deliverDue(opts: DeliverOptions): Promise<DeliverSummary> {
  const now = opts.now ?? Date.now
  const sleep = opts.sleep ?? defaultSleep
  const hooks = new Map(opts.webhooks.map((w) => [w.name, w]))
  const summary: DeliverSummary = { attempts: 0, delivered: 0, failed: 0, pending: 0, errors: [] }
  // Only what was due when the pass began: a retry this pass scheduled is never claimed again by it.
  const cutoff = now()
  // Waits stay well inside the lease, so that no other process takes a delivery this pass still holds.
  const deadline = cutoff + Math.min(opts.maxWaitMs ?? 0, DELIVERY_LEASE_MS / 2)
  // Deliveries for a webhook taken out of the config can never be sent.
  const orphans = { names: opts.configured, except: true }
  for (let batch; (batch = await opts.store.claimDue(cutoff, DELIVERY_LEASE_MS, CLAIM_BATCH, orphans)).length;) {
    for (const d of batch) {
      const at = now()
      await opts.store.recordAttempt(d.id, {
        status: 'failed',
        at: new Date(at).toISOString(),
        httpStatus: null,
        error: `webhook "${d.webhook}" is no longer configured`,
        nextAttemptAt: at,
      })
      summary.failed++
    }
  }
  // Only webhooks whose URL this process knows: the others' deliveries wait, unclaimed, for a process that does.
  const sendable = { names: opts.webhooks.map((w) => w.name) }
  for (;;) {
    const room = MAX_ATTEMPTS_PER_PASS - summary.attempts
    if (room <= 0 || sendable.names.length === 0) break
    const batch = await opts.store.claimDue(cutoff, DELIVERY_LEASE_MS, Math.min(CLAIM_BATCH, room), sendable)
    if (batch.length === 0) break
    for (const d of batch) {
      const hook = hooks.get(d.webhook)!
      for (let made = d.attempts; ;) {
        const r = await post(d, hook, opts.settings.timeoutSeconds * 1000, now())
        const done = now()
        const iso = new Date(done).toISOString()
        made++
        summary.attempts++
        if (r.ok) {
          await r.res.body?.cancel().catch(() => {})
          await opts.store.recordAttempt(d.id, {
            status: 'delivered',
            at: iso,
            httpStatus: r.res.status,
            error: null,
            nextAttemptAt: done,
          })
          summary.delivered++
          break
        }
        const refused = r.status !== undefined && r.status < 500 && ![408, 425, 429].includes(r.status)
        const after = retryAfterMs(r.res?.headers.get('retry-after') ?? null, done)
        const wait = after !== null ? Math.min(after, MAX_BACKOFF_MS) : backoffMs(made, opts.settings.backoffSeconds)
        // At least a millisecond on: past the pass's cutoff, so that this pass does not claim it again.
        const next = done + Math.max(1, wait)
        const giveUp = refused || made >= opts.settings.maxAttempts
        await r.res?.body?.cancel().catch(() => {})
        summary.errors.push(`webhook ${d.webhook}: ${d.event} ${d.testId}: ${r.error}${giveUp ? ' (giving up)' : ''}`)
        const inline = !giveUp && next <= deadline && summary.attempts < MAX_ATTEMPTS_PER_PASS
        await opts.store.recordAttempt(d.id, {
          status: giveUp ? 'failed' : 'pending',
          at: iso,
          httpStatus: r.status ?? null,
          error: r.error,
          // A retry this pass makes itself keeps the lease, so another process does not send it meanwhile.
          nextAttemptAt: inline ? done + DELIVERY_LEASE_MS : next,
        })
        if (giveUp) summary.failed++
        else if (!inline) summary.pending++
        if (!inline) break
        await sleep(Math.max(0, next - now()))
      }
    }
  }
  return summary
}
