import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { WebhookConfig } from '../../src/config/defaults.js'
import { notifyStateChanges, type NotificationSettings } from '../../src/notify/notify.js'
import { analyzeStore } from '../../src/pipeline/analyze-store.js'
import { createApp } from '../../src/server/app.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { config } from '../server/helpers.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { seedAlternating, startReceiver } from './helpers.js'

const SECRET = 'a-shared-secret-for-rules-0123'
const ALICE = 'alice-token-0123456789'
const pg = await resolveTestPg()
const pgSchemas = pg.url ? schemas(pg.url) : null
afterAll(() => pgSchemas?.dropAll())

const backends: [string, () => Promise<Store>][] = [
  ['sqlite', () => openSqliteStore(join(testdir({}, 'rule-notify-'), 'fw.db'))],
]
if (pg.url) backends.push(['postgres', () => openPostgresStore(pgSchemas!.fresh())])
else if (pg.skip) console.warn(`PostgreSQL rule webhook tests skipped: ${pg.skip}`)

function settings(webhooks: WebhookConfig[]): NotificationSettings {
  return {
    webhooks,
    expiringWithinDays: 3,
    serverUrl: 'https://flakewatch.example.com',
    maxAttempts: 2,
    backoffSeconds: 0,
    timeoutSeconds: 5,
  }
}

interface RulePayload {
  event: string
  id: string
  project: string | null
  summary: string
  rule: { id: string; match: Record<string, unknown>; matches: string; reason: string } | null
  deleted: boolean
  actor: string | null
  reason: string | null
  url: string | null
}

describe.each(backends)('quarantine rule changes through the API are announced on %s', (_name, open) => {
  let store: Store
  let app: FastifyInstance
  let json: Awaited<ReturnType<typeof startReceiver>>
  let slack: Awaited<ReturnType<typeof startReceiver>>
  let s: NotificationSettings

  beforeEach(async () => {
    store = await open()
    await seedAlternating(store)
    json = await startReceiver(SECRET)
    slack = await startReceiver(SECRET)
    s = settings([
      { name: 'team', url: json.url, secret: SECRET },
      // A suite filter does not hide rule events: a rule may forgive failures of any suite.
      { name: 'slack', url: slack.url, secret: SECRET, format: 'slack', suites: ['e2e'] },
      { name: 'verdicts-only', url: slack.url, secret: SECRET, events: ['became_flaky'] },
    ])
    const c = config({ writeToken: null, writeTokens: { alice: ALICE } })
    app = await createApp({ store, config: c, webRoot: null, analysisWorker: false, uploadWorkers: false })
  })
  afterEach(async () => {
    await app.close()
    await json.close()
    await slack.close()
    await store.close()
  })

  const look = async () =>
    notifyStateChanges({ store, settings: s, project: 'acme/shop', analyses: await analyzeStore(store), env: {} })
  const putRule = async (id: string, body: Record<string, unknown>) => {
    const res = await app.inject({
      method: 'PUT',
      url: `/api/v1/rules/${id}`,
      headers: { authorization: `Bearer ${ALICE}` },
      payload: body,
    })
    expect(res.statusCode, res.body).toBe(200)
  }
  const payloads = () => json.received.map((r) => JSON.parse(r.body) as RulePayload)

  it('sends rule_created, rule_replaced and rule_deleted once each, signed, with the rule, actor and reason', async () => {
    // A rule that exists before the first look is recorded, not announced.
    await putRule('older', { match: { test_id: 'unit::mod::b' }, reason: 'was here first' })
    expect((await look()).baseline).toBe(true)
    expect(json.received).toEqual([])

    await putRule('timeouts-arm64', {
      match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
      reason: 'arm64 runners are <slow>',
    })
    const created = await look()
    expect(created.ruleChanges.map((c) => [c.event, c.ruleId])).toEqual([['rule_created', 'timeouts-arm64']])
    expect(created.delivery).toMatchObject({ delivered: 2, failed: 0 })
    expect(payloads()[0]).toMatchObject({
      event: 'rule_created',
      project: 'acme/shop',
      summary: 'acme/shop: quarantine rule timeouts-arm64 was created by alice',
      rule: {
        id: 'timeouts-arm64',
        match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
        matches: 'message /Timeout \\d+ms exceeded/, runner=arm64',
        reason: 'arm64 runners are <slow>',
      },
      deleted: false,
      actor: 'alice',
      reason: 'arm64 runners are <slow>',
      url: 'https://flakewatch.example.com/quarantine?project=acme%2Fshop',
    })
    expect(json.received[0]!.headers['x-flakewatch-event']).toBe('rule_created')
    const slackBody = JSON.parse(slack.received[0]!.body) as { text: string; blocks: unknown[] }
    expect(slackBody.text).toBe('flakewatch: [acme/shop] quarantine rule timeouts-arm64 was created by alice')
    expect(JSON.stringify(slackBody.blocks)).toContain('arm64 runners are &lt;slow&gt;')

    await putRule('timeouts-arm64', { match: { message: 'Timeout \\d+ms exceeded' }, reason: 'every runner now' })
    expect((await look()).ruleChanges.map((c) => c.event)).toEqual(['rule_replaced'])
    expect(payloads()[1]).toMatchObject({
      event: 'rule_replaced',
      rule: { matches: 'message /Timeout \\d+ms exceeded/', reason: 'every runner now' },
      actor: 'alice',
    })

    const del = await app.inject({
      method: 'DELETE',
      url: '/api/v1/rules/timeouts-arm64',
      headers: { authorization: `Bearer ${ALICE}` },
      payload: { reason: 'the runners were upgraded' },
    })
    expect(del.statusCode, del.body).toBe(200)
    expect((await look()).ruleChanges.map((c) => c.event)).toEqual(['rule_deleted'])
    expect(payloads()[2]).toMatchObject({
      event: 'rule_deleted',
      summary: 'acme/shop: quarantine rule timeouts-arm64 was deleted by alice',
      // As it was before it went, from its audit trail.
      rule: { id: 'timeouts-arm64', reason: 'every runner now' },
      deleted: true,
      actor: 'alice',
      reason: 'the runners were upgraded',
    })

    // Nothing changed since: nothing more, and every message was signed and verified.
    expect((await look()).ruleChanges).toEqual([])
    expect(json.received).toHaveLength(3)
    expect(slack.received).toHaveLength(3)
    expect([...json.received, ...slack.received].every((r) => r.signatureValid === true)).toBe(true)
    expect(new Set(payloads().map((p) => p.id)).size).toBe(3)
    const log = await store.notifications().listDeliveries({ webhook: 'team' })
    expect(log.map((d) => [d.event, d.testId, d.status])).toEqual([
      ['rule_deleted', 'rule:timeouts-arm64', 'delivered'],
      ['rule_replaced', 'rule:timeouts-arm64', 'delivered'],
      ['rule_created', 'rule:timeouts-arm64', 'delivered'],
    ])
  })
})

