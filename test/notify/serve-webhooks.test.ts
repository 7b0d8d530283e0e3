import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { HealthResponse, OverviewResponse } from '../../src/server/api-types.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { spawnServe, testdir, type ServeProcess } from '../helpers/run-cli.js'
import { seedAlternating, startReceiver } from './helpers.js'

const SECRET = 'serve-shared-secret-0123456789'
const API_SECRET = 'api-slack-secret-0123456789'
const FLAKY = 'unit::mod::a'

/** `flakewatch serve` looks for state changes every second here, so that the test waits seconds, not minutes. */
const LOOK_EVERY = { intervalSeconds: 1, backoffSeconds: 0, serverUrl: 'https://flakewatch.example.com' }

async function seededStore(dir: string, file: string): Promise<void> {
  const store = await openSqliteStore(join(dir, file))
  await seedAlternating(store)
  await store.close()
}

async function health(url: string, project?: string): Promise<HealthResponse> {
  const res = await fetch(`${url}/healthz${project ? `?project=${encodeURIComponent(project)}` : ''}`)
  return (await res.json()) as HealthResponse
}

async function quarantine(url: string, token: string, project?: string): Promise<void> {
  const q = project ? `?project=${encodeURIComponent(project)}` : ''
  const res = await fetch(`${url}/api/v1/quarantine/${encodeURIComponent(FLAKY)}${q}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'fails every other run' }),
  })
  expect(res.status, await res.text()).toBe(200)
}

/** Waits until the server (or one project of it) has finished `n` looks more than it had at `from`. */
async function looksPast(url: string, from: number, n: number, project?: string): Promise<number> {
  let looks = 0
  await expect
    .poll(async () => (looks = (await health(url, project)).notifications?.looks ?? 0), { timeout: 30_000 })
    .toBeGreaterThanOrEqual(from + n)
  return looks
}

describe('flakewatch serve sends state-change webhooks from its analysis worker', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('on a single-project server: a quarantine through the API reaches the receiver, signed', async () => {
    const receiver = await startReceiver(SECRET)
    cleanups.push(receiver.close)
    const dir = testdir({}, 'serve-hooks-')
    await seededStore(dir, 'fw.db')
    writeFileSync(
      join(dir, 'flakewatch.config.json'),
      JSON.stringify({
        db: 'fw.db',
        codeowners: { enabled: false },
        notifications: { ...LOOK_EVERY, webhooks: [{ name: 'team', url: receiver.url, secret: SECRET }] },
      }),
    )
    const server: ServeProcess = await spawnServe([], { cwd: dir, env: { FLAKEWATCH_WRITE_TOKEN: 'write-0123456789' } })
    cleanups.push(server.close)

    // The first look records the state of every test and announces nothing.
    const looks = await looksPast(server.url, 0, 1)
    expect(server.stderr()).toContain('notifications: first look')
    expect((await health(server.url)).notifications?.runs_in).toBe('worker')
    expect(receiver.received).toEqual([])

    await quarantine(server.url, 'write-0123456789')
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBe(1)
    const [got] = receiver.received
    expect(got!.signatureValid).toBe(true)
    expect(got!.headers['x-flakewatch-event']).toBe('quarantined')
    expect(JSON.parse(got!.body)).toMatchObject({
      event: 'quarantined',
      project: null,
      summary: `${FLAKY} was quarantined`,
      test: { id: FLAKY },
      url: `https://flakewatch.example.com/tests/${encodeURIComponent(FLAKY)}`,
    })
    // Later looks find nothing new: the change is announced once.
    await looksPast(server.url, looks, 2)
    expect(receiver.received).toHaveLength(1)
    expect(server.stderr()).toMatch(/notifications: 1 change\(s\), 1 queued, 1 delivered/)
  })

  it('on a multi-project server: each project announces its own changes, with its key, to its own webhooks', async () => {
    const org = await startReceiver(SECRET)
    const slack = await startReceiver(API_SECRET)
    cleanups.push(org.close, slack.close)
    const dir = testdir({}, 'serve-projects-hooks-')
    await seededStore(dir, 'shop.db')
    await seededStore(dir, 'api.db')
    const tokens = { shop: 'shop-write-0123456789', api: 'api-write-0123456789' }
    writeFileSync(
      join(dir, 'flakewatch.config.json'),
      JSON.stringify({
        codeowners: { enabled: false },
        projects: {
          'acme/shop': { db: 'shop.db', writeTokens: { ci: tokens.shop }, readToken: 'shop-read-0123456789' },
          'acme/api': {
            db: 'api.db',
            writeTokens: { ci: tokens.api },
            readToken: 'api-read-0123456789',
            webhooks: [{ name: 'api-slack', url: slack.url, secret: API_SECRET, format: 'slack' }],
          },
        },
        server: { defaultProject: 'acme/shop', orgToken: 'org-token-0123456789' },
        notifications: { ...LOOK_EVERY, webhooks: [{ name: 'org', url: org.url, secret: SECRET }] },
      }),
    )
    const server = await spawnServe([], { cwd: dir })
    cleanups.push(server.close)

    const shopLooks = await looksPast(server.url, 0, 1, 'acme/shop')
    const apiLooks = await looksPast(server.url, 0, 1, 'acme/api')
    expect((await health(server.url, 'acme/api')).notifications?.runs_in).toBe('worker')
    expect(server.stderr()).toContain('acme/shop: notifications: first look')
    expect(server.stderr()).toContain('acme/api: notifications: first look')

    await quarantine(server.url, tokens.shop, 'acme/shop')
    await quarantine(server.url, tokens.api, 'acme/api')
    await expect.poll(() => org.received.length, { timeout: 30_000 }).toBe(1)
    await expect.poll(() => slack.received.length, { timeout: 30_000 }).toBe(1)

    const shopMessage = org.received[0]!
    expect(shopMessage.signatureValid).toBe(true)
    expect(JSON.parse(shopMessage.body)).toMatchObject({
      event: 'quarantined',
      project: 'acme/shop',
      summary: `acme/shop: ${FLAKY} was quarantined`,
      test: { id: FLAKY },
      url: `https://flakewatch.example.com/tests/${encodeURIComponent(FLAKY)}?project=acme%2Fshop`,
    })
    const apiMessage = slack.received[0]!
    expect(apiMessage.signatureValid).toBe(true)
    const slackBody = JSON.parse(apiMessage.body) as { text: string; blocks: { text?: { text: string } }[] }
    expect(slackBody.text).toBe(`flakewatch: [acme/api] ${FLAKY} was quarantined`)
    expect(slackBody.blocks[0]!.text!.text).toContain('?project=acme%2Fapi|')

    // The overview's figures come from each project's analysis worker as well.
    const overview = await fetch(`${server.url}/api/v1/overview`, {
      headers: { authorization: 'Bearer org-token-0123456789' },
    })
    expect(((await overview.json()) as OverviewResponse).projects).toEqual([
      expect.objectContaining({ project: 'acme/api', tests: 2, flaky: 1, quarantined: 1 }),
      expect.objectContaining({ project: 'acme/shop', tests: 2, flaky: 1, quarantined: 1 }),
    ])

    // Neither project's change reaches the other's webhooks, however many looks follow.
    await looksPast(server.url, shopLooks, 3, 'acme/shop')
    await looksPast(server.url, apiLooks, 3, 'acme/api')
    expect(org.received).toHaveLength(1)
    expect(slack.received).toHaveLength(1)
  })
})
