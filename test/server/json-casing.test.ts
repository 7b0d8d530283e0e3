import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProjectEntry, createProjectsApp } from '../../src/server/projects.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { ROOT } from '../helpers/run-cli.js'
import { offCasing, parseJsonOutput } from '../helpers/wire-casing.js'
import { auth, config, enc, id, seed, tempDir, WRITE_TOKEN } from './helpers.js'

/**
 * Every answer of the HTTP API has snake_case keys, as the CLI's JSON does (test/e2e/json-casing.test.ts). The
 * routes are read from the app itself, so that a new route without a request here fails the first test.
 */

const ORG = 'org-token-0123456789'
const READ = 'read-token-0123456789'
const KEY = 'acme/shop'

let app: FastifyInstance
/** The project's own app, behind the organisation's. */
let projectApp: FastifyInstance
let store: SqliteStore
const tmp = tempDir('fw-casing-')

/** One request per route, in order: writes first, so that the reads after them show quarantines and rules. */
const REQUESTS: { route: string; method: string; url: string; body?: unknown; type?: string }[] = [
  {
    route: 'PUT /api/v1/quarantine/:testId',
    method: 'PUT',
    url: `/api/v1/quarantine/${enc(id('flaky'))}`,
    body: { reason: 'flaky on windows', owner: 'qa', issue_url: 'https://example.com/i/1' },
  },
  {
    route: 'PUT /api/v1/rules/:ruleId',
    method: 'PUT',
    url: '/api/v1/rules/windows',
    body: { match: { test_id: 'unit::mod::*', env: { os: 'windows' } }, reason: 'windows runners' },
  },
  {
    route: 'POST /api/v1/reports',
    method: 'POST',
    url: '/api/v1/reports?suite=unit&branch=main&env=os=linux&name=junit.xml',
    body: readFileSync(join(ROOT, 'examples/reports/2026-11-21-unit.xml'), 'utf8'),
    type: 'application/xml',
  },
  { route: 'GET /healthz', method: 'GET', url: '/healthz' },
  { route: 'GET /api/v1/projects', method: 'GET', url: '/api/v1/projects' },
  { route: 'GET /api/v1/overview', method: 'GET', url: '/api/v1/overview' },
  { route: 'GET /api/v1/leaderboard', method: 'GET', url: '/api/v1/leaderboard' },
  { route: 'GET /api/v1/heatmap', method: 'GET', url: '/api/v1/heatmap' },
  { route: 'GET /api/v1/trends', method: 'GET', url: '/api/v1/trends' },
  { route: 'GET /api/v1/impact', method: 'GET', url: '/api/v1/impact' },
  { route: 'GET /api/v1/tests', method: 'GET', url: '/api/v1/tests' },
  { route: 'GET /api/v1/tests/:testId', method: 'GET', url: `/api/v1/tests/${enc(id('flaky'))}` },
  { route: 'GET /api/v1/tests/:testId/history', method: 'GET', url: `/api/v1/tests/${enc(id('flaky'))}/history` },
  {
    route: 'GET /api/v1/tests/:testId/runs/:runId/attempts',
    method: 'GET',
    url: `/api/v1/tests/${enc(id('flaky'))}/runs/r00/attempts`,
  },
  { route: 'GET /api/v1/kiosk', method: 'GET', url: '/api/v1/kiosk' },
  { route: 'GET /api/v1/runs', method: 'GET', url: '/api/v1/runs' },
  { route: 'GET /api/v1/runs/:runId', method: 'GET', url: '/api/v1/runs/r03' },
  { route: 'GET /api/v1/rules', method: 'GET', url: '/api/v1/rules' },
  { route: 'GET /api/v1/rules/audit', method: 'GET', url: '/api/v1/rules/audit' },
  { route: 'GET /api/v1/facets', method: 'GET', url: '/api/v1/facets' },
  { route: 'GET /api/v1/quarantine', method: 'GET', url: '/api/v1/quarantine' },
  { route: 'GET /api/v1/quarantine/audit', method: 'GET', url: '/api/v1/quarantine/audit' },
  { route: 'GET /api/v1/bundle', method: 'GET', url: '/api/v1/bundle?days=3650' },
  { route: 'GET /api/v1/policy', method: 'GET', url: '/api/v1/policy' },
  {
    route: 'POST /api/v1/policy/preview',
    method: 'POST',
    url: '/api/v1/policy/preview',
    body: { analysis: { verdict: { brokenMinConsecutive: 8 } }, quarantine: { minScore: 0.4 } },
  },
  { route: 'DELETE /api/v1/rules/:ruleId', method: 'DELETE', url: '/api/v1/rules/windows?reason=done' },
  {
    route: 'DELETE /api/v1/quarantine/:testId',
    method: 'DELETE',
    url: `/api/v1/quarantine/${enc(id('flaky'))}?reason=fixed`,
  },
]