describe('quarantine rule changes through the CLI are announced', () => {
  it('by the next notify, listed in its output and sent signed', async () => {
    const receiver = await startReceiver(SECRET)
    try {
      const dir = testdir({}, 'rule-notify-cli-')
      const store = await openSqliteStore(join(dir, 'fw.db'))
      await seedAlternating(store)
      await store.close()
      writeFileSync(
        join(dir, 'flakewatch.config.json'),
        JSON.stringify({
          db: 'fw.db',
          codeowners: { enabled: false },
          notifications: { webhooks: [{ name: 'team', url: receiver.url, secret: SECRET }], backoffSeconds: 0 },
        }),
      )
      expect((await runCli(['notify'], { cwd: dir })).exitCode).toBe(0)
      const add = await runCli(
        [
          'quarantine',
          'rule',
          'add',
          'legacy',
          '--file-path',
          'src/legacy/**',
          '--reason',
          'old code',
          '--actor',
          'bob',
        ],
        { cwd: dir },
      )
      expect(add.exitCode, add.stderr).toBe(0)
      const noticed = await runCli(['notify', '--json'], { cwd: dir })
      expect(noticed.exitCode, noticed.stderr).toBe(0)
      expect(JSON.parse(noticed.stdout)).toMatchObject({
        changes: [],
        rule_changes: [{ event: 'rule_created', rule_id: 'legacy' }],
        enqueued: 1,
      })
      expect(receiver.received).toHaveLength(1)
      expect(receiver.received[0]!.signatureValid).toBe(true)
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
        event: 'rule_created',
        project: null,
        summary: 'quarantine rule legacy was created by bob',
        rule: { id: 'legacy', match: { file: 'src/legacy/**' } },
      })

      const remove = await runCli(['quarantine', 'rule', 'remove', 'legacy', '--reason', 'rewritten'], { cwd: dir })
      expect(remove.exitCode, remove.stderr).toBe(0)
      const gone = await runCli(['notify'], { cwd: dir })
      expect(gone.stdout).toMatch(/rule_deleted\s+rule:legacy/)
      expect(gone.stderr).toContain('notifications: 1 change(s), 1 queued, 1 delivered')
      expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({ event: 'rule_deleted', reason: 'rewritten' })
    } finally {
      await receiver.close()
    }
  })
})
