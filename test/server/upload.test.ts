import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { LeaderboardResponse, RunJson, UploadResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { auth, config, tempDir } from './helpers.js'

/** A JUnit report as jest-junit writes it: one flaky-looking failure, one pass. */
const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="2" failures="1" errors="0" time="1.234">
  <testsuite name="cart" errors="0" failures="1" skipped="0" timestamp="2026-03-20T10:00:00" time="1.2" tests="2">
    <testcase classname="cart adds items" name="cart adds items" time="0.4"></testcase>
    <testcase classname="cart applies coupon" name="cart applies coupon" time="0.8">
      <failure message="expected 90 to be 81">Error: expected 90 to be 81
    at Object.&lt;anonymous&gt; (src/cart.test.ts:21:5)</failure>
    </testcase>
  </testsuite>
</testsuites>
`

/** A CTRF report (JSON). */
const CTRF = JSON.stringify({
  results: {
    tool: { name: 'vitest' },
    summary: {
      tests: 1,
      passed: 1,
      failed: 0,
      pending: 0,
      skipped: 0,
      other: 0,
      start: 1773998400000,
      stop: 1773998401000,
    },
    tests: [{ name: 'login works', status: 'passed', duration: 12, filePath: 'src/login.test.ts' }],
  },
})

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

async function app(server: Parameters<typeof config>[0] = {}) {
  const tmp = tempDir()
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  const a = await createApp({ store, config: config(server), now: () => Date.UTC(2026, 2, 21), webRoot: null })
  cleanups.push(async () => {
    await a.close()
    await store.close()
    tmp.cleanup()
  })
  return { app: a, store }
}

const xml = { ...auth(), 'content-type': 'application/xml' }
const META = [
  'run_id=gl-1',
  'suite=unit',
  'branch=main',
  'revision=abc123',
  'pipeline_id=77',
  'pipeline_url=https%3A%2F%2Fci%2Fp%2F77',
  'env=os%3Dlinux',
  'env=browser%3Dchromium',
  'job_status=failed',
  'runner=r-9',
].join('&')

type Headers = Record<string, string>

/** POSTs a report, with the write token unless told otherwise. */
const upload = (a: Awaited<ReturnType<typeof app>>['app'], url: string, payload: string, headers: Headers = xml) =>
  a.inject({ method: 'POST', url, headers, payload })

describe('POST /api/v1/reports', () => {
  it('stores a raw XML report with its run metadata from the query, then reports duplicates', async () => {
    const { app: a } = await app()
    const res = await upload(a, `/api/v1/reports?${META}&name=junit.xml`, JUNIT)
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<UploadResponse>()).toEqual({
      ingested: [{ file: 'junit.xml', run_id: 'gl-1', tests: 2, results: 2, attempts: 2 }],
      duplicates: [],
      failed: [],
    })
    const run = (await a.inject({ method: 'GET', url: '/api/v1/runs/gl-1' })).json<RunJson>()
    expect(run).toMatchObject({
      suite: 'unit',
      branch: 'main',
      revision: 'abc123',
      pipeline_id: '77',
      pipeline_url: 'https://ci/p/77',
      env: { os: 'linux', browser: 'chromium' },
      job_status: 'failed',
      runner_id: 'r-9',
    })

    const again = await upload(a, `/api/v1/reports?${META}&name=junit.xml`, JUNIT)
    expect(again.statusCode).toBe(200)
    expect(again.json<UploadResponse>()).toEqual({
      ingested: [],
      duplicates: [{ file: 'junit.xml', run_id: 'gl-1' }],
      failed: [],
    })

    const replaced = await upload(a, `/api/v1/reports?${META}&replace=true`, JUNIT)
    expect(replaced.statusCode).toBe(201)
    expect(replaced.json<UploadResponse>().ingested).toHaveLength(1)
  })

  it('shows an upload in the next read (the cache is invalidated)', async () => {
    const { app: a } = await app()
    const before = (await a.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
    expect(before.total).toBe(0)
    await a.inject({ method: 'POST', url: `/api/v1/reports?${META}`, headers: xml, payload: JUNIT })
    const after = (await a.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
    expect(after.rows.map((r) => r.name).sort()).toEqual(['cart adds items', 'cart applies coupon'])
  })

  it('takes several files as multipart, with metadata as form fields', async () => {
    const { app: a } = await app()
    const boundary = '----fw-boundary'
    const part = (headers: string, body: string) => `--${boundary}\r\n${headers}\r\n\r\n${body}\r\n`
    const file = (name: string) => `Content-Disposition: form-data; name="report"; filename="${name}"`
    const payload =
      part('Content-Disposition: form-data; name="suite"', 'web') +
      part('Content-Disposition: form-data; name="env"', 'os=mac') +
      part(`${file('junit.xml')}\r\nContent-Type: application/xml`, JUNIT) +
      part(`${file('ctrf.json')}\r\nContent-Type: application/json`, CTRF) +
      `--${boundary}--\r\n`
    const res = await a.inject({
      method: 'POST',
      url: '/api/v1/reports?branch=dev',
      headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    })
    expect(res.statusCode, res.body).toBe(201)
    const body = res.json<UploadResponse>()
    expect(body.ingested.map((e) => e.file)).toEqual(['junit.xml', 'ctrf.json'])
    expect(body.failed).toEqual([])
    const runs = (await a.inject({ method: 'GET', url: '/api/v1/runs' })).json<{ runs: RunJson[] }>().runs
    expect(runs.every((r) => r.suite === 'web' && r.branch === 'dev' && r.env.os === 'mac')).toBe(true)
  })

  it('reports a broken report as 422 with the summary, and stores nothing of it', async () => {
    const { app: a, store } = await app()
    const res = await upload(a, '/api/v1/reports?suite=unit&name=bad.xml', '<testsuite><testcase name="x">')
    expect(res.statusCode).toBe(422)
    const body = res.json<UploadResponse & { error: { code: string; message: string } }>()
    expect(body.error.code).toBe('FW_REPORT_PARSE')
    expect(body.failed[0]!.file).toBe('bad.xml')
    expect((await store.stats()).results).toBe(0)
  })

  it('needs the write token, and checks it before reading the body', async () => {
    const { app: a } = await app()
    const none = await upload(a, '/api/v1/reports', JUNIT, { 'content-type': 'application/xml' })
    expect(none.statusCode).toBe(401)
    const big = await a.inject({
      method: 'POST',
      url: '/api/v1/reports',
      headers: { 'content-type': 'application/xml', authorization: 'Bearer wrong-token-123' },
      payload: 'x'.repeat(2 * 1024 * 1024),
    })
    expect(big.statusCode).toBe(401)
  })

  it('validates metadata, format and content type, and limits the size', async () => {
    const { app: a } = await app({ bodyLimitMb: 1 })
    const cases: [string, Record<string, string>, string, number, RegExp][] = [
      ['/api/v1/reports?env=novalue', xml, JUNIT, 400, /query\.env/],
      ['/api/v1/reports?format=word', xml, JUNIT, 400, /query\.format: expected one of junit/],
      ['/api/v1/reports?run_status=done', xml, JUNIT, 400, /query\.run_status/],
      ['/api/v1/reports', xml, '', 400, /no report/],
      ['/api/v1/reports', { ...auth(), 'content-type': 'text/html' }, JUNIT, 415, /./],
      ['/api/v1/reports', xml, `<x>${'a'.repeat(1024 * 1024)}</x>`, 413, /./],
    ]
    for (const [url, headers, payload, status, message] of cases) {
      const res = await a.inject({ method: 'POST', url, headers, payload })
      expect(res.statusCode, `${url} ${res.body}`).toBe(status)
      expect(res.json<{ error: { message: string } }>().error.message).toMatch(message)
    }
  })

  it('takes an explicit format', async () => {
    const { app: a } = await app()
    const headers = { ...auth(), 'content-type': 'application/octet-stream' }
    const res = await upload(a, '/api/v1/reports?format=ctrf&suite=unit', CTRF, headers)
    expect(res.statusCode, res.body).toBe(201)
  })
})
