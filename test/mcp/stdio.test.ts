import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { CLI, testdir } from '../helpers/run-cli.js'
import { id, seed } from '../server/helpers.js'
import { call } from './helpers.js'

/** `flakewatch mcp` from the built CLI, started by the SDK's own stdio client as an agent would start it. */
async function stdioClient(cwd: string, args: string[] = [], env: Record<string, string> = {}) {
  const client = new Client({ name: 'flakewatch-test', version: '1.0.0' })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    cwd,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', FLAKEWATCH_ACTOR: 'ana', ...env },
    stderr: 'pipe',
  })
  await client.connect(transport)
  return client
}

describe('flakewatch mcp over stdio, on the local store', () => {
  let dir: string
  let client: Client
  beforeAll(async () => {
    dir = testdir(
      {
        'package.json': JSON.stringify({ devDependencies: { jest: '^29' } }),
        '.github/workflows/test.yml': 'on: push\n',
        'reports/junit.xml': `<testsuite name="mod" tests="2">
<testcase classname="mod" name="flaky"><failure message="timeout after 5000ms"/></testcase>
<testcase classname="mod" name="stable"><failure message="AssertionError: boom"/></testcase>
</testsuite>`,
      },
      'mcp-stdio-',
    )
    const store = await openSqliteStore(join(dir, '.flakewatch.db'))
    await seed(store)
    await store.close()
    client = await stdioClient(dir)
  })
  afterAll(async () => {
    await client?.close()
  })

  it('serves every tool', async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(tools).toEqual([
      'explain_test',
      'list_tests',
      'quarantine_test',
      'release_test',
      'setup_plan',
      'triage_report',
    ])
    const quarantine = (await client.listTools()).tools.find((t) => t.name === 'quarantine_test')!
    expect(quarantine.annotations?.readOnlyHint).toBe(false)
  })

  it('lists and explains tests from the store in the working directory', async () => {
    const list = await call(client, 'list_tests', { verdicts: ['broken'] })
    expect(list.json.tests.map((t: { test_id: string }) => t.test_id)).toEqual([id('broken')])
    const e = await call(client, 'explain_test', { test_id: id('broken') })
    expect(e.json).toMatchObject({ found: true, verdict: 'broken' })
    // No serverUrl configured, no server: no dashboard link is made up.
    expect(e.json.dashboard_url).toBeNull()
  })

  it('triages a report file by path, relative to the working directory', async () => {
    const { json } = await call(client, 'triage_report', { path: 'reports/junit.xml', suite: 'unit' })
    expect(json.counts).toMatchObject({ known_flaky: 1, new_failure: 1 })
    expect(json.listed.map((f: { test_id: string; kind: string }) => [f.test_id, f.kind])).toEqual([
      [id('stable'), 'new_failure'],
      [id('flaky'), 'known_flaky'],
    ])
    const missing = await call(client, 'triage_report', { path: 'reports/none.xml' })
    expect(missing.isError).toBe(true)
  })

  it('plans the set-up of the repository it runs in', async () => {
    const { json } = await call(client, 'setup_plan')
    expect(json.runners).toEqual([{ runner: 'jest', evidence: 'package.json: jest' }])
    expect(json.ci).toEqual([{ ci: 'github', evidence: '.github/workflows/test.yml' }])
    expect(json.steps[0].reporter).toEqual({
      file: 'jest.config.js',
      add_line: "reporters: ['default', ['flakewatch/jest', { outputFile: 'reports/flakewatch.json' }]],",
    })
  })

  it('quarantines and releases as the local user, audited', async () => {
    const q = await call(client, 'quarantine_test', { test_id: id('flaky'), reason: 'seen by an agent' })
    expect(q.json).toMatchObject({ quarantined: true, actor: 'ana' })
    const listed = await call(client, 'list_tests', { quarantined: true })
    expect(listed.json.tests.map((t: { test_id: string }) => t.test_id)).toEqual([id('flaky')])
    const r = await call(client, 'release_test', { test_id: id('flaky'), reason: 'done' })
    expect(r.json.released).toBe(true)
    const again = await call(client, 'release_test', { test_id: id('flaky'), reason: 'done' })
    expect(again.json).toMatchObject({ released: false })
    const store = await openSqliteStore(join(dir, '.flakewatch.db'))
    const audit = await store.listAudit({ testId: id('flaky') })
    await store.close()
    expect(audit.map((a) => [a.action, a.actor])).toEqual([
      ['release', 'ana'],
      ['quarantine', 'ana'],
    ])
  })

  it('reads a history resource', async () => {
    const res = await client.readResource({ uri: `flakewatch://tests/${encodeURIComponent(id('flaky'))}/history` })
    const body = JSON.parse((res.contents[0] as { text: string }).text)
    expect(body.entries).toHaveLength(14)
  })

  it('--read-only refuses the tools that write', async () => {
    const ro = await stdioClient(dir, ['--read-only'])
    const r = await call(ro, 'quarantine_test', { test_id: id('flaky'), reason: 'x' })
    expect(r.isError).toBe(true)
    expect(r.json.error.code).toBe('FW_AUTH')
    await ro.close()
  })
})
