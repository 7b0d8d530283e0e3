import fc from 'fast-check'
import { expect } from 'vitest'
import type { StoreStats } from '../../../src/store/store.js'
import { auth, seededApp, type TestServer } from '../../server/helpers.js'
import { jsonFiles, mutations, realSeeds, type Surface } from '../support.js'

/**
 * The HTTP API through fastify's inject, against one seeded SQLite store shared by these surfaces: uploads of
 * mutated real reports, every read endpoint with arbitrary query strings and ids, rule and quarantine writes and
 * deletes, policy previews, and MCP tool calls with arbitrary arguments. Nothing answers 5xx; refusals are JSON
 * with a stable code; a refused write changes nothing.
 */

let server: TestServer | undefined
let opening: Promise<TestServer> | undefined

/** The shared seeded app, opened on first use; {@link closeApi} closes it. */
async function app(): Promise<TestServer> {
  opening ??= seededApp({ analysisWorker: false })
  server = await opening
  return server
}

export async function closeApi(): Promise<void> {
  const s = server ?? (opening ? await opening : undefined)
  server = undefined
  opening = undefined
  await s?.cleanup()
}

const setup = async () => void (await app())
const counts = (x: StoreStats) => ({ runs: x.runs, tests: x.tests, results: x.results, attempts: x.attempts })

