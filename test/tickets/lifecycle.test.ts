import { afterEach, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { ticketMarker } from '../../src/tickets/plan.js'
import { quarantineTest } from '../notify/helpers.js'
import { fakeGithub, fakeGitlab, fakeJira } from './fake-trackers.js'
import { addRun, look, noWait, seedFlaky, tempStore, ticketConfig } from './helpers.js'

const A = 'unit::mod::flaky0'

type Fake =
  Awaited<ReturnType<typeof fakeGithub>> | Awaited<ReturnType<typeof fakeGitlab>> | Awaited<ReturnType<typeof fakeJira>>

const trackers = [
  {
    name: 'GitHub Issues',
    start: () => fakeGithub({ repo: 'acme/shop', token: 'gh-token' }),
    config: (url: string) => ({ tracker: 'github' as const, github: { repo: 'acme/shop', apiUrl: url } }),
    env: { FLAKEWATCH_GITHUB_TOKEN: 'gh-token' },
    urlOf: (key: string) => `https://github.example/acme/shop/issues/${key}`,
  },
  {
    name: 'GitLab issues',
    start: () => fakeGitlab({ project: 'acme/shop', token: 'gl-token' }),
    config: (url: string) => ({ tracker: 'gitlab' as const, gitlab: { project: 'acme/shop', url } }),
    env: { FLAKEWATCH_GITLAB_TOKEN: 'gl-token' },
    urlOf: (key: string) => `https://gitlab.example/acme/shop/-/issues/${key}`,
  },
  {
    name: 'Jira Cloud (REST v3, ADF)',
    start: () => fakeJira({ deployment: 'cloud', project: 'SHOP', token: 'jira-token', email: 'bot@acme.example' }),
    config: (url: string) => ({ tracker: 'jira' as const, jira: { url, project: 'SHOP' } }),
    env: { FLAKEWATCH_JIRA_TOKEN: 'jira-token', FLAKEWATCH_JIRA_EMAIL: 'bot@acme.example' },
    urlOf: null,
  },
  {
    name: 'Jira Server/Data Center (REST v2, wiki markup)',
    start: () => fakeJira({ deployment: 'server', project: 'SHOP', token: 'jira-pat' }),
    config: (url: string) => ({
      tracker: 'jira' as const,
      jira: { url, project: 'SHOP', deployment: 'server' as const },
    }),
    env: { FLAKEWATCH_JIRA_TOKEN: 'jira-pat' },
    urlOf: null,
  },
]

const text = (x: unknown) => JSON.stringify(x)

describe.each(trackers)('tickets in $name', (t) => {
  let fake: Fake
  let store: Store
  afterEach(async () => {
    await store?.close()
    await fake?.close()
  })

  it('opens, comments, closes and reopens one ticket through a test’s lifecycle, and finds it again after a restart', async () => {
    fake = await t.start()
    let file: string
    ;({ file, store } = await tempStore())
    await seedFlaky(store)
    const config = ticketConfig({ ...t.config(fake.url), openOn: ['quarantined'], labels: ['ci'] })

    // Flaky but not quarantined: no ticket under openOn: quarantined.
    const first = await look(store, config, t.env)
    expect(first.plan.actions).toEqual([])
    expect(fake.hits).toHaveLength(0)

    await quarantineTest(store, A, 'fails every other run')
    const opened = await look(store, config, t.env)
    expect(opened.sync?.opened).toBe(1)
    expect(fake.issues).toHaveLength(1)
    const issue = fake.issues[0]!
    expect(issue.title).toContain('flaky0')
    expect(text(issue.body)).toContain('unit::mod::flaky0')
    expect(text(issue.body)).toContain('quarantined: fails every other run')
    expect(text(issue.body)).toContain('Failure modes')
    expect(text(issue.body)).toContain('https://flakewatch.example/tests/')
    expect(issue.labels).toEqual(expect.arrayContaining(['flakewatch', 'ci']))
    const row = (await store.tickets().get(A))!
    expect(row).toMatchObject({ actual: 'open', wanted: 'open', marker: ticketMarker(null, A) })
    if (t.urlOf) expect(row.url).toBe(t.urlOf(row.key!))
    else expect(row.url).toBe(`${fake.url}/browse/${row.key}`)
    // The link is stored on the quarantine.
    expect((await store.getQuarantine(A))!.issueUrl).toBe(row.url)

    // Nothing changed: nothing is sent.
    const hits = fake.hits.length
    const quiet = await look(store, config, t.env)
    expect(quiet.plan.actions).toEqual([])
    expect(fake.hits).toHaveLength(hits)

    // It fails again: one comment.
    await addRun(store, 20, { flaky0: 'failed', steady: 'passed' })
    const again = await look(store, config, t.env)
    expect(again.plan.actions).toEqual([{ testId: A, action: 'comment', reason: 'failed again' }])
    expect(again.sync?.commented).toBe(1)
    expect(issue.comments).toHaveLength(1)
    expect(text(issue.comments[0])).toContain('Failed again')
    expect(text(issue.comments[0])).toContain('timeout after 5000ms on day 20')

    // Released: closed, with the reason said first.
    await store.deleteQuarantine(A, {
      action: 'release',
      actor: 'ana',
      at: new Date().toISOString(),
      reason: 'fixed the race',
      source: null,
    })
    const closed = await look(store, config, t.env)
    expect(closed.sync?.closed).toBe(1)
    expect(issue.state).toBe('closed')
    expect(text(issue.comments.at(-1))).toContain('released from quarantine')

    // Quarantined again: the same ticket is reopened, not a second one.
    await quarantineTest(store, A, 'back again')
    const reopened = await look(store, config, t.env)
    expect(reopened.sync?.tickets[0]?.did).toContain('reopened')
    expect(fake.issues).toHaveLength(1)
    expect(issue.history).toEqual(['opened', 'closed', 'reopened'])
    expect(fake.violations).toEqual([])

    // A store that lost its ticket rows (a new store, the same history) finds the ticket by its marker.
    await store.close()
    const copy = `${file}.copy.db`
    const fresh = await openSqliteStore(copy)
    store = fresh
    await seedFlaky(fresh)
    await quarantineTest(fresh, A, 'back again')
    const found = await look(fresh, config, t.env)
    expect(found.sync?.tickets[0]?.did).toEqual(['found'])
    expect(fake.issues).toHaveLength(1)
    expect((await fresh.tickets().get(A))!.key).toBe(row.key)
    expect(fake.violations).toEqual([])
  })

  it('retries a 5xx and a 429 (after its Retry-After) and opens the ticket once', async () => {
    fake = await t.start()
    ;({ store } = await tempStore())
    await seedFlaky(store)
    const config = ticketConfig(t.config(fake.url))
    fake.respond(
      { status: 503, body: { message: 'unavailable' } },
      { status: 429, headers: { 'retry-after': '2' }, body: {} },
    )
    const slept: number[] = []
    const out = await look(store, config, t.env, noWait(slept))
    expect(out.sync).toMatchObject({ opened: 1, failed: 0 })
    expect(slept).toContain(2000)
    expect(fake.issues).toHaveLength(1)
    expect(fake.violations).toEqual([])
  })
})
