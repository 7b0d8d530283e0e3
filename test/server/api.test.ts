import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  AttemptsResponse,
  AuditResponse,
  FacetsResponse,
  HeatmapResponse,
  HistoryResponse,
  KioskResponse,
  LeaderboardResponse,
  QuarantineJson,
  QuarantineListResponse,
  RunJson,
  RunsResponse,
  TestDetailResponse,
  TestsResponse,
  TrendsResponse,
} from '../../src/server/api-types.js'
import { auth, config, enc, id, NOW, ODD_NAME, RUNS, seededApp, XSS_NAME, type TestServer } from './helpers.js'

let s: TestServer
beforeAll(async () => {
  s = await seededApp()
})
afterAll(() => s.cleanup())

async function get<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await s.app.inject({ method: 'GET', url, headers })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<T>()
}

describe('GET /api/v1/leaderboard', () => {
  it('lists the most flaky first, with GitLabViz columns and flakewatch verdicts', async () => {
    const d = await get<LeaderboardResponse>('/api/v1/leaderboard')
    expect(d.runs).toBe(RUNS)
    expect(d.total).toBe(6)
    expect(d.summary).toMatchObject({ tests: 6, flaky: 2, broken: 1 })
    expect(d.rows.map((r) => r.verdict).slice(0, 3)).toEqual(['flaky', 'flaky', 'broken'])
    const top = d.rows[0]!
    expect(top).toMatchObject({ test_id: id('flaky'), name: 'flaky', suite: 'unit', runs: RUNS, quarantined: false })
    expect(top.evidence.map((e) => e.kind)).toContain('pass_on_retry')
    expect(top.pass_rate_class).toBeTypeOf('string')
    const broken = d.rows.find((r) => r.name === 'broken')!
    expect(broken).toMatchObject({ verdict: 'broken', last_status: 'failed' })
  })

  it('sorts, pages, searches and filters by verdict', async () => {
    const byName = await get<LeaderboardResponse>('/api/v1/leaderboard?sort=name&limit=2')
    expect(byName.rows.map((r) => r.name)).toEqual([XSS_NAME, 'broken'])
    const page2 = await get<LeaderboardResponse>('/api/v1/leaderboard?sort=name&limit=2&offset=2')
    expect(page2.rows.map((r) => r.name)).toEqual(['flaky', 'late'])
    const desc = await get<LeaderboardResponse>('/api/v1/leaderboard?sort=pass_rate&order=asc')
    expect(desc.rows[0]!.pass_rate).toBeLessThanOrEqual(desc.rows.at(-1)!.pass_rate!)
    const search = await get<LeaderboardResponse>('/api/v1/leaderboard?search=FLAK')
    expect(search.rows.map((r) => r.name)).toEqual(['flaky'])
    const broken = await get<LeaderboardResponse>('/api/v1/leaderboard?verdict=broken')
    expect(broken.rows.map((r) => r.name)).toEqual(['broken'])
    expect(broken.summary.tests).toBe(1)
  })

  it('rejects bad parameters with a 400 naming them', async () => {
    const bad = ['limit=0', 'limit=x', 'sort=nope', 'verdict=meh', 'order=up', 'last=0', 'env=novalue', 'rev=abc']
    for (const q of bad) {
      const res = await s.app.inject({ method: 'GET', url: `/api/v1/leaderboard?${q}` })
      expect(res.statusCode, q).toBe(400)
      const body = res.json<{ error: { code: string; message: string } }>()
      expect(body.error.code).toBe('FW_INPUT')
      expect(body.error.message).toContain(`query.${q.split('=')[0]}`)
    }
  })
})

describe('run selection', () => {
  it('takes the newest N runs', async () => {
    const d = await get<HeatmapResponse>('/api/v1/heatmap?last=4')
    expect(d.runs.map((r) => r.run_id)).toEqual(['r10', 'r11', 'r12', 'r13'])
  })

  it('filters by env facet and branch', async () => {
    const linux = await get<HeatmapResponse>('/api/v1/heatmap?env=os%3Dlinux')
    expect(linux.runs).toHaveLength(7)
    expect(linux.runs.every((r) => r.env.os === 'linux')).toBe(true)
    const none = await get<LeaderboardResponse>('/api/v1/leaderboard?branch=nope')
    expect(none.total).toBe(0)
  })

  it('takes a revision range in time order, prefixes allowed, either way round', async () => {
    const d = await get<HeatmapResponse>('/api/v1/heatmap?rev=rev02...rev05abc')
    expect(d.runs.map((r) => r.run_id)).toEqual(['r02', 'r03', 'r04', 'r05'])
    const reversed = await get<HeatmapResponse>('/api/v1/heatmap?rev=rev05..rev02')
    expect(reversed.runs.map((r) => r.run_id)).toEqual(['r02', 'r03', 'r04', 'r05'])
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/heatmap?rev=rev02...ffff' })
    expect(res.statusCode).toBe(400)
    expect(res.json<{ error: { message: string } }>().error.message).toContain('ffff')
  })
})

