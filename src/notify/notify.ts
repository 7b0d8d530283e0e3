import type { TestAnalysis } from '../analysis/types.js'
import type { WebhookConfig } from '../config/defaults.js'
import type { NewDelivery } from '../store/notifications.js'
import type { Store } from '../store/store.js'
import { deliverDue, resolveWebhooks, type DeliverSummary } from './deliver.js'
import { currentTests, detectChanges, type StateChange } from './detect.js'
import { detectRuleChanges, ruleSubject, type RuleChange } from './detect-rules.js'
import { renderBody, renderRuleBody, type ChangeContext } from './payload.js'

/** Changes announced by one look; past it, the rest are recorded silently and counted in a warning. */
export const MAX_EVENTS_PER_LOOK = 500

export interface NotificationSettings {
  webhooks: WebhookConfig[]
  expiringWithinDays: number
  serverUrl: string | null
  maxAttempts: number
  backoffSeconds: number
  timeoutSeconds: number
}

export interface DetectAndEnqueueOptions {
  store: Store
  settings: NotificationSettings
  /** The project key on a multi-project server, carried by every payload; null (the default) on a single-project one. */
  project?: string | null
  /** The whole store's analysis (every suite, every branch), as `analyze` computes it. */
  analyses: TestAnalysis[]
  /** Wall clock: quarantine expiry is real time, whatever the analysis's as-of. */
  now?: number
  ownersOf?: (test: TestAnalysis['test']) => string[]
  dryRun?: boolean
}

export interface DetectOutcome {
  baseline: boolean
  changes: StateChange[]
  /** Quarantine rules created, replaced or deleted since the last look. */
  ruleChanges: RuleChange[]
  /** Deliveries put in the outbox (a change seen by another process already is not queued again). */
  enqueued: number
  /** Changes recorded but not announced, over {@link MAX_EVENTS_PER_LOOK}. */
  unannounced: number
}

function wants(hook: WebhookConfig, change: StateChange, suite: string | null): boolean {
  if (hook.events && !hook.events.includes(change.event)) return false
  if (hook.suites && (suite === null || !hook.suites.includes(suite))) return false
  return true
}

/** A rule belongs to no suite (it may forgive failures in any): `suites` does not filter rule events. */
function wantsRule(hook: WebhookConfig, change: RuleChange): boolean {
  return !hook.events || hook.events.includes(change.event)
}

/**
 * Looks for state changes (became flaky or broken, fixed, quarantined, released, quarantine about to expire)
 * since the last look, and puts one delivery per change and interested webhook in the outbox, in the same
 * transaction as the new states. This is the one place changes are detected; `quarantine auto`, `notify` and
 * `serve` all call it with the whole store's analysis.
 */
export async function detectAndEnqueue(opts: DetectAndEnqueueOptions): Promise<DetectOutcome> {
  const { store, settings } = opts
  const now = opts.now ?? Date.now()
  const ns = store.notifications()
  const previous = new Map((await ns.listStates()).map((s) => [s.testId, s]))
  const quarantines = new Map((await store.listQuarantines()).map((q) => [q.testId, q]))
  const byId = new Map(opts.analyses.map((a) => [a.testId, a]))
  const current = currentTests(opts.analyses, quarantines, previous)
  const result = detectChanges(previous, current, { now, expiringWithinMs: settings.expiringWithinDays * 86_400_000 })
  const announced = result.changes.slice(0, MAX_EVENTS_PER_LOOK)
  const at = new Date(now).toISOString()
  const deliveries: NewDelivery[] = []
  /** One message for one webhook, due now; `subject` is the test id, or `rule:<id>` for a rule. */
  const enqueue = (change: StateChange | RuleChange, webhook: string, subject: string, body: string) =>
    deliveries.push({
      eventId: change.id,
      webhook,
      event: change.event,
      testId: subject,
      body,
      createdAt: at,
      nextAttemptAt: now,
    })
  for (const change of announced) {
    const analysis = byId.get(change.testId) ?? null
    const test = analysis?.test ?? (await store.getTest(change.testId))
    const hooks = settings.webhooks.filter((h) => wants(h, change, test?.suite ?? null))
    if (hooks.length === 0) continue
    const releaseReason =
      change.event === 'released'
        ? ((await store.listAudit({ testId: change.testId, limit: 1 }))[0]?.reason ?? null)
        : null
    const ctx: ChangeContext = {
      change,
      at,
      test,
      owners: test && opts.ownersOf ? opts.ownersOf(test) : [],
      analysis,
      quarantine: quarantines.get(change.testId) ?? null,
      releaseReason,
      serverUrl: settings.serverUrl,
      project: opts.project ?? null,
    }
    for (const h of hooks) enqueue(change, h.name, change.testId, renderBody(h.format ?? 'json', ctx))
  }
  // Rules follow the tests' first look: a store that was never looked at announces none of its rules either.
  const previousRules = new Map((await ns.listRuleStates()).map((r) => [r.ruleId, r]))
  const rules = detectRuleChanges(previousRules, await store.listQuarantineRules(), {
    now,
    baseline: previous.size === 0 && previousRules.size === 0,
  })
  for (const change of rules.changes) {
    const hooks = settings.webhooks.filter((h) => wantsRule(h, change))
    if (hooks.length === 0) continue
    // The change's own audit line says who and why; before a deletion, the line before it holds the rule.
    const trail = await store.listRuleAudit({ ruleId: change.ruleId, limit: 2 })
    const ctx = {
      change,
      at,
      rule: change.rule ?? trail.find((a) => a.rule !== null)?.rule ?? null,
      audit: trail[0] ?? null,
      serverUrl: settings.serverUrl,
      project: opts.project ?? null,
    }
    for (const h of hooks) enqueue(change, h.name, ruleSubject(change.ruleId), renderRuleBody(h.format ?? 'json', ctx))
  }
  const enqueued = opts.dryRun ? deliveries.length : await ns.recordChanges(result.states, deliveries, rules.states)
  return {
    baseline: result.baseline,
    changes: result.changes,
    ruleChanges: rules.changes,
    enqueued,
    unannounced: result.changes.length - announced.length,
  }
}

export interface NotifyOptions extends DetectAndEnqueueOptions {
  env: NodeJS.ProcessEnv
  /** How long delivery may wait for retries falling due (default 0). */
  maxWaitMs?: number
}

export interface NotifyOutcome extends DetectOutcome {
  delivery: DeliverSummary | null
  warnings: string[]
}

/** Detects, enqueues, then sends what is due (this look's messages and earlier ones awaiting a retry). */
export async function notifyStateChanges(opts: NotifyOptions): Promise<NotifyOutcome> {
  const detected = await detectAndEnqueue(opts)
  const warnings: string[] = []
  if (detected.unannounced > 0) {
    warnings.push(
      `${detected.unannounced} state change(s) over the limit of ${MAX_EVENTS_PER_LOOK} were recorded without a notification`,
    )
  }
  if (opts.dryRun) return { ...detected, delivery: null, warnings }
  const resolved = resolveWebhooks(opts.settings.webhooks, opts.env)
  warnings.push(...resolved.warnings)
  const delivery = await deliverDue({
    store: opts.store.notifications(),
    webhooks: resolved.webhooks,
    configured: opts.settings.webhooks.map((w) => w.name),
    settings: opts.settings,
    maxWaitMs: opts.maxWaitMs,
  })
  return { ...detected, delivery, warnings }
}
