import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_MAX_ANSWER_CHARS, boundedJson } from '../../src/mcp/bounded.js'
import { MCP_TRIAGE_MAX_LISTED } from '../../src/mcp/triage.js'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { buildScaleStore, scaleTestId } from '../helpers/scale-store.js'
import { config, READ_TOKEN, tempDir, WRITE_TOKEN } from '../server/helpers.js'
import { call, httpClient } from './helpers.js'

describe('boundedJson', () => {
  it('keeps a small answer as it is', () => {
    expect(boundedJson({ a: [1, 2] }, 100)).toBe('{"a":[1,2]}')
  })
  it('halves the longest list until the answer fits, and says so', () => {
    const text = boundedJson({ tests: Array.from({ length: 1000 }, (_, i) => ({ id: `t${i}` })), total: 1000 }, 2000)
    expect(text.length).toBeLessThanOrEqual(2000)
    const json = JSON.parse(text)
    expect(json.truncated).toBe(true)
    expect(json.total).toBe(1000)
    expect(json.tests.length + json.omitted_items).toBe(1000)
  })
})

/** 100,000 tests over six runs: every 50th flaky, every 97th broken (test/helpers/scale-store.ts). */
describe('every MCP answer is bounded on a 100k-test store', () => {
  const tmp = tempDir('fw-mcp-scale-')
  let store: SqliteStore
  let app: Awaited<ReturnType<typeof createApp>>
  let client: Client
  let writer: Client
  beforeAll(async () => {
    store = await openSqliteStore(join(tmp.dir, 'fw.db'))
    await buildScaleStore(store, { tests: 100_000, runs: 6 })
    const c = config({ readToken: READ_TOKEN })
    // No sweep: the scale store's 100,000 rows are all due, and this test is about the size of answers, not
    // about how a backlog shares the thread (analysis-sweep.ts).
    app = await createApp({
      store,
      config: c,
      webRoot: null,
      analysisWorker: false,
      uploadWorkers: false,
      analysisSweep: false,
    })
    const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`
    client = await httpClient(url, READ_TOKEN)
    writer = await httpClient(url, WRITE_TOKEN)
  }, 240_000)
  afterAll(async () => {
    await client?.close()
    await writer?.close()
    await app?.close()
    await store?.close()
    tmp.cleanup()
  })

  it('list_tests: a page of the thousands of flaky and broken tests, the total counted', async () => {
    const { json, text } = await call(client, 'list_tests', { limit: 100 })
    expect(text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    expect(json.tests).toHaveLength(100)
    expect(json.total).toBeGreaterThan(1000)
  }, 120_000)

  it('list_tests with long quarantine reasons: cut to the bound, with what was left out', async () => {
    const reason = `long reason ${'x'.repeat(3000)}`
    for (let i = 0; i < 100; i++) {
      await writer.callTool({
        name: 'quarantine_test',
        arguments: { test_id: scaleTestId(i * 50), reason: reason.slice(0, 2000) },
      })
    }
    const { json, text } = await call(client, 'list_tests', { quarantined: true, limit: 100 })
    expect(text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    expect(json.truncated).toBe(true)
    expect(json.total).toBe(100)
    expect(json.tests.length + json.omitted_items).toBe(100)
  }, 120_000)

  it('explain_test, the history resource and a triage of 5,000 failures stay within the bound', async () => {
    const e = await call(client, 'explain_test', { test_id: scaleTestId(150) })
    expect(e.json.found).toBe(true)
    expect(e.text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    const res = await client.readResource({ uri: `flakewatch://tests/${encodeURIComponent(scaleTestId(150))}/history` })
    expect((res.contents[0] as { text: string }).text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    const cases = Array.from(
      { length: 5000 },
      (_, i) =>
        `<testcase classname="src/m${i % 1000}.test.ts" name="case ${i}"><failure message="${'boom '.repeat(100)}"/></testcase>`,
    )
    const junit = `<testsuite name="x" tests="5000">${cases.join('')}</testsuite>`
    const t = await call(client, 'triage_report', { content: junit, suite: 'scale' })
    expect(t.text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    expect(t.json.failures).toBe(5000)
    expect(t.json.listed.length).toBeLessThanOrEqual(MCP_TRIAGE_MAX_LISTED)
    expect(t.json.counts.known_flaky + t.json.counts.broken + t.json.counts.new_failure).toBe(5000)
  }, 120_000)

  it('setup_plan over 5,000 files', async () => {
    const files = Array.from({ length: 5000 }, (_, i) => ({
      path: `pkg${i}/package.json`,
      content: '{"devDependencies":{"vitest":"1"}}',
    }))
    const p = await call(client, 'setup_plan', { files })
    expect(p.text.length).toBeLessThanOrEqual(MCP_MAX_ANSWER_CHARS)
    expect(p.json.runners).toEqual([{ runner: 'vitest', evidence: 'pkg0/package.json: vitest' }])
  }, 60_000)
})