beforeAll(async () => {
  const db = join(tmp.dir, 'fw.db')
  store = await openSqliteStore(db)
  await seed(store)
  const entry = await createProjectEntry({
    key: KEY,
    project: { db, readToken: READ, writeTokens: { ci: WRITE_TOKEN } },
    store,
    config: config(),
    app: { webRoot: null, analysisWorker: false, uploadWorkers: false },
  })
  projectApp = entry.app
  app = await createProjectsApp({ projects: [entry], defaultProject: KEY, orgToken: ORG, bodyLimitMb: 10 })
  await app.ready()
}, 60_000)

afterAll(async () => {
  await app?.close()
  await store?.close()
  tmp.cleanup()
})

/** `METHOD /path` of every API route of an app, from Fastify's own route tree. */
function apiRoutes(target: FastifyInstance): string[] {
  const out: string[] = []
  const stack: string[] = []
  for (const line of target.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)(?:├── |└── )(\S+) \(([^)]+)\)/.exec(line)
    if (!m) continue
    const depth = m[1]!.length / 4
    stack.length = depth
    const part = m[2]!
    const path = `${(stack[depth - 1] ?? '').replace(/\/$/, '')}/${part.replace(/^\//, '')}`
    stack.push(path)
    if (!path.startsWith('/api/') && path !== '/healthz') continue
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`)
  }
  return out
}

describe('one casing on the wire: the HTTP API', () => {
  it('has a request for every API route of a project and of the organisation', () => {
    const routes = new Set([...apiRoutes(projectApp), ...apiRoutes(app)].filter((r) => !r.endsWith('/*')))
    expect(new Set(REQUESTS.map((r) => r.route))).toEqual(routes)
  })

  it('answers every one of them in snake_case', async () => {
    let bytes = 0
    for (const r of REQUESTS) {
      const token = r.route.endsWith('/overview') ? ORG : r.method === 'GET' ? READ : WRITE_TOKEN
      const res = await app.inject({
        method: r.method as 'GET',
        url: r.url,
        headers: { ...auth(token), ...(r.body === undefined ? {} : { 'content-type': r.type ?? 'application/json' }) },
        ...(r.body === undefined ? {} : { payload: typeof r.body === 'string' ? r.body : JSON.stringify(r.body) }),
      })
      expect(res.statusCode, `${r.route}: ${res.body.slice(0, 300)}`).toBeLessThan(300)
      for (const doc of parseJsonOutput(res.body)) {
        expect(offCasing(doc), r.route).toEqual([])
        bytes += JSON.stringify(doc).length
      }
    }
    expect(bytes).toBeGreaterThan(20_000)
  }, 120_000)

  it('answers errors in snake_case too', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/tests/nope', headers: auth(READ) })
    expect(res.statusCode).toBe(404)
    expect(offCasing(res.json())).toEqual([])
    expect(Object.keys(res.json<object>())).toEqual(['error'])
  })
})
