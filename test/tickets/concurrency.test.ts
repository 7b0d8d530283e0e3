import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { fakeGithub, fakeGitlab, fakeJira } from './fake-trackers.js'
import { look, noWait, seedFlaky, tempStore, ticketConfig } from './helpers.js'

describe('tickets: idempotent under concurrency, rate limits, owners', () => {
  const closers: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0)) await c()
  })

  it('two processes syncing at once open one ticket per test, never two', async () => {
    // Creating is slow, so that both processes are inside a sync at the same time.
    const fake = await fakeGithub({ repo: 'acme/shop', token: 'tok', createDelayMs: 150 })
    const { file, store: a } = await tempStore()
    const b = await openSqliteStore(file)
    closers.push(
      () => fake.close(),
      () => a.close(),
      () => b.close(),
    )
    await seedFlaky(a, 6)
    const config = ticketConfig({ tracker: 'github', github: { repo: 'acme/shop', apiUrl: fake.url }, maxPerPass: 3 })
    const env = { FLAKEWATCH_GITHUB_TOKEN: 'tok' }
    for (let round = 0; round < 3; round++) await Promise.all([look(a, config, env), look(b, config, env)])
    const titles = fake.issues.map((i) => i.title).sort()
    expect(titles).toHaveLength(6)
    expect(new Set(titles).size).toBe(6)
    const rows = await a.tickets().list()
    expect(rows.filter((r) => r.actual === 'open')).toHaveLength(6)
    expect(new Set(rows.map((r) => r.key)).size).toBe(6)
    expect(fake.violations).toEqual([])
  })

  it('a rate limit that outlasts the retries ends the pass and defers the tickets to its reset', async () => {
    const fake = await fakeGitlab({ project: 'acme/shop', token: 'tok' })
    const { store } = await tempStore()
    closers.push(
      () => fake.close(),
      () => store.close(),
    )
    await seedFlaky(store, 3)
    const config = ticketConfig({ tracker: 'gitlab', gitlab: { project: 'acme/shop', url: fake.url } })
    const limited = { status: 429, headers: { 'retry-after': '120' }, body: { message: '429 Too Many Requests' } }
    fake.respond(limited, limited, limited, limited)
    const before = Date.now()
    const slept: number[] = []
    const out = await look(store, config, { FLAKEWATCH_GITLAB_TOKEN: 'tok' }, noWait(slept))
    expect(slept).toEqual([60_000, 60_000, 60_000])
    expect(out.sync!.failed).toBe(1)
    expect(out.sync!.rateLimitedUntil).toBeGreaterThanOrEqual(before + 120_000)
    const rows = await store.tickets().list()
    expect(rows).toHaveLength(3)
    for (const r of rows) expect(r.nextAttemptAt).toBe(out.sync!.rateLimitedUntil)
    // Only the first ticket's requests went out: the others waited without calling.
    expect(fake.hits).toHaveLength(4)
    expect(fake.issues).toHaveLength(0)
  })

  it('assigns from CODEOWNERS where the tracker can, and labels the rest', async () => {
    const { file, store } = await tempStore()
    const owners = join(dirname(file), 'CODEOWNERS')
    writeFileSync(owners, 'src/cart.test.ts @alice @acme/qa alice@acme.example\n')
    await seedFlaky(store, 1, 'src/cart.test.ts')
    closers.push(() => store.close())
    const withOwners = (c: ReturnType<typeof ticketConfig>) => ({
      ...c,
      codeowners: { enabled: true, file: owners, dialect: 'github' as const },
    })

    const gh = await fakeGithub({ repo: 'acme/shop', token: 'tok', collaborators: ['alice'] })
    closers.push(() => gh.close())
    const ghConfig = withOwners(ticketConfig({ tracker: 'github', github: { repo: 'acme/shop', apiUrl: gh.url } }))
    await look(store, ghConfig, { GITHUB_TOKEN: 'tok' })
    expect(gh.issues[0]).toMatchObject({ assignees: ['alice'] })
    expect(gh.issues[0]!.labels).toEqual(['flakewatch', 'owner:acme/qa', 'owner:alice@acme.example'])

    const jira = await fakeJira({
      deployment: 'cloud',
      project: 'SHOP',
      token: 'tok',
      email: 'bot@acme.example',
      users: { 'alice@acme.example': '5b10ac8d82e05b22cc7d4ef5' },
    })
    closers.push(() => jira.close())
    const { store: s2 } = await tempStore()
    closers.push(() => s2.close())
    await seedFlaky(s2, 1, 'src/cart.test.ts')
    const jiraConfig = withOwners(ticketConfig({ tracker: 'jira', jira: { url: jira.url, project: 'SHOP' } }))
    await look(s2, jiraConfig, { FLAKEWATCH_JIRA_TOKEN: 'tok', FLAKEWATCH_JIRA_EMAIL: 'bot@acme.example' })
    expect(jira.issues[0]!.assignees).toEqual([{ accountId: '5b10ac8d82e05b22cc7d4ef5' }])
    expect(jira.violations).toEqual([])
    expect(gh.violations).toEqual([])
  })

  it('a dry run plans without recording or calling the tracker; a missing token names its variable', async () => {
    const fake = await fakeGithub({ repo: 'acme/shop', token: 'tok' })
    const { store } = await tempStore()
    closers.push(
      () => fake.close(),
      () => store.close(),
    )
    await seedFlaky(store)
    const config = ticketConfig({ tracker: 'github', github: { repo: 'acme/shop', apiUrl: fake.url } })
    const plan = await look(store, config, {}, noWait(), { dryRun: true })
    expect(plan.plan.actions).toEqual([
      { testId: 'unit::mod::flaky0', action: 'open', reason: expect.stringMatching(/^became flaky/) },
    ])
    expect(plan.sync).toBeNull()
    expect(await store.tickets().list()).toEqual([])
    expect(fake.hits).toHaveLength(0)
    await expect(look(store, config, {})).rejects.toThrow(/FLAKEWATCH_GITHUB_TOKEN \(or GITHUB_TOKEN\) is not set/)
  })
})
