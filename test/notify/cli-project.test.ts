import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { seedAlternating, startReceiver } from './helpers.js'

const A = 'acme/a'
const B = 'acme/b'
const A_SECRET = 'project-a-secret-0123456789'
const B_SECRET = 'project-b-secret-0123456789'
const ORG_SECRET = 'org-shared-secret-0123456789'
const FLAKY = 'unit::mod::a'

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** The ids quarantined in one project's SQLite file, read straight from the file. */
async function quarantinedIn(file: string): Promise<string[]> {
  const store = await openSqliteStore(file)
  try {
    return (await store.listQuarantines()).map((q) => q.testId)
  } finally {
    await store.close()
  }
}

/**
 * The CLI's `--project <key>` on a two-project config (two SQLite files next to it): each project has its own
 * webhook, and a shared one that neither uses, so a message sent to the wrong place is seen.
 */
describe('--project <key> selects one project of a multi-project config', () => {
  let dir: string
  let hookA: Receiver
  let hookB: Receiver
  let hookOrg: Receiver
  beforeEach(async () => {
    ;[hookA, hookB, hookOrg] = await Promise.all([
      startReceiver(A_SECRET),
      startReceiver(B_SECRET),
      startReceiver(ORG_SECRET),
    ])
    dir = testdir({}, 'project-cli-')
    for (const file of ['a.db', 'b.db']) {
      const store = await openSqliteStore(join(dir, file))
      await seedAlternating(store)
      await store.close()
    }
    writeFileSync(
      join(dir, 'flakewatch.config.json'),
      JSON.stringify({
        codeowners: { enabled: false },
        projects: {
          [A]: { db: 'a.db', readToken: 'a-read-0123', webhooks: [{ name: 'a', url: hookA.url, secret: A_SECRET }] },
          [B]: { db: 'b.db', readToken: 'b-read-0123', webhooks: [{ name: 'b', url: hookB.url, secret: B_SECRET }] },
        },
        notifications: {
          webhooks: [{ name: 'org', url: hookOrg.url, secret: ORG_SECRET }],
          backoffSeconds: 0,
          serverUrl: 'https://flakewatch.example.com',
        },
      }),
    )
  })
  afterEach(async () => {
    await Promise.all([hookA.close(), hookB.close(), hookOrg.close()])
  })

  it("notify --project b delivers to b's webhook, signed, with the key in the payload; a is untouched", async () => {
    const first = await runCli(['notify', '--project', B, '--json'], { cwd: dir })
    expect(first.exitCode, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ baseline: true, enqueued: 0 })

    const add = await runCli(['quarantine', 'add', FLAKY, '--reason', 'fails every other run', '--project', B], {
      cwd: dir,
    })
    expect(add.exitCode, add.stderr).toBe(0)
    expect(await quarantinedIn(join(dir, 'b.db'))).toEqual([FLAKY])
    expect(await quarantinedIn(join(dir, 'a.db'))).toEqual([])

    const sent = await runCli(['notify', '--project', B, '--json'], { cwd: dir })
    expect(sent.exitCode, sent.stderr).toBe(0)
    expect(JSON.parse(sent.stdout)).toMatchObject({ baseline: false, enqueued: 1, delivery: { delivered: 1 } })
    expect(hookB.received).toHaveLength(1)
    const [got] = hookB.received
    expect(got!.signatureValid).toBe(true)
    expect(got!.headers['x-flakewatch-event']).toBe('quarantined')
    expect(JSON.parse(got!.body)).toMatchObject({
      event: 'quarantined',
      project: B,
      summary: `${B}: ${FLAKY} was quarantined`,
      test: { id: FLAKY },
      url: `https://flakewatch.example.com/tests/${encodeURIComponent(FLAKY)}?project=${encodeURIComponent(B)}`,
    })
    // b lists its own webhooks: the shared one is not used, and a's is another project's.
    expect(hookOrg.received).toEqual([])
    expect(hookA.received).toEqual([])

    // The delivery log is b's; a's store has none.
    const logB = await runCli(['notify', 'log', '--project', B, '--json'], { cwd: dir })
    expect(logB.exitCode, logB.stderr).toBe(0)
    expect(JSON.parse(logB.stdout)).toEqual([expect.objectContaining({ webhook: 'b', status: 'delivered' })])
    const logA = await runCli(['notify', 'log', '--project', A, '--json'], { cwd: dir })
    expect(logA.exitCode, logA.stderr).toBe(0)
    expect(JSON.parse(logA.stdout)).toEqual([])
  })

  it("quarantine auto --project a quarantines in a's store only and announces it as a's", async () => {
    const first = await runCli(['notify', '--project', A], { cwd: dir })
    expect(first.exitCode, first.stderr).toBe(0)

    const auto = await runCli(['quarantine', 'auto', '--project', A], { cwd: dir })
    expect(auto.exitCode, auto.stderr).toBe(0)
    expect(auto.stdout).toContain(FLAKY)
    expect(auto.stderr).toContain(`${A}: notifications: 1 change(s), 1 queued, 1 delivered`)
    expect(await quarantinedIn(join(dir, 'a.db'))).toEqual([FLAKY])
    expect(await quarantinedIn(join(dir, 'b.db'))).toEqual([])

    expect(hookA.received).toHaveLength(1)
    expect(hookA.received[0]!.signatureValid).toBe(true)
    expect(JSON.parse(hookA.received[0]!.body)).toMatchObject({ event: 'quarantined', project: A, test: { id: FLAKY } })
    expect(hookB.received).toEqual([])
    expect(hookOrg.received).toEqual([])

    // The read commands see the same split: a's quarantine, b's none.
    const listA = await runCli(['quarantine', 'list', '--project', A, '--json'], { cwd: dir })
    const listB = await runCli(['quarantine', 'list', '--project', B, '--json'], { cwd: dir })
    expect(JSON.parse(listA.stdout).quarantined.map((q: { test_id: string }) => q.test_id)).toEqual([FLAKY])
    expect(JSON.parse(listB.stdout).quarantined).toEqual([])
  })

  it("gate --project reads that project's quarantines", async () => {
    const add = await runCli(['quarantine', 'add', FLAKY, '--reason', 'fails every other run', '--project', A], {
      cwd: dir,
    })
    expect(add.exitCode, add.stderr).toBe(0)
    writeFileSync(
      join(dir, 'junit.xml'),
      '<testsuite name="unit" tests="1" failures="1"><testcase classname="mod" name="a"><failure message="boom"/></testcase></testsuite>',
    )
    const inA = await runCli(['gate', 'junit.xml', '--suite', 'unit', '--project', A], { cwd: dir })
    expect(inA.exitCode, inA.stderr).toBe(0)
    const inB = await runCli(['gate', 'junit.xml', '--suite', 'unit', '--project', B], { cwd: dir })
    expect(inB.exitCode, inB.stderr).toBe(1)
  })

  it('an unknown key, or --db with --project, is a usage error (exit 2) naming the key and the known ones', async () => {
    const unknown = await runCli(['notify', '--project', 'acme/nope'], { cwd: dir })
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('no project "acme/nope"')
    expect(unknown.stderr).toContain(`the projects are "${A}", "${B}"`)

    const analyze = await runCli(['analyze', '--project', 'acme/nope'], { cwd: dir })
    expect(analyze.exitCode).toBe(2)
    expect(analyze.stderr).toContain('no project "acme/nope"')

    const both = await runCli(['quarantine', 'auto', '--project', A, '--db', join(dir, 'b.db')], { cwd: dir })
    expect(both.exitCode).toBe(2)
    expect(both.stderr).toContain('--db and --project both name a store')
    expect(await quarantinedIn(join(dir, 'b.db'))).toEqual([])
    expect(hookA.received.length + hookB.received.length + hookOrg.received.length).toBe(0)
  })
})
