import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCli, spawnServe, testdir } from '../helpers/run-cli.js'
import { fakeGithub } from './fake-trackers.js'
import { seedFlaky } from './helpers.js'

const FLAKY = 'unit::mod::flaky0'

/** A JUnit report of the seeded tests: `flaky0` fails. */
const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="mod" tests="2" failures="1">
  <testcase classname="mod" name="steady" time="0.01"/>
  <testcase classname="mod" name="flaky0" time="0.01"><failure message="timeout after 5000ms">boom</failure></testcase>
</testsuite></testsuites>
`

async function project(apiUrl: string, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = testdir({ 'report.xml': JUNIT }, 'tickets-cli-')
  const store = await openSqliteStore(join(dir, 'fw.db'))
  await seedFlaky(store)
  await store.close()
  writeFileSync(
    join(dir, 'flakewatch.config.json'),
    JSON.stringify({
      db: 'fw.db',
      suite: 'unit',
      codeowners: { enabled: false },
      notifications: { serverUrl: 'https://flakewatch.example.com', ...extra },
      tickets: { tracker: 'github', github: { repo: 'acme/shop', apiUrl } },
    }),
  )
  return dir
}

describe('flakewatch tickets and serve', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('plan shows, sync opens once, list shows the ticket; a refusal exits 1 with the error kept', async () => {
    const fake = await fakeGithub({ repo: 'acme/shop', token: 'gh-token' })
    cleanups.push(fake.close)
    const dir = await project(fake.url)
    const env = { FLAKEWATCH_GITHUB_TOKEN: 'gh-token' }

    const plan = await runCli(['tickets', 'plan', '--json'], { cwd: dir })
    expect(plan.exitCode, plan.stderr).toBe(0)
    expect(JSON.parse(plan.stdout)).toMatchObject({
      dry_run: true,
      actions: [{ test_id: FLAKY, action: 'open' }],
      sync: null,
    })
    expect(fake.hits).toEqual([])

    const wrong = await runCli(['tickets', 'sync'], { cwd: dir, env: { FLAKEWATCH_GITHUB_TOKEN: 'not-the-token' } })
    expect(wrong.exitCode).toBe(1)
    expect(wrong.stderr).toMatch(/warning: ticket of unit::mod::flaky0: GitHub listing issues: HTTP 400/)
    const failed = await runCli(['tickets', 'list', '--json'], { cwd: dir })
    expect(JSON.parse(failed.stdout)).toEqual([
      expect.objectContaining({ test_id: FLAKY, wanted: 'open', actual: null, attempts: 1 }),
    ])
    fake.violations.splice(0)

    // The failed ticket waits a minute for its next attempt: made due now, as if that minute had passed.
    const store = await openSqliteStore(join(dir, 'fw.db'))
    await store.tickets().recordChanges(
      [],
      [
        {
          testId: FLAKY,
          tracker: 'github',
          marker: '',
          wanted: { state: 'open', reason: 'became flaky' },
          at: new Date().toISOString(),
          now: 0,
        },
      ],
    )
    await store.close()
    const sync = await runCli(['tickets', 'sync', '--json'], { cwd: dir, env })
    expect(sync.exitCode, sync.stderr).toBe(0)
    expect(JSON.parse(sync.stdout).sync).toMatchObject({ opened: 1, failed: 0 })
    expect(fake.issues).toHaveLength(1)
    const again = await runCli(['tickets', 'sync'], { cwd: dir, env })
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stderr).toContain('tickets: 0 to open, 0 to close, 0 comment(s); 0 opened')
    expect(fake.issues).toHaveLength(1)
    const list = await runCli(['tickets', 'list'], { cwd: dir })
    expect(list.stdout).toMatch(
      /unit::mod::flaky0\s+github\s+1\s+open\s+open\s+0\s+https:\/\/github\.example\/acme\/shop\/issues\/1/,
    )
    expect(fake.violations).toEqual([])
  })

  it('is never in the path of a build: ingest, gate, run and quarantine auto call no tracker', async () => {
    const fake = await fakeGithub({ repo: 'acme/shop', token: 'gh-token' })
    cleanups.push(fake.close)
    const dir = await project(fake.url)
    const env = { FLAKEWATCH_GITHUB_TOKEN: 'gh-token' }
    const node = process.execPath
    for (const argv of [
      ['ingest', 'report.xml'],
      ['quarantine', 'auto'],
      ['gate', 'report.xml'],
      ['run', '--report', 'report.xml', '--', node, '-e', 'process.exit(1)'],
    ]) {
      const r = await runCli(argv, { cwd: dir, env })
      expect(r.exitCode, `${argv.join(' ')}\n${r.stderr}`).toBeLessThanOrEqual(1)
      expect(r.stderr).not.toMatch(/ticket/i)
    }
    expect(fake.hits).toEqual([])
  })

  it(
    'serve opens the ticket on its look and puts the link on a quarantine made through the API',
    { timeout: 90_000 },
    async () => {
      const fake = await fakeGithub({ repo: 'acme/shop', token: 'gh-token' })
      cleanups.push(fake.close)
      const dir = await project(fake.url, { intervalSeconds: 1 })
      const server = await spawnServe([], {
        cwd: dir,
        env: { FLAKEWATCH_WRITE_TOKEN: 'write-0123456789', FLAKEWATCH_GITHUB_TOKEN: 'gh-token' },
      })
      cleanups.push(server.close)
      await expect.poll(() => fake.issues.length, { timeout: 30_000 }).toBe(1)
      await expect
        .poll(() => server.stderr(), { timeout: 30_000 })
        .toContain('tickets: 1 to open, 0 to close, 0 comment(s); 1 opened')
      const put = await fetch(`${server.url}/api/v1/quarantine/${encodeURIComponent(FLAKY)}`, {
        method: 'PUT',
        headers: { authorization: 'Bearer write-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'fails every other run' }),
      })
      expect(put.status, await put.text()).toBe(200)
      await expect
        .poll(
          async () => {
            const res = await fetch(`${server.url}/api/v1/quarantine`)
            const q = (await res.json()) as { quarantined: { issue_url: string | null }[] }
            return q.quarantined[0]?.issue_url ?? null
          },
          { timeout: 30_000 },
        )
        .toBe('https://github.example/acme/shop/issues/1')
      // The quarantine on an open ticket is a comment, not a second ticket.
      await expect.poll(() => fake.issues[0]!.comments.length, { timeout: 30_000 }).toBe(1)
      expect(String(fake.issues[0]!.comments[0])).toContain('Quarantined: fails every other run')
      expect(fake.issues).toHaveLength(1)
      expect(fake.violations).toEqual([])
    },
  )
})
