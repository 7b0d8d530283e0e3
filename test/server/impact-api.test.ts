import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ImpactResponse } from '../../src/server/api-types.js'
import { id, seededApp, type TestServer } from './helpers.js'

let s: TestServer
beforeAll(async () => {
  s = await seededApp()
})
afterAll(() => s.cleanup())

async function impact(query = ''): Promise<ImpactResponse> {
  const res = await s.app.inject({ method: 'GET', url: `/api/v1/impact${query}` })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<ImpactResponse>()
}

describe('GET /api/v1/impact', () => {
  it('charges the flaky test its failed attempts: five retried passes (12 ms each) and five failures (10 ms each)', async () => {
    const body = await impact()
    const flaky = body.tests.find((t) => t.test_id === id('flaky'))!
    expect(flaky).toMatchObject({ time_lost_ms: 110, failures: 5, failed_attempts: 10, passes_on_retry: 5, runs: 14 })
    // The broken test fails for a real reason: it costs nothing here.
    expect(body.tests.map((t) => t.test_id)).not.toContain(id('broken'))
    expect(body.totals.time_lost_ms).toBe(body.tests.reduce((n, t) => n + t.time_lost_ms, 0))
    expect(body.totals.runs).toBe(14)
  })

  it('sums the weeks to the totals, counts runs per week, and sees the broken test broken in its last week', async () => {
    const body = await impact()
    expect(body.weeks.length).toBeGreaterThanOrEqual(2)
    for (const w of body.weeks) expect(w.week).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(new Date(`${body.weeks[0]!.week}T00:00:00Z`).getUTCDay()).toBe(1)
    expect(body.weeks.reduce((n, w) => n + w.time_lost_ms, 0)).toBe(body.totals.time_lost_ms)
    expect(body.weeks.reduce((n, w) => n + w.runs, 0)).toBe(14)
    expect(body.weeks.at(-1)!.broken_tests).toBe(1)
    expect(body.weeks.some((w) => w.flaky_tests > 0)).toBe(true)
  })

  it('groups by suite and by owner (without CODEOWNERS every test is unowned) and defines its figures', async () => {
    const body = await impact()
    expect(body.suites.map((g) => g.suite)).toEqual(['unit'])
    expect(body.suites[0]!.time_lost_ms).toBe(body.totals.time_lost_ms)
    expect(body.owners).toHaveLength(1)
    expect(body.owners[0]).toMatchObject({ owner: null, tests: body.totals.tests, broken: 1 })
    expect(body.definition.broken_tests).toContain('3 or more')
    expect(body.definition.time_lost).toMatch(/failed or errored attempt/)
  })

  it('narrows to a selection, bounds its limit, and refuses a bad one', async () => {
    expect((await impact('?suite=none')).weeks).toEqual([])
    expect((await impact('?limit=1')).tests).toHaveLength(1)
    const bad = await s.app.inject({ method: 'GET', url: '/api/v1/impact?limit=100000' })
    expect(bad.statusCode).toBe(400)
  })
})