describe('GET /api/v1/heatmap', () => {
  it('returns runs oldest first and one packed row of cells per test', async () => {
    const d = await get<HeatmapResponse>('/api/v1/heatmap')
    expect(d.runs).toHaveLength(RUNS)
    expect(d.runs[0]!.run_id).toBe('r00')
    expect(d.runs.at(-1)!.run_id).toBe('r13')
    expect(d.cells).toHaveLength(d.tests.length)
    for (const row of d.cells) expect(row).toMatch(new RegExp(`^[PRFES.]{${RUNS}}$`))
    const flaky = d.cells[d.tests.findIndex((t) => t.name === 'flaky')]!
    expect(flaky[0]).toBe('R')
    expect(flaky[1]).toBe('F')
    const late = d.cells[d.tests.findIndex((t) => t.name === 'late')]!
    expect(late[6]).toBe('.')
    expect(d.runs[6]!.status).toBe('interrupted')
    // The API reports stored URLs as they are; the dashboard links only http(s) ones.
    expect(d.runs[3]!.artifacts_url).toBe('javascript:alert(1)')
    expect(d.runs.every((r) => !r.artifacts_expired)).toBe(true)
  })

  it('marks runs older than the artifact retention as expired', async () => {
    const t = await seededApp({ now: () => NOW + 25 * 86_400_000, artifactExpiryDays: 30 })
    try {
      const d = (await t.app.inject({ method: 'GET', url: '/api/v1/heatmap?last=14' })).json<HeatmapResponse>()
      expect(d.artifact_expiry_days).toBe(30)
      const expired = d.runs.filter((r) => r.artifacts_expired).map((r) => r.run_id)
      expect(expired).toEqual(['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07', 'r08'])
    } finally {
      await t.cleanup()
    }
  })

  it('without a clock, ends the analysis at the newest run but judges artifacts by the wall clock', async () => {
    // The seeded runs are from March 2026: long before the wall clock of any test run.
    const t = await seededApp({ now: undefined })
    try {
      const board = (await t.app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
      expect(board.summary).toMatchObject({ tests: 6, flaky: 2, broken: 1 })
      const heat = (await t.app.inject({ method: 'GET', url: '/api/v1/heatmap' })).json<HeatmapResponse>()
      expect(heat.runs).toHaveLength(RUNS)
      expect(heat.runs.every((r) => r.artifacts_expired)).toBe(true)
    } finally {
      await t.cleanup()
    }
  })

  it('pages tests, most flaky first', async () => {
    const d = await get<HeatmapResponse>('/api/v1/heatmap?limit=2&offset=1')
    expect(d.total_tests).toBe(6)
    expect(d.tests).toHaveLength(2)
    expect(d.cells).toHaveLength(2)
  })
})

describe('tests', () => {
  it('lists and searches tests', async () => {
    const d = await get<TestsResponse>('/api/v1/tests?search=ODD')
    expect(d.tests.map((t) => t.name)).toEqual([ODD_NAME])
  })

  it('gives one test with its analysis, quarantine and audit, whatever its id holds', async () => {
    const d = await get<TestDetailResponse>(`/api/v1/tests/${enc(id(ODD_NAME))}`)
    expect(d.test.test_id).toBe(id(ODD_NAME))
    expect(d.analysis).toMatchObject({ test_id: id(ODD_NAME), verdict: 'healthy', runs: RUNS })
    expect(d.quarantine).toBeNull()
    expect(d.audit).toEqual([])
    const flaky = await get<TestDetailResponse>(`/api/v1/tests/${enc(id('flaky'))}`)
    expect(flaky.analysis!.failure_modes[0]!.example).toContain('expected 1 to be 2')
    expect(Object.keys(flaky.analysis!.components)).toHaveLength(6)
  })

  it('404s an unknown test', async () => {
    const res = await s.app.inject({ method: 'GET', url: `/api/v1/tests/${enc('unit::mod::nope')}` })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: { code: 'FW_NOT_FOUND', message: 'no test "unit::mod::nope"' } })
  })

  it('gives the history oldest first, with attempts on demand', async () => {
    const plain = await get<HistoryResponse>(`/api/v1/tests/${enc(id('flaky'))}/history?limit=3`)
    expect(plain.entries.map((e) => e.run_id)).toEqual(['r11', 'r12', 'r13'])
    expect(plain.entries[0]!.attempt_details).toBeUndefined()
    const full = await get<HistoryResponse>(`/api/v1/tests/${enc(id('flaky'))}/history?limit=3&attempts=true`)
    const retried = full.entries.find((e) => e.run_id === 'r12')!
    expect(retried.flaky_on_retry).toBe(true)
    expect(retried.attempt_details!.map((a) => a.status)).toEqual(['failed', 'passed'])
    const one = await get<AttemptsResponse>(`/api/v1/tests/${enc(id('flaky'))}/runs/r12/attempts`)
    expect(one.attempts[0]).toMatchObject({ retry: 0, status: 'failed', message: 'timeout after 5000ms' })
  })
})

