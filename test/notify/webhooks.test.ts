import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { WebhookConfig } from '../../src/config/defaults.js'
import { DELIVERY_LEASE_MS, deliverDue, resolveWebhooks } from '../../src/notify/deliver.js'
import { detectAndEnqueue, notifyStateChanges, type NotificationSettings } from '../../src/notify/notify.js'
import { analyzeStore } from '../../src/pipeline/analyze-store.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { testdir } from '../helpers/run-cli.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { quarantineTest, seedAlternating, startReceiver } from './helpers.js'

const SECRET = 'a-shared-secret-of-some-length'
const pg = await resolveTestPg()
const pgSchemas = pg.url ? schemas(pg.url) : null
afterAll(() => pgSchemas?.dropAll())

const backends: [string, () => Promise<Store>][] = [
  ['sqlite', () => openSqliteStore(join(testdir({}, 'notify-'), 'fw.db'))],
]
if (pg.url) backends.push(['postgres', () => openPostgresStore(pgSchemas!.fresh())])
else if (pg.skip) console.warn(`PostgreSQL webhook tests skipped: ${pg.skip}`)

function settings(webhooks: WebhookConfig[], extra: Partial<NotificationSettings> = {}): NotificationSettings {
  return {
    webhooks,
    expiringWithinDays: 3,
    serverUrl: 'https://flakewatch.example.com',
    maxAttempts: 4,
    backoffSeconds: 0.02,
    timeoutSeconds: 5,
    ...extra,
  }
}

