import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PolicyPreviewResponse, PolicyResponse } from '../../src/server/api-types.js'
import { auth, config, id, READ_TOKEN, seededApp, type TestServer } from './helpers.js'

describe('policy preview on the API', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await seededApp({ config: config({ readToken: READ_TOKEN }), analysisWorker: false })
  })
  afterAll(() => server.cleanup())

  const preview = (body: unknown, token: string | null = READ_TOKEN) =>
    server.app.inject({
      method: 'POST',
      url: '/api/v1/policy/preview',
      headers: token ? auth(token) : {},
      payload: body as object,
    })

  it('GET /policy: the policy in force, with the engine defaults filled in', async () => {
    const res = await server.app.inject({ url: '/api/v1/policy', headers: auth(READ_TOKEN) })
    expect(res.statusCode).toBe(200)
    const settings = new Map(res.json<PolicyResponse>().settings.map((s) => [s.key, s.value]))
    expect(settings.get('quarantine.minScore')).toBe(0.6)
    expect(settings.get('quarantine.releaseAfterPasses')).toBe(10)
    expect(settings.get('analysis.verdict.brokenMinConsecutive')).toBe(3)
    expect(settings.has('quarantine.file')).toBe(false)
  })

  it('POST /policy/preview: the tests a candidate changes and why, with the read token only', async () => {
    const res = await preview({ analysis: { verdict: { brokenMinConsecutive: 8 } } })
    expect(res.statusCode).toBe(200)
    const p = res.json<PolicyPreviewResponse>()
    expect(p.settings).toEqual([{ key: 'analysis.verdict.brokenMinConsecutive', current: 3, candidate: 8 }])
    const broken = p.changes.find((c) => c.test_id === id('broken'))!
    expect(broken.current.verdict).toBe('broken')
    expect(broken.candidate.verdict).not.toBe('broken')
    expect(broken.why[0]).toMatch(/^verdict broken → /)
    // Nothing is saved: the policy in force is unchanged.
    const after = await server.app.inject({ url: '/api/v1/policy', headers: auth(READ_TOKEN) })
    const kept = after.json<PolicyResponse>().settings.find((s) => s.key === 'analysis.verdict.brokenMinConsecutive')
    expect(kept?.value).toBe(3)
  })

  it('needs the read token, and refuses a candidate with an unknown key (400 naming it)', async () => {
    expect((await preview({}, null)).statusCode).toBe(401)
    const bad = await preview({ quarantine: { minScor: 0.5 } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json<{ error: { message: string } }>().error.message).toMatch(/minScor/)
    const notPolicy = await preview({ db: 'x.db' })
    expect(notPolicy.statusCode).toBe(400)
  })
})
