import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StoreStats } from '../../src/store/store.js'
import { auth, seededApp, type TestServer } from '../server/helpers.js'
import { fuzzParams, mutations, realSeeds, FUZZ_TIMEOUT } from './support.js'

/**
 * The HTTP API through fastify's inject, against a seeded SQLite store: uploads of mutated real reports, every
 * read endpoint with arbitrary query strings and ids, and arbitrary rule and quarantine bodies. Nothing answers
 * 5xx; refusals are JSON with a stable code; a refused write changes nothing.
 */

let s: TestServer
beforeAll(async () => {
  s = await seededApp()
}, 120_000)
afterAll(() => s?.cleanup())

const counts = (x: StoreStats) => ({ runs: x.runs, tests: x.tests, results: x.results, attempts: x.attempts })

/** A refusal is JSON `{ error: { code, message } }` with a stable code, never a 5xx. */
function expectAnswered(res: { statusCode: number; body: string; headers: Record<string, unknown> }): void {
  expect(res.statusCode, res.body.slice(0, 500)).toBeLessThan(500)
  if (res.statusCode >= 400) {
    const body = JSON.parse(res.body) as { error?: { code?: string } }
    expect(body.error?.code ?? (body as { failed?: unknown[] }).failed).toBeTruthy()
    // Fastify's own refusals (a malformed JSON body, a media type no route takes) keep its FST_ codes.
    if (body.error?.code) expect(body.error.code).toMatch(/^(FW|FST)_[A-Z0-9_]+$/)
  }
}

const seeds = [...realSeeds().values()].flat()

describe('uploads', () => {
  it(
    'a mutated real report is stored or refused (4xx), and a refusal stores nothing',
    { timeout: FUZZ_TIMEOUT },
    async () => {
      const types = ['application/xml', 'application/json', 'text/plain', 'application/octet-stream', 'text/xml']
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: seeds.length - 1 }),
          mutations(),
          fc.constantFrom(...types),
          async (i, mutation, type) => {
            const seed = seeds[i]!
            const payload = mutation.apply(seed.bytes)
            const before = counts(await s.store.stats())
            const name = encodeURIComponent(seed.path.split('/').pop()!)
            const res = await s.app.inject({
              method: 'POST',
              url: `/api/v1/reports?name=${name}&suite=fuzz`,
              headers: { ...auth(), 'content-type': type },
              payload,
            })
            expectAnswered(res)
            if (res.statusCode >= 400) expect(counts(await s.store.stats())).toEqual(before)
          },
        ),
        fuzzParams(40),
      )
    },
  )
})

const QUERY_KEYS = [
  'since',
  'until',
  'branch',
  'suite',
  'limit',
  'offset',
  'days',
  'sort',
  'order',
  'search',
  'verdict',
  'owner',
  'format',
  'env',
  'run_status',
  'last',
  'rev',
  'classification',
  'test_id',
  'run_id',
  'rule_id',
  'name',
  'project',
]
const GETS = [
  '/api/v1/tests',
  '/api/v1/runs',
  '/api/v1/trends',
  '/api/v1/heatmap',
  '/api/v1/impact',
  '/api/v1/leaderboard',
  '/api/v1/facets',
  '/api/v1/quarantine',
  '/api/v1/quarantine/audit',
  '/api/v1/rules',
  '/api/v1/rules/audit',
  '/api/v1/policy',
  '/api/v1/bundle',
  '/api/v1/tests/{id}',
  '/api/v1/tests/{id}/history',
  '/api/v1/runs/{id}',
  '/api/v1/tests/{id}/runs/{id}/attempts',
  '/healthz',
]

/** Values that have broken query handling elsewhere: numbers at the edges, dates that are not, encodings. */
const value = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('-1', '0', '1e308', 'NaN', '9007199254740993', '0x10', '2026-02-30', '9999-12-31', '', '%', '%00'),
  fc.constantFrom('a'.repeat(5000), '\u{1F600}', '<script>', "' OR 1=1 --", '../../etc/passwd', 'unit::mod::flaky'),
  fc.integer().map(String),
)

describe('reads', () => {
  it('any query on any read endpoint answers below 500', { timeout: FUZZ_TIMEOUT }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...GETS),
        fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), value), { maxLength: 5 }),
        value,
        async (path, query, id) => {
          const qs = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
          const url = `${path.replaceAll('{id}', encodeURIComponent(id) || 'x')}${qs ? `?${qs}` : ''}`
          const res = await s.app.inject({ method: 'GET', url })
          if (res.headers['content-type']?.toString().startsWith('application/json')) expectAnswered(res)
          else expect(res.statusCode, url).toBeLessThan(500)
        },
      ),
      fuzzParams(300),
    )
  })
})

describe('writes', () => {
  const ruleBody = {
    match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
    reason: 'slow runners',
    owner: '@platform',
    issue_url: 'https://tracker.example.com/FW-12',
  }
  /** A valid body with one field replaced by an arbitrary JSON value, or an arbitrary body. */
  const body = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('match', 'reason', 'owner', 'issue_url', 'expires_at', 'extra'),
        fc.jsonValue({ maxDepth: 4 }),
      )
      .map(([k, v]) => ({ ...ruleBody, [k]: v })),
    fc
      .tuple(
        fc.constantFrom('message', 'test_id', 'file', 'title', 'branch', 'env', 'allow_broad'),
        fc.jsonValue({ maxDepth: 3 }),
      )
      .map(([k, v]) => ({ ...ruleBody, match: { ...ruleBody.match, [k]: v } })),
    fc.jsonValue({ maxDepth: 4 }),
  )

  it(
    'any rule or quarantine body is stored or refused (4xx) leaving the lists as they were',
    { timeout: FUZZ_TIMEOUT },
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('rules', 'quarantine'), value, body, async (what, id, payload) => {
          const list = async () => (await s.app.inject({ method: 'GET', url: `/api/v1/${what}` })).body
          const before = await list()
          const res = await s.app.inject({
            method: 'PUT',
            url: `/api/v1/${what}/${encodeURIComponent(id) || 'x'}`,
            headers: { ...auth(), 'content-type': 'application/json' },
            payload: JSON.stringify(payload),
          })
          expectAnswered(res)
          if (res.statusCode >= 400) expect(await list()).toBe(before)
        }),
        fuzzParams(200),
      )
    },
  )
})
