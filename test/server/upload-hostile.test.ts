import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { UploadResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { auth, config, tempDir } from './helpers.js'

/** The hostile reports of the CLI's tests (test/e2e/cli-ingest-hostile.test.ts), uploaded to the server instead. */

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

async function app() {
  const tmp = tempDir('fw-hostile-')
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  const a = await createApp({ store, config: config(), webRoot: null })
  cleanups.push(async () => {
    await a.close()
    await store.close()
    tmp.cleanup()
  })
  return { app: a, store }
}

const post = (a: Awaited<ReturnType<typeof app>>['app'], query: string, type: string, payload: string) =>
  a.inject({ method: 'POST', url: `/api/v1/reports?${query}`, headers: { ...auth(), 'content-type': type }, payload })

const junit = (suiteAttrs: string, cases: string) =>
  `<?xml version="1.0"?><testsuite name="s" ${suiteAttrs}>${cases}</testsuite>`

describe('POST /api/v1/reports with hostile reports', { timeout: 120_000 }, () => {
  it('refuses a billion CTRF retries with 422 naming the field and the limit; nothing is stored', async () => {
    const { app: a, store } = await app()
    const ctrf = JSON.stringify({
      results: { tool: { name: 'x' }, tests: [{ name: 't', status: 'passed', duration: 1, retries: 1_000_000_000 }] },
    })
    const res = await post(a, 'name=ctrf.json', 'application/json', ctrf)
    expect(res.statusCode).toBe(422)
    const body = res.json<UploadResponse & { error: { message: string } }>()
    expect(body.failed[0]!.error).toMatch(/retries \+ 1 is 1,000,000,001, over the limit of 100/)
    expect(body.ingested).toEqual([])
    expect((await store.stats()).runs).toBe(0)
  })

  it('refuses a billion Jest invocations with 422', async () => {
    const { app: a, store } = await app()
    const jest = JSON.stringify({
      numTotalTests: 1,
      testResults: [{ name: 'a.test.js', assertionResults: [{ title: 't', status: 'passed', invocations: 1e9 }] }],
    })
    const res = await post(a, 'name=jest.json', 'application/json', jest)
    expect(res.statusCode).toBe(422)
    expect(res.json<UploadResponse>().failed[0]!.error).toMatch(/invocations is 1,000,000,000, over the limit/)
    expect((await store.stats()).runs).toBe(0)
  })

  it('stores a run dated 9999-12-31 at the ingest time, and says so in the response', async () => {
    const { app: a, store } = await app()
    const before = Date.now()
    const res = await post(
      a,
      'name=future.xml&suite=unit',
      'application/xml',
      junit('timestamp="9999-12-31T00:00:00"', '<testcase classname="c" name="a"/>'),
    )
    expect(res.statusCode, res.body).toBe(201)
    const entry = res.json<UploadResponse>().ingested[0]!
    expect(entry.warnings?.join('\n')).toMatch(/startedAt 9999-12-31T00:00:00\.000Z is more than a day after ingest/)
    const run = (await store.getRun(entry.run_id))!
    expect(Date.parse(run.startedAt!)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(run.startedAt!)).toBeLessThanOrEqual(Date.now())
  })

  it('stores untrusted durations (1e308, 0x10, negative, NaN) as unknown, with a warning in the response', async () => {
    const { app: a, store } = await app()
    const cases = ['1e308', '0x10', '-1', 'NaN', '2.5']
      .map((t, i) => `<testcase classname="c" name="t${i}" time="${t}"/>`)
      .join('')
    const res = await post(a, 'name=times.xml&suite=unit', 'application/xml', junit('', cases))
    expect(res.statusCode, res.body).toBe(201)
    const entry = res.json<UploadResponse>().ingested[0]!
    expect(entry.warnings?.join('\n')).toMatch(/4 duration\(s\) not a finite non-negative decimal number/)
    for (const [name, ms] of [
      ['t0', null],
      ['t1', null],
      ['t2', null],
      ['t3', null],
      ['t4', 2500],
    ] as const) {
      expect((await store.getTestHistory(`unit::c::${name}`))!.entries[0]!.durationMs, name).toBe(ms)
    }
  })

  it('answers a trusted report without a warnings field', async () => {
    const { app: a } = await app()
    const res = await post(
      a,
      'name=ok.xml&suite=unit',
      'application/xml',
      junit('timestamp="2026-03-01T10:00:00Z"', '<testcase classname="c" name="a" time="0.5"/>'),
    )
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<UploadResponse>().ingested[0]).not.toHaveProperty('warnings')
  })
})
