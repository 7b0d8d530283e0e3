import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ingestFiles } from '../../src/pipeline/ingest-files.js'
import type { RunJson } from '../../src/server/api-types.js'
import { seededApp, type TestServer } from './helpers.js'

let s: TestServer
beforeAll(async () => {
  s = await seededApp()
})
afterAll(() => s.cleanup())

describe('GET /runs/:runId', () => {
  it('gives the run’s package timings from go test -json, slowest first; none for a run whose report had none', async () => {
    const report = join(import.meta.dirname, '../fixtures/reports/go-json/go-packages.json')
    const summary = await ingestFiles({ store: s.store, inputs: [report], context: { suite: 'go', runId: 'go-7' } })
    expect(summary.failed).toEqual([])
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/runs/go-7' })
    expect(res.statusCode).toBe(200)
    const run = res.json<RunJson>()
    expect(run.timings).toEqual([
      { name: 'example.com/shop/price', duration_ms: 36, status: 'failed' },
      { name: 'example.com/shop/cart', duration_ms: 5, status: 'passed' },
      { name: 'example.com/shop/docs', duration_ms: 0, status: 'skipped' },
    ])
    expect(run.counts).toMatchObject({ total: 4, failed: 1 })
    expect((await s.app.inject({ method: 'GET', url: '/api/v1/runs/r06' })).json<RunJson>().timings).toEqual([])
  })
})