/** A refusal is JSON `{ error: { code, message } }` with a stable code, never a 5xx. */
function expectAnswered(res: { statusCode: number; body: string }, what: string): void {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 500)}`).toBeLessThan(500)
  if (res.statusCode >= 400) {
    const body = JSON.parse(res.body) as { error?: { code?: string } }
    expect(body.error?.code ?? (body as { failed?: unknown[] }).failed).toBeTruthy()
    // Fastify's own refusals (a malformed JSON body, a media type no route takes) keep its FST_ codes.
    if (body.error?.code) expect(body.error.code).toMatch(/^(FW|FST)_[A-Z0-9_]+$/)
  }
}

/** Values that have broken query handling elsewhere: numbers at the edges, dates that are not, encodings. */
const value = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('-1', '0', '1e308', 'NaN', '9007199254740993', '0x10', '2026-02-30', '9999-12-31', '', '%', '%00'),
  fc.constantFrom('a'.repeat(5000), '\u{1F600}', '<script>', "' OR 1=1 --", '../../etc/passwd', 'unit::mod::flaky'),
  fc.integer().map(String),
)

const seeds = [...realSeeds().values()].flat()
const TYPES = ['application/xml', 'application/json', 'text/plain', 'application/octet-stream', 'text/xml']

interface Upload {
  name: string
  type: string
  /** The body, base64: a mutated report is any bytes. */
  payload: string
}

/** A mutated real report is stored or refused (4xx), and a refusal stores nothing. */
export const uploadSurface: Surface<Upload> = {
  name: 'api-upload',
  runs: 1000,
  setup,
  arbitrary: () =>
    fc.tuple(fc.nat({ max: seeds.length - 1 }), mutations(), fc.constantFrom(...TYPES)).map(([i, m, type]) => ({
      name: seeds[i]!.path.split('/').pop()!,
      type,
      payload: m.apply(seeds[i]!.bytes).toString('base64'),
    })),
  check: async ({ name, type, payload }) => {
    const s = await app()
    const before = counts(await s.store.stats())
    const res = await s.app.inject({
      method: 'POST',
      url: `/api/v1/reports?name=${encodeURIComponent(name)}&suite=fuzz`,
      headers: { ...auth(), 'content-type': type },
      payload: Buffer.from(payload, 'base64'),
    })
    expectAnswered(res, `upload ${name}`)
    if (res.statusCode >= 400) expect(counts(await s.store.stats())).toEqual(before)
  },
  ...jsonFiles(),
}

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
  'window',
  'columns',
]
const GETS = [
  '/api/v1/tests',
  '/api/v1/runs',
  '/api/v1/trends',
  '/api/v1/heatmap',
  '/api/v1/impact',
  '/api/v1/leaderboard',
  '/api/v1/facets',
  '/api/v1/kiosk',
  '/api/v1/quarantine',
  '/api/v1/quarantine/audit',
  '/api/v1/rules',
  '/api/v1/rules/audit',
  '/api/v1/policy',
  '/api/v1/bundle',
  '/api/v1/projects',
  '/api/v1/tests/{id}',
  '/api/v1/tests/{id}/history',
  '/api/v1/runs/{id}',
  '/api/v1/tests/{id}/runs/{id}/attempts',
  '/healthz',
]

interface Read {
  path: string
  query: [string, string][]
  id: string
}

/** Any query on any read endpoint answers below 500, and a JSON refusal has a stable code. */
export const querySurface: Surface<Read> = {
  name: 'api-query',
  runs: 1000,
  setup,
  arbitrary: () =>
    fc.record({
      path: fc.constantFrom(...GETS),
      query: fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), value), { maxLength: 5 }),
      id: value,
    }),
  check: async ({ path, query, id }) => {
    const s = await app()
    const qs = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
    const url = `${path.replaceAll('{id}', encodeURIComponent(id) || 'x')}${qs ? `?${qs}` : ''}`
    const res = await s.app.inject({ method: 'GET', url })
    if (res.headers['content-type']?.toString().startsWith('application/json')) expectAnswered(res, url)
    else expect(res.statusCode, url).toBeLessThan(500)
  },
  ...jsonFiles(),
}

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

interface Write {
  what: 'rules' | 'quarantine'
  method: 'PUT' | 'DELETE'
  id: string
  body: unknown
}

/** Any rule or quarantine write is stored or refused (4xx) leaving the lists as they were. */
export const writeSurface: Surface<Write> = {
  name: 'api-write',
  runs: 1000,
  setup,
  arbitrary: () =>
    fc.record({
      what: fc.constantFrom('rules' as const, 'quarantine' as const),
      method: fc.constantFrom('PUT' as const, 'PUT' as const, 'DELETE' as const),
      id: value,
      body,
    }),
  check: async ({ what, method, id, body: payload }) => {
    const s = await app()
    const list = async () => (await s.app.inject({ method: 'GET', url: `/api/v1/${what}` })).body
    const before = await list()
    const res = await s.app.inject({
      method,
      url: `/api/v1/${what}/${encodeURIComponent(id) || 'x'}`,
      headers: { ...auth(), ...(method === 'PUT' ? { 'content-type': 'application/json' } : {}) },
      ...(method === 'PUT' ? { payload: JSON.stringify(payload) } : {}),
    })
    expectAnswered(res, `${method} ${what}/${id}`)
    if (res.statusCode >= 400) expect(await list()).toBe(before)
  },
  ...jsonFiles(),
}

/** Settings a policy candidate may name, and others that it may not. */
const POLICY_KEYS = {
  analysis: ['window', 'minRuns', 'verdict', 'flakeScore', 'bogus'],
  quarantine: ['minScore', 'releaseAfterPasses', 'auto', 'file', 'bogus'],
  successRate: ['target', 'bogus'],
}

/** A policy candidate (the config's analysis, quarantine and successRate sections, any values): previewed or 4xx. */
export const policySurface: Surface<{ body: unknown }> = {
  name: 'api-policy-preview',
  runs: 1000,
  setup,
  arbitrary: () =>
    fc.record({
      body: fc.oneof(
        fc
          .tuple(fc.constantFrom(...(Object.keys(POLICY_KEYS) as (keyof typeof POLICY_KEYS)[])), fc.nat(), value)
          .chain(([section, k, v]) =>
            fc
              .oneof(fc.constant<unknown>(v), fc.jsonValue({ maxDepth: 3 }), fc.double(), fc.integer())
              .map((x) => ({ [section]: { [POLICY_KEYS[section][k % POLICY_KEYS[section].length]!]: x } })),
          ),
        fc.jsonValue({ maxDepth: 4 }),
      ),
    }),
  check: async ({ body: payload }) => {
    const s = await app()
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/policy/preview',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    })
    expectAnswered(res, 'policy preview')
  },
  ...jsonFiles(),
}

const TOOLS = ['list_tests', 'explain_test', 'triage_report', 'quarantine_test', 'release_test', 'setup_plan']
const ARG_KEYS = [
  'test_id',
  'verdicts',
  'limit',
  'offset',
  'search',
  'suite',
  'owner',
  'quarantined',
  'path',
  'content',
  'format',
  'branch',
  'reason',
  'expires',
  'issue_url',
  'files',
]

const smallSeeds = seeds.filter((x) => x.bytes.length <= 4 * 1024).map((x) => x.bytes.toString('utf8'))

/** Arguments each tool accepts: a seeded test's id, a reason, a real report's text. */
function validArgs(tool: string, report: string): Record<string, unknown> {
  const testId = 'unit::mod::flaky'
  if (tool === 'explain_test' || tool === 'release_test') return { test_id: testId }
  if (tool === 'quarantine_test') return { test_id: testId, reason: 'fuzz' }
  if (tool === 'triage_report') return { content: report }
  if (tool === 'setup_plan') return { files: [{ path: 'package.json', content: '{"devDependencies":{"vitest":"1"}}' }] }
  return {}
}

interface ToolCall {
  tool: string
  args: Record<string, unknown>
}

/**
 * An MCP tool called with arbitrary arguments: a result, or a tool error the agent can read (a flakewatch error's
 * code, or the SDK's "invalid params"), never a 5xx or another error's text.
 */
export const mcpSurface: Surface<ToolCall> = {
  name: 'api-mcp',
  runs: 1000,
  setup,
  arbitrary: () =>
    fc
      .record({
        tool: fc.constantFrom(...TOOLS),
        valid: fc.boolean(),
        report: fc.nat({ max: smallSeeds.length - 1 }),
        args: fc.dictionary(
          fc.constantFrom(...ARG_KEYS),
          fc.oneof(value, fc.jsonValue({ maxDepth: 3 }), fc.array(value, { maxLength: 3 })),
          { maxKeys: 3 },
        ),
      })
      // Half the calls start from arguments the tool takes, so that most reach the tool rather than its schema.
      .map(({ tool, valid, report, args }) => ({
        tool,
        args: { ...(valid ? validArgs(tool, smallSeeds[report]!) : {}), ...args },
      })),
  check: async ({ tool, args }) => {
    const s = await app()
    const res = await s.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }),
    })
    expect(res.statusCode, res.body.slice(0, 500)).toBeLessThan(500)
    const answer = JSON.parse(res.body) as {
      result?: { isError?: boolean; content: { type: string; text: string }[] }
      error?: { code: number; message: string }
    }
    if (answer.error) {
      expect(answer.error.code, answer.error.message).toBe(-32602)
      return
    }
    const text = answer.result!.content[0]?.text ?? ''
    if (answer.result!.isError) {
      if (text.startsWith('MCP error -32602')) return
      const err = JSON.parse(text) as { error: { code: string } }
      expect(err.error.code, text).toMatch(/^FW_[A-Z0-9_]+$/)
    } else JSON.parse(text)
  },
  ...jsonFiles(),
}

export const apiSurfaces = [uploadSurface, querySurface, writeSurface, policySurface, mcpSurface] as Surface<unknown>[]
