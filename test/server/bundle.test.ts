import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleSchemaErrors } from '../../src/export/bundle-schema.js'
import { seededApp, type TestServer } from './helpers.js'

let s: TestServer
beforeAll(async () => {
  s = await seededApp()
})
afterAll(() => s.cleanup())

describe('GET /api/v1/bundle', () => {
  it('streams a valid GitLabViz bundle as a download', async () => {
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/bundle?days=30&context_keys=os' })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="flake-history-\d{4}-\d{2}-\d{2}\.json"$/)
    expect(res.headers['content-security-policy']).toContain("default-src 'self'")
    const bundle = res.json<{ schema_version: number; runs: unknown[]; tests: unknown[] }>()
    expect(bundleSchemaErrors(bundle)).toEqual([])
    expect(bundle.schema_version).toBe(1)
    expect(bundle.runs).toHaveLength(14)
    expect(bundle.tests).toHaveLength(6)
  })

  it('refuses bad options before the first byte', async () => {
    for (const q of ['days=0', 'classification=maybe', 'context_keys=run_id']) {
      const res = await s.app.inject({ method: 'GET', url: `/api/v1/bundle?${q}` })
      expect(res.statusCode, q).toBe(400)
      expect(res.json<{ error: { code: string } }>().error.code).toBe('FW_INPUT')
    }
  })
})
