import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { seedAlternating, startReceiver } from './helpers.js'

const SECRET = 'cli-shared-secret-0123456789'

/** `a` fails every other run of 20: `quarantine auto` quarantines it. */
async function seededDir(): Promise<string> {
  const dir = testdir({}, 'notify-cli-')
  const store = await openSqliteStore(join(dir, 'fw.db'))
  await seedAlternating(store)
  await store.close()
  return dir
}

function writeConfig(dir: string, notifications: unknown): void {
  writeFileSync(
    join(dir, 'flakewatch.config.json'),
    JSON.stringify({ db: 'fw.db', codeowners: { enabled: false }, notifications }),
  )
}

describe('flakewatch notify and quarantine auto with webhooks', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let dir: string
  beforeEach(async () => {
    receiver = await startReceiver(SECRET)
    dir = await seededDir()
  })
  afterEach(() => receiver.close())

  it('records a baseline first, then quarantine auto announces what it quarantined, signed; notify log shows it', async () => {
    writeConfig(dir, {
      webhooks: [{ name: 'team', urlEnv: 'TEAM_HOOK', secretEnv: 'TEAM_SECRET' }],
      backoffSeconds: 0,
    })
    const env = { TEAM_HOOK: receiver.url, TEAM_SECRET: SECRET }
    const first = await runCli(['notify', '--json'], { cwd: dir, env })
    expect(first.exitCode, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ baseline: true, changes: [], enqueued: 0 })

    const auto = await runCli(['quarantine', 'auto'], { cwd: dir, env })
    expect(auto.exitCode, auto.stderr).toBe(0)
    expect(auto.stdout).toContain('unit::mod::a')
    expect(auto.stderr).toContain('notifications: 1 change(s), 1 queued, 1 delivered')
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]!.signatureValid).toBe(true)
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ event: 'quarantined', test: { id: 'unit::mod::a' } })

    const log = await runCli(['notify', 'log', '--json'], { cwd: dir })
    expect(log.exitCode, log.stderr).toBe(0)
    expect(JSON.parse(log.stdout)).toEqual([
      expect.objectContaining({
        webhook: 'team',
        event: 'quarantined',
        status: 'delivered',
        attempts: 1,
        last_status: 200,
      }),
    ])
    const table = await runCli(['notify', 'log'], { cwd: dir })
    expect(table.stdout).toMatch(/team\s+quarantined\s+unit::mod::a\s+delivered\s+1\s+HTTP 200/)
  })

  it('never fails the command when the receiver is down: the delivery stays queued and a later notify sends it', async () => {
    writeConfig(dir, { webhooks: [{ name: 'team', urlEnv: 'TEAM_HOOK' }], backoffSeconds: 0 })
    await runCli(['notify'], { cwd: dir, env: { TEAM_HOOK: receiver.url } })
    const down = 'http://127.0.0.1:9/nothing-listens-here'
    const auto = await runCli(['quarantine', 'auto', '--json'], { cwd: dir, env: { TEAM_HOOK: down } })
    expect(auto.exitCode, auto.stderr).toBe(0)
    expect(JSON.parse(auto.stdout).quarantined).toHaveLength(1)
    expect(auto.stderr).toMatch(/warning: webhook team: quarantined unit::mod::a: network error/)
    const pending = await runCli(['notify', 'log', '--status', 'pending', '--json'], { cwd: dir })
    expect(JSON.parse(pending.stdout)).toHaveLength(1)

    const later = await runCli(['notify', '--json'], { cwd: dir, env: { TEAM_HOOK: receiver.url } })
    expect(later.exitCode, later.stderr).toBe(0)
    expect(JSON.parse(later.stdout)).toMatchObject({ changes: [], delivery: { delivered: 1 } })
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { event: string }).event)).toEqual(['quarantined'])
  })

  it('exits 2 naming the key for a bad webhook config, and when no webhook is configured', async () => {
    writeConfig(dir, { webhooks: [{ name: 'team', url: 'ftp://example.com/x' }] })
    const bad = await runCli(['notify'], { cwd: dir })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('notifications.webhooks.0.url')
    writeConfig(dir, { webhooks: [{ name: 'team' }] })
    const none = await runCli(['notify'], { cwd: dir })
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('give exactly one of url and urlEnv')
    writeConfig(dir, {})
    const empty = await runCli(['notify'], { cwd: dir })
    expect(empty.exitCode).toBe(2)
    expect(empty.stderr).toContain('no webhooks are configured')
    const limit = await runCli(['notify', 'log', '--limit', '0'], { cwd: dir })
    expect(limit.exitCode).toBe(2)
  })
})