describe('runs, facets, trends, kiosk', () => {
  it('lists runs newest first, with their counts', async () => {
    const d = await get<RunsResponse>('/api/v1/runs?limit=2')
    expect(d.runs.map((r) => r.run_id)).toEqual(['r13', 'r12'])
    expect(d.runs[0]!.counts).toEqual({ total: 6, passed: 3, failed: 3, skipped: 0, flaky: 0 })
    const one = await get<RunJson>('/api/v1/runs/r06')
    expect(one.status).toBe('interrupted')
    expect(one.counts).toEqual({ total: 5, passed: 5, failed: 0, skipped: 0, flaky: 1 })
    expect((await s.app.inject({ method: 'GET', url: '/api/v1/runs/nope' })).statusCode).toBe(404)
  })

  it('lists facets', async () => {
    const d = await get<FacetsResponse>('/api/v1/facets')
    expect(d).toMatchObject({ suites: ['unit'], branches: ['main'], env: { os: ['linux', 'windows'] }, runs: RUNS })
  })

  it('counts flaky and broken tests per day, by a stated definition', async () => {
    const d = await get<TrendsResponse>('/api/v1/trends')
    expect(d.days).toHaveLength(RUNS)
    expect(d.definition.flaky).toMatch(/passed only on retry/)
    // Runs 0, 3, 6, 9 and 12 have a pass on retry; no day has a pass and a fail on one revision.
    expect(d.days.filter((x) => x.flaky > 0).map((x) => x.day)).toEqual([
      '2026-03-01',
      '2026-03-04',
      '2026-03-07',
      '2026-03-10',
      '2026-03-13',
    ])
    // `broken` fails from run 9 on; its streak reaches verdict.brokenMinConsecutive (3) at run 11.
    expect(d.days.filter((x) => x.broken > 0).map((x) => x.day)).toEqual(['2026-03-12', '2026-03-13', '2026-03-14'])
  })

  it('gives the kiosk what is broken, the top flaky with sparklines, and days without failures', async () => {
    const d = await get<KioskResponse>('/api/v1/kiosk')
    expect(d.broken_total).toBe(1)
    expect(d.broken).toEqual([
      { test_id: id('broken'), name: 'broken', suite: 'unit', streak: 5, since: '2026-03-10T12:00:00.000Z' },
    ])
    expect(d.flaky[0]).toMatchObject({ name: 'flaky', last5: 'RPFRF' })
    expect(d.as_of).toBe(new Date(NOW).toISOString())
    // `broken` is broken now, so its suite has no days without failures, whatever the clock says.
    expect(d.suites).toEqual([
      {
        suite: 'unit',
        days_without_failure: 0,
        last_failure_at: '2026-03-14T12:00:00.000Z',
        last_run_at: '2026-03-14T12:00:00.000Z',
      },
    ])
  })
})

