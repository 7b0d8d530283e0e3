import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProjectEntry, createProjectsApp } from '../../src/server/projects.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config, id, NOW, READ_TOKEN, seed, seededApp, tempDir, type TestServer } from '../server/helpers.js'
import { call, httpClient } from './helpers.js'

const ALICE = 'alice-write-token-0123'
const CI = 'ci-write-token-0123456'

describe('MCP over Streamable HTTP at /mcp on serve', () => {
  let server: TestServer
  let url: string
  beforeAll(async () => {
    const c = config({ readToken: READ_TOKEN, writeToken: null, writeTokens: { alice: ALICE, ci: CI } })
    server = await seededApp({ config: c, analysisWorker: false, uploadWorkers: false })
    url = `${await server.app.listen({ host: '127.0.0.1', port: 0 })}/mcp`
  })
  afterAll(() => server.cleanup())

  it('lists every tool and the history resource template', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const tools = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(tools).toEqual([
      'explain_test',
      'list_tests',
      'quarantine_test',
      'release_test',
      'setup_plan',
      'triage_report',
    ])
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)
    expect(templates).toEqual(['flakewatch://tests/{test_id}/history'])
    await client.close()
  })

  it('refuses a client without a token, or with a wrong one, when reads need the read token', async () => {
    await expect(httpClient(url)).rejects.toThrow(/401|read token/)
    await expect(httpClient(url, 'not-a-token-at-all')).rejects.toThrow(/401|wrong token/)
  })

  it('list_tests gives the flaky and broken tests, most harmful first, with filters and paging', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const { json } = await call(client, 'list_tests')
    expect(json.tests.map((t: { test_id: string }) => t.test_id)).toEqual(
      expect.arrayContaining([id('flaky'), id('broken')]),
    )
    expect(json.tests.every((t: { verdict: string }) => ['flaky', 'broken'].includes(t.verdict))).toBe(true)
    const broken = await call(client, 'list_tests', { verdicts: ['broken'] })
    expect(broken.json.tests.map((t: { test_id: string }) => t.test_id)).toEqual([id('broken')])
    const page = await call(client, 'list_tests', { verdicts: ['healthy', 'flaky', 'broken'], limit: 1, offset: 1 })
    expect(page.json.tests).toHaveLength(1)
    expect(page.json.total).toBeGreaterThan(2)
    const none = await call(client, 'list_tests', { search: 'no-such-test' })
    expect(none.json).toMatchObject({ total: 0, tests: [] })
    await client.close()
  })

  it('explain_test gives verdict, evidence, failure modes with a sample message, owners and recent runs with links', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const { json } = await call(client, 'explain_test', { test_id: id('flaky') })
    expect(json.found).toBe(true)
    expect(json.verdict).toBe('flaky')
    expect(json.evidence.length).toBeGreaterThan(0)
    expect(json.failure_modes[0].sample_message).toMatch(/expected 1 to be 2|timeout/)
    expect(json.recent_runs[0]).toMatchObject({ run_id: 'r13', pipeline_url: 'https://ci.example.com/p/1013' })
    expect(json.dashboard_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/tests\/unit%3A%3Amod%3A%3Aflaky$/)
    const unknown = await call(client, 'explain_test', { test_id: 'unit::mod::flaki' })
    expect(unknown.json.found).toBe(false)
    expect(unknown.json.did_you_mean).toEqual([])
    await client.close()
  })

  it('refuses a write with the read token, and changes nothing', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const r = await call(client, 'quarantine_test', { test_id: id('flaky'), reason: 'agent thinks so' })
    expect(r.isError).toBe(true)
    expect(r.json.error.code).toBe('FW_AUTH')
    expect(await server.store.getQuarantine(id('flaky'))).toBeNull()
    const rel = await call(client, 'release_test', { test_id: id('flaky'), reason: 'x' })
    expect(rel.isError).toBe(true)
    await client.close()
  })

  it("quarantines and releases with a write token, audited under the token's name", async () => {
    const client = await httpClient(url, ALICE)
    const q = await call(client, 'quarantine_test', {
      test_id: id('flaky'),
      reason: 'flaky on windows, see the failure modes',
      expires_in_days: 7,
    })
    expect(q.isError).toBe(false)
    expect(q.json).toMatchObject({ quarantined: true, test_id: id('flaky'), actor: 'alice' })
    const record = await server.store.getQuarantine(id('flaky'))
    expect(record?.createdBy).toBe('alice')
    expect(Date.parse(record!.expiresAt!)).toBe(NOW + 7 * 86_400_000)
    const listed = await call(client, 'list_tests', { quarantined: true })
    expect(listed.json.tests.map((t: { test_id: string }) => t.test_id)).toEqual([id('flaky')])
    const r = await call(client, 'release_test', { test_id: id('flaky'), reason: 'fixed the race' })
    expect(r.json).toEqual({ released: true, test_id: id('flaky'), actor: 'alice' })
    const audit = await server.store.listAudit({ testId: id('flaky') })
    expect(audit.map((a) => [a.action, a.actor])).toEqual([
      ['release', 'alice'],
      ['quarantine', 'alice'],
    ])
    // The chain the audit verify command checks holds these lines too.
    const chain = await server.store.listAuditLog({ kind: 'quarantine', subject: id('flaky') })
    expect(chain.map((e) => e.actor)).toEqual(['alice', 'alice'])
    expect(chain.every((e) => /^[0-9a-f]{64}$/.test(e.hash))).toBe(true)
    await client.close()
  })

  it('triage_report classifies a report sent as content; reading a server file is refused', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const junit = `<testsuite name="mod" tests="3">
<testcase classname="mod" name="flaky"><failure message="timeout after 5000ms"/></testcase>
<testcase classname="mod" name="broken"><failure message="expected 1 to be 2"/></testcase>
<testcase classname="mod" name="brand new"><failure message="TypeError: x is undefined"/></testcase>
</testsuite>`
    const { json } = await call(client, 'triage_report', { content: junit, suite: 'unit' })
    const kinds = Object.fromEntries(json.listed.map((f: { test_id: string; kind: string }) => [f.test_id, f.kind]))
    expect(kinds).toEqual({
      [id('flaky')]: 'known_flaky',
      [id('broken')]: 'broken',
      [id('brand new')]: 'new_failure',
    })
    expect(json.counts).toMatchObject({ new_failure: 1, broken: 1, known_flaky: 1 })
    expect(json.listed[0].kind).toBe('new_failure')
    const path = await call(client, 'triage_report', { path: '/etc/passwd' })
    expect(path.isError).toBe(true)
    expect(path.json.error.message).toMatch(/reads no files/)
    const bad = await call(client, 'triage_report', { content: 'not a report' })
    expect(bad.isError).toBe(true)
    expect(bad.json.error.code).toBe('FW_REPORT_PARSE')
    await client.close()
  })

  it('setup_plan works from the files a client describes', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const { json } = await call(client, 'setup_plan', {
      files: [
        {
          path: 'package.json',
          content: JSON.stringify({ devDependencies: { vitest: '^4', '@playwright/test': '^1' } }),
        },
        { path: '.gitlab-ci.yml' },
        { path: 'src/cart.test.ts' },
      ],
    })
    expect(json.runners.map((r: { runner: string }) => r.runner)).toEqual(['vitest', 'playwright'])
    expect(json.ci).toEqual([{ ci: 'gitlab', evidence: '.gitlab-ci.yml' }])
    expect(json.steps[0].ci[0].lines).toContain(
      '    - npx flakewatch run --suite unit --report reports/flakewatch.json -- npx vitest run',
    )
    await client.close()
  })

  it('reads a test history resource', async () => {
    const client = await httpClient(url, READ_TOKEN)
    const uri = `flakewatch://tests/${encodeURIComponent(id('broken'))}/history`
    const res = await client.readResource({ uri })
    const body = JSON.parse((res.contents[0] as { text: string }).text)
    expect(body.test_id).toBe(id('broken'))
    expect(body.entries).toHaveLength(14)
    expect(body.entries.at(-1)).toMatchObject({ run_id: 'r13', status: 'failed' })
    await client.close()
  })

  it('answers GET with 405: the server is stateless', async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${READ_TOKEN}` } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })
})

describe('MCP on a multi-project server: the project scoping of the REST API', () => {
  const tmp = tempDir('fw-mcp-projects-')
  let app: Awaited<ReturnType<typeof createProjectsApp>>
  let base: string
  const SHOP_READ = 'shop-read-token-0123'
  const SHOP_WRITE = 'shop-write-token-0123'
  const BLOG_READ = 'blog-read-token-0123'
  beforeAll(async () => {
    const entries = []
    for (const [key, read, write] of [
      ['acme/shop', SHOP_READ, SHOP_WRITE],
      ['acme/blog', BLOG_READ, 'blog-write-token-0123'],
    ] as const) {
      const db = join(tmp.dir, `${key.replace('/', '-')}.db`)
      const store = await openSqliteStore(db)
      await seed(store, { suite: key === 'acme/shop' ? 'unit' : 'blog' })
      entries.push(
        await createProjectEntry({
          key,
          project: { db, readToken: read, writeTokens: { [`${key.split('/')[1]}-ci`]: write } },
          store,
          config: config(),
          app: { now: () => NOW, webRoot: null, analysisWorker: false, uploadWorkers: false },
        }),
      )
    }
    app = await createProjectsApp({ projects: entries, defaultProject: null, orgToken: null, bodyLimitMb: 10 })
    base = await app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => {
    await app.close()
    tmp.cleanup()
  })

  it("a project's token reaches its project's tests and no other project", async () => {
    const shop = await httpClient(`${base}/mcp?project=acme/shop`, SHOP_READ)
    const { json } = await call(shop, 'list_tests')
    expect(json.tests.every((t: { test_id: string }) => t.test_id.startsWith('unit::'))).toBe(true)
    expect(json.tests[0].test_id).toBeDefined()
    await shop.close()
    await expect(httpClient(`${base}/mcp?project=acme/blog`, SHOP_READ)).rejects.toThrow(/401|wrong token/)
    const blog = await httpClient(`${base}/mcp`, BLOG_READ, { 'x-flakewatch-project': 'acme/blog' })
    expect(
      (await call(blog, 'list_tests')).json.tests.every((t: { test_id: string }) => t.test_id.startsWith('blog::')),
    ).toBe(true)
    await blog.close()
  })

  it("writes with the project's write token, audited under its name; its dashboard links name the project", async () => {
    const shop = await httpClient(`${base}/mcp?project=acme/shop`, SHOP_WRITE)
    const q = await call(shop, 'quarantine_test', { test_id: id('flaky'), reason: 'agent: known flaky' })
    expect(q.json.actor).toBe('shop-ci')
    const e = await call(shop, 'explain_test', { test_id: id('flaky') })
    expect(e.json.quarantine).toMatchObject({ created_by: 'shop-ci', reason: 'agent: known flaky' })
    expect(e.json.dashboard_url).toMatch(/\?project=acme%2Fshop$/)
    await shop.close()
  })
})