describe.each(backends)('webhooks on %s', (_name, open) => {
  let store: Store
  let receiver: Awaited<ReturnType<typeof startReceiver>>

  beforeEach(async () => {
    store = await open()
    await seedAlternating(store)
    receiver = await startReceiver(SECRET)
  })
  afterEach(async () => {
    await receiver.close()
    await store.close()
  })

  /** The first look (a baseline), then `a` is quarantined and a second look announces it. */
  async function quarantineAndLook(s: NotificationSettings, maxWaitMs = 0) {
    const analyses = await analyzeStore(store)
    expect(analyses.find((a) => a.testId === 'unit::mod::a')?.verdict).toBe('flaky')
    const first = await notifyStateChanges({ store, settings: s, analyses, env: {} })
    expect(first.baseline).toBe(true)
    expect(receiver.received).toHaveLength(0)
    await quarantineTest(store, 'unit::mod::a', 'fails every other run <script>', {
      owner: '@team-cart',
      source: 'auto',
    })
    return notifyStateChanges({ store, settings: s, analyses, env: {}, maxWaitMs })
  }

  it('posts a signed JSON payload that the receiver verifies, and logs the delivery', async () => {
    const out = await quarantineAndLook(settings([{ name: 'team', url: receiver.url, secret: SECRET }]))
    expect(out.changes.map((c) => [c.event, c.testId])).toEqual([['quarantined', 'unit::mod::a']])
    expect(out.delivery).toMatchObject({ attempts: 1, delivered: 1, failed: 0, pending: 0 })
    expect(receiver.received).toHaveLength(1)
    const got = receiver.received[0]!
    expect(got.signatureValid).toBe(true)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['x-flakewatch-event']).toBe('quarantined')
    expect(got.headers['x-flakewatch-delivery']).toBe(out.changes[0]!.id)
    const body = JSON.parse(got.body)
    expect(body).toMatchObject({
      version: 1,
      id: out.changes[0]!.id,
      event: 'quarantined',
      test: { id: 'unit::mod::a', suite: 'unit', module: 'mod', name: 'a' },
      previous: { verdict: 'flaky', quarantined: false },
      current: { verdict: 'flaky', quarantined: true },
      analysis: { verdict: 'flaky' },
      quarantine: { reason: 'fails every other run <script>', owner: '@team-cart', source: 'auto' },
      url: 'https://flakewatch.example.com/tests/unit%3A%3Amod%3A%3Aa',
    })
    const log = await store.notifications().listDeliveries()
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({ webhook: 'team', status: 'delivered', attempts: 1, lastStatus: 200 })
  })

  it('a tampered body or a wrong secret does not verify', async () => {
    await receiver.close()
    receiver = await startReceiver('another-secret-entirely')
    await quarantineAndLook(settings([{ name: 'team', url: receiver.url, secret: SECRET }]))
    expect(receiver.received[0]!.signatureValid).toBe(false)
  })

  it('retries 5xx with backoff until the receiver takes it, and logs every attempt', async () => {
    receiver.respond(503, 500)
    const out = await quarantineAndLook(settings([{ name: 'team', url: receiver.url, secret: SECRET }]), 10_000)
    expect(out.delivery).toMatchObject({ attempts: 3, delivered: 1, failed: 0 })
    expect(receiver.received).toHaveLength(3)
    // The same event each time (a receiver deduplicates by the delivery id), each signed afresh.
    expect(new Set(receiver.received.map((r) => r.headers['x-flakewatch-delivery'])).size).toBe(1)
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true)
    const [d] = await store.notifications().listDeliveries()
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200 })
  })

  it('leaves a failing delivery queued for a later pass, then gives up after maxAttempts', async () => {
    receiver.respond(502, 502, 502, 502, 502)
    const s = settings([{ name: 'team', url: receiver.url }], { maxAttempts: 3 })
    const out = await quarantineAndLook(s)
    expect(out.delivery).toMatchObject({ attempts: 1, delivered: 0, pending: 1 })
    expect((await store.notifications().listDeliveries())[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatus: 502,
      lastError: 'HTTP 502',
    })
    const ns = store.notifications()
    const later = await deliverDue({
      store: ns,
      webhooks: [{ name: 'team', url: receiver.url, secret: null }],
      configured: ['team'],
      settings: s,
      maxWaitMs: 10_000,
      // A later pass, once the retry is due.
      now: () => Date.now() + 60_000,
    })
    expect(later).toMatchObject({ attempts: 2, failed: 1, delivered: 0 })
    expect((await ns.listDeliveries())[0]).toMatchObject({ status: 'failed', attempts: 3 })
    expect(receiver.received).toHaveLength(3)
  })

  it('does not retry a 4xx refusal', async () => {
    receiver.respond(400)
    const out = await quarantineAndLook(settings([{ name: 'team', url: receiver.url }]), 10_000)
    expect(out.delivery).toMatchObject({ attempts: 1, failed: 1 })
    expect(receiver.received).toHaveLength(1)
    expect((await store.notifications().listDeliveries())[0]).toMatchObject({ status: 'failed', lastStatus: 400 })
  })

  it('sends the Slack form: text and blocks, with the test name escaped and a link', async () => {
    await quarantineAndLook(settings([{ name: 'slack', url: receiver.url, format: 'slack' }]))
    const body = JSON.parse(receiver.received[0]!.body)
    expect(body.text).toBe('flakewatch: unit::mod::a was quarantined')
    expect(body.blocks[0]).toEqual({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: '*flakewatch*: <https://flakewatch.example.com/tests/unit%3A%3Amod%3A%3Aa|unit::mod::a> was quarantined',
      },
    })
    const context = body.blocks[1].elements[0].text as string
    expect(context).toContain('quarantined: fails every other run &lt;script&gt;')
    expect(context).not.toContain('<script>')
    expect(receiver.received[0]!.headers['x-flakewatch-signature-256']).toBeUndefined()
  })

  it('delivers at least once: a delivery claimed by a process that died is sent after the lease', async () => {
    const s = settings([{ name: 'team', url: receiver.url }])
    const analyses = await analyzeStore(store)
    await detectAndEnqueue({ store, settings: s, analyses })
    await quarantineTest(store, 'unit::mod::b', 'by hand', { by: 'alice' })
    const enq = await detectAndEnqueue({ store, settings: s, analyses })
    expect(enq.enqueued).toBe(1)
    const ns = store.notifications()
    // The "dead" process claims it and never reports back.
    expect(await ns.claimDue(Date.now(), DELIVERY_LEASE_MS, 10, { names: ['team'] })).toHaveLength(1)
    const hooks = [{ name: 'team', url: receiver.url, secret: null }]
    const meanwhile = await deliverDue({ store: ns, webhooks: hooks, configured: ['team'], settings: s })
    expect(meanwhile.attempts).toBe(0)
    const after = await deliverDue({
      store: ns,
      webhooks: hooks,
      configured: ['team'],
      settings: s,
      now: () => Date.now() + DELIVERY_LEASE_MS + 1000,
    })
    expect(after.delivered).toBe(1)
    expect(receiver.received).toHaveLength(1)
  })

  it('queues one transition once, however many processes look at it', async () => {
    const s = settings([{ name: 'team', url: receiver.url }])
    const analyses = await analyzeStore(store)
    await detectAndEnqueue({ store, settings: s, analyses })
    await quarantineTest(store, 'unit::mod::a', 'r')
    const looks = await Promise.all([1, 2, 3].map(() => detectAndEnqueue({ store, settings: s, analyses })))
    // A look that starts after another saved the new state sees nothing new; those that overlap share the id.
    expect(looks.some((l) => l.changes.length === 1)).toBe(true)
    expect(looks.every((l) => l.changes.length <= 1)).toBe(true)
    expect(looks.reduce((n, l) => n + l.enqueued, 0)).toBe(1)
    expect(await store.notifications().listDeliveries()).toHaveLength(1)
  })

  it('keeps a delivery queued while its URL is unknown here, and fails one whose webhook left the config', async () => {
    const hooks: WebhookConfig[] = [
      { name: 'team', urlEnv: 'TEAM_HOOK' },
      { name: 'old', url: receiver.url },
    ]
    const out = await quarantineAndLook(settings(hooks))
    expect(out.warnings).toEqual(['webhook team: TEAM_HOOK is not set; its deliveries stay queued'])
    expect(out.delivery).toMatchObject({ delivered: 1 })
    const ns = store.notifications()
    expect((await ns.listDeliveries({ webhook: 'team' }))[0]).toMatchObject({ status: 'pending', attempts: 0 })
    // Another process, with the URL, and a config that no longer lists `old`.
    const resolved = resolveWebhooks([hooks[0]!], { TEAM_HOOK: receiver.url })
    const later = await deliverDue({
      store: ns,
      webhooks: resolved.webhooks,
      configured: ['team'],
      settings: settings(hooks),
    })
    expect(later).toMatchObject({ delivered: 1, failed: 0 })
    expect((await ns.listDeliveries({ webhook: 'team' }))[0]).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(receiver.received).toHaveLength(2)
    // A pending delivery for a webhook no config names any more is given up.
    receiver.respond(503)
    await store.deleteQuarantine('unit::mod::a', {
      action: 'release',
      actor: 'x',
      at: new Date().toISOString(),
      reason: 'fixed by hand',
      source: null,
    })
    const released = await notifyStateChanges({
      store,
      settings: settings([hooks[1]!]),
      analyses: await analyzeStore(store),
      env: {},
    })
    expect(released.delivery).toMatchObject({ pending: 1 })
    const gone = await deliverDue({
      store: ns,
      webhooks: [],
      configured: [],
      settings: settings([]),
      now: () => Date.now() + 60_000,
    })
    expect(gone.failed).toBe(1)
    expect((await ns.listDeliveries({ webhook: 'old' }))[0]).toMatchObject({
      event: 'released',
      status: 'failed',
      lastError: 'webhook "old" is no longer configured',
    })
    expect(JSON.parse(receiver.received[2]!.body)).toMatchObject({ event: 'released', release_reason: 'fixed by hand' })
  })

  it('sends each webhook only the events and suites it asks for', async () => {
    const out = await quarantineAndLook(
      settings([
        { name: 'flaky-only', url: receiver.url, events: ['became_flaky'] },
        { name: 'unit', url: receiver.url, suites: ['unit'] },
        { name: 'e2e', url: receiver.url, suites: ['e2e'] },
      ]),
    )
    expect(out.enqueued).toBe(1)
    expect((await store.notifications().listDeliveries()).map((d) => d.webhook)).toEqual(['unit'])
  })
})