describe('quarantine', () => {
  const url = `/api/v1/quarantine/${enc(id('flaky'))}`

  it('refuses changes without the write token, and with a wrong one', async () => {
    const none = await s.app.inject({ method: 'PUT', url, payload: { reason: 'flaky' } })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer')
    const wrong = await s.app.inject({
      method: 'PUT',
      url,
      payload: { reason: 'flaky' },
      headers: auth('not-the-token-at-all'),
    })
    expect(wrong.statusCode).toBe(401)
    const del = await s.app.inject({ method: 'DELETE', url, payload: { reason: 'x' } })
    expect(del.statusCode).toBe(401)
  })

  it('quarantines, lists, audits and releases', async () => {
    const payload = { reason: 'flaky on CI', owner: 'ana', actor: 'ana' }
    // Read first, so that the quarantines these answers keep in memory are there to be dropped by the change.
    const flakyRow = (b: LeaderboardResponse) => b.rows.find((r) => r.test_id === id('flaky'))!
    expect(flakyRow(await get<LeaderboardResponse>('/api/v1/leaderboard')).quarantined).toBe(false)
    expect((await get<TestDetailResponse>(`/api/v1/tests/${enc(id('flaky'))}`)).quarantine).toBeNull()
    const put = await s.app.inject({ method: 'PUT', url, headers: auth(), payload })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json<QuarantineJson>()).toMatchObject({
      test_id: id('flaky'),
      reason: 'flaky on CI',
      owner: 'ana',
      source: 'manual',
      active: true,
    })

    const list = await get<QuarantineListResponse>('/api/v1/quarantine')
    expect(list.quarantined.map((q) => q.test_id)).toEqual([id('flaky')])
    const board = await get<LeaderboardResponse>('/api/v1/leaderboard')
    expect(flakyRow(board).quarantined).toBe(true)
    expect(board.summary.quarantined).toBe(1)
    const detail = await get<TestDetailResponse>(`/api/v1/tests/${enc(id('flaky'))}`)
    expect(detail.quarantine!.reason).toBe('flaky on CI')
    expect(detail.audit.map((a) => a.action)).toEqual(['quarantine'])

    const del = await s.app.inject({ method: 'DELETE', url, headers: auth(), payload: { reason: 'fixed in #12' } })
    expect(del.statusCode, del.body).toBe(200)
    const again = await s.app.inject({ method: 'DELETE', url: `${url}?reason=again`, headers: auth() })
    expect(again.statusCode).toBe(404)
    expect(flakyRow(await get<LeaderboardResponse>('/api/v1/leaderboard')).quarantined).toBe(false)
    const released = await get<TestDetailResponse>(`/api/v1/tests/${enc(id('flaky'))}`)
    expect(released.quarantine).toBeNull()
    expect(released.audit.map((a) => a.action)).toEqual(['release', 'quarantine'])

    const audit = await get<AuditResponse>(`/api/v1/quarantine/audit?test_id=${enc(id('flaky'))}`)
    expect(audit.audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      // The body's actor ("ana") is ignored: the single write token acts as "api".
      ['release', 'api', 'fixed in #12'],
      ['quarantine', 'api', 'flaky on CI'],
    ])
  })

  it('validates the body', async () => {
    const bad = [
      {},
      { reason: '  ' },
      { reason: 'x', issue_url: 'javascript:alert(1)' },
      { reason: 'x', expires_at: 'soon' },
    ]
    for (const payload of bad) {
      const res = await s.app.inject({ method: 'PUT', url, headers: auth(), payload })
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.json<{ error: { code: string } }>().error.code).toBe('FW_INPUT')
    }
  })

  it('refuses an expiry in the past and an id never seen, unless allow_unknown (issue 18)', async () => {
    const put = (u: string, payload: object) => s.app.inject({ method: 'PUT', url: u, headers: auth(), payload })
    const past = await put(url, { reason: 'x', expires_at: '2020-01-01T00:00:00Z' })
    expect(past.statusCode).toBe(400)
    expect(past.json<{ error: { message: string } }>().error.message).toMatch(/expiry: .* is in the past/)
    const unknown = await put('/api/v1/quarantine/audit', { reason: 'x' })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json<{ error: { message: string } }>().error.message).toMatch(/audit has never been seen/)
    expect((await get<QuarantineListResponse>('/api/v1/quarantine')).quarantined).toEqual([])
    const allowed = await put(`/api/v1/quarantine/${enc('unit::new::test')}`, { reason: 'x', allow_unknown: true })
    expect(allowed.statusCode, allowed.body).toBe(200)
    const release = { method: 'DELETE' as const, headers: auth(), payload: { reason: 'test done' } }
    await s.app.inject({ ...release, url: `/api/v1/quarantine/${enc('unit::new::test')}` })
  })

  it('refuses every write when no write token is configured', async () => {
    const t = await seededApp({ config: config({ writeToken: null }) })
    try {
      const put = await t.app.inject({ method: 'PUT', url, headers: auth(), payload: { reason: 'x' } })
      expect(put.statusCode).toBe(403)
      expect(put.json<{ error: { code: string; message: string } }>().error).toEqual({
        code: 'FW_WRITES_DISABLED',
        message: expect.stringMatching(/writes are disabled.*FLAKEWATCH_WRITE_TOKEN/) as string,
      })
      const up = await t.app.inject({
        method: 'POST',
        url: '/api/v1/reports',
        headers: { ...auth(), 'content-type': 'application/xml' },
        payload: '<testsuite/>',
      })
      expect(up.statusCode).toBe(403)
    } finally {
      await t.cleanup()
    }
  })
})

describe('errors', () => {
  it('answers unknown routes with the error shape', async () => {
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/nope?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: { code: 'FW_NOT_FOUND', message: 'no route GET /api/v1/nope' } })
  })

  it('maps malformed JSON to 400', async () => {
    const res = await s.app.inject({
      method: 'PUT',
      url: `/api/v1/quarantine/x`,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{nope',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json<{ error: { code: string } }>().error.code).toMatch(/^FST_/)
  })
})
