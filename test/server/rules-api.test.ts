import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileRules, findRule } from '../../src/quarantine/rules.js'
import type { RuleAuditResponse, RuleJson, RuleListResponse } from '../../src/server/api-types.js'
import { auth, config, NOW, seededApp, type TestServer } from './helpers.js'

let s: TestServer
beforeAll(async () => {
  s = await seededApp({
    config: config({ writeTokens: { ci: 'ci-token-0123456789abc', alice: 'alice-token-0123456789' } }),
  })
})
afterAll(() => s?.cleanup())

const url = '/api/v1/rules/timeouts-arm64'
const body = {
  match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
  reason: 'arm64 runners are slow',
  owner: '@platform',
  issue_url: 'https://tracker.example.com/FW-12',
  expires_at: new Date(NOW + 10 * 86_400_000).toISOString(),
}
const put = (payload: unknown, headers: Record<string, string> = auth('alice-token-0123456789')) =>
  s.app.inject({ method: 'PUT', url, headers, payload: payload as object })

describe('quarantine rules over the API', () => {
  it('refuses a rule without a write token', async () => {
    expect((await put(body, {})).statusCode).toBe(401)
    expect((await put(body, auth('not-a-token-at-all-xx'))).statusCode).toBe(401)
    expect((await s.app.inject({ method: 'GET', url: '/api/v1/rules' })).json<RuleListResponse>().rules).toEqual([])
  })

  it.each([
    ['an expiry in the past', { ...body, expires_at: '2020-01-01T00:00:00Z' }, /expir/i],
    ['a javascript: issue link', { ...body, issue_url: 'javascript:alert(1)' }, /issue_url/],
    ['a regex RE2 cannot run in linear time', { ...body, match: { message: '(?=x)x' } }, /linear time.*\(\?=/],
    [
      'branch and env alone',
      { ...body, match: { branch: 'main', env: { runner: 'arm64' } } },
      /test_id, file, title or message.*--allow-broad/,
    ],
    ['a rule that matches every test', { ...body, match: { test_id: '**' } }, /matches every failure: test_id "\*\*"/],
    ['a regex that matches every message', { ...body, match: { message: '(a|a)*$' } }, /matches every failure/],
    ['an unknown matcher', { ...body, match: { message: 'x', suite: 'unit' } }, /suite|unrecognized/i],
    ['no reason', { ...body, reason: ' ' }, /reason/],
  ])('refuses %s with a 400 that says why, and stores nothing', async (_, payload, why) => {
    const res = await put(payload)
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json<{ error: { code: string; message: string } }>().error.message).toMatch(why)
    expect(await s.store.listQuarantineRules()).toEqual([])
  })

  it('refuses a rule id people cannot type', async () => {
    const res = await s.app.inject({
      method: 'PUT',
      url: '/api/v1/rules/Bad%20Id!',
      headers: auth('ci-token-0123456789abc'),
      payload: body,
    })
    expect(res.statusCode).toBe(400)
  })

  it('creates a rule that the gate then applies, audited under the token name', async () => {
    const res = await put(body)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json<RuleJson>()).toMatchObject({
      id: 'timeouts-arm64',
      match: body.match,
      matches: 'message /Timeout \\d+ms exceeded/, runner=arm64',
      owner: '@platform',
      created_by: 'alice',
      expires_at: body.expires_at,
      active: true,
    })
    const list = (await s.app.inject({ method: 'GET', url: '/api/v1/rules' })).json<RuleListResponse>()
    expect(list.rules.map((r) => r.id)).toEqual(['timeouts-arm64'])

    // The stored rule is the one the gate compiles: it forgives a timeout on arm64, and nothing else.
    const rules = compileRules(await s.store.listQuarantineRules(), NOW)
    const subject = (message: string, runner: string) => ({
      test: { testId: 'unit::mod::x', name: 'x', module: 'mod', file: null },
      status: 'failed' as const,
      message,
      branch: 'main',
      env: { runner },
    })
    expect(findRule(rules, subject('Timeout 30000ms exceeded', 'arm64'))?.id).toBe('timeouts-arm64')
    expect(findRule(rules, subject('Timeout 30000ms exceeded', 'x64'))).toBeUndefined()
    expect(findRule(rules, subject('expected 1 to be 2', 'arm64'))).toBeUndefined()
  })

  it('accepts the patterns that hung the gate (issue 33), and the gate then matches them in linear time', async () => {
    const putAs = (id: string, match: object) =>
      s.app.inject({
        method: 'PUT',
        url: `/api/v1/rules/${id}`,
        headers: auth('ci-token-0123456789abc'),
        payload: { ...body, match },
      })
    const res = await putAs('overlap', { message: '(\\w|\\d)+$' })
    expect(res.statusCode, res.body).toBe(200)
    const broad = await putAs('overlap-broad', { message: '(a|a)*$', allow_broad: true })
    expect(broad.statusCode, broad.body).toBe(200)
    expect(broad.json<RuleJson>()).toMatchObject({ match: { allow_broad: true }, matches: 'message /(a|a)*$/, broad' })
    const rules = compileRules(await s.store.listQuarantineRules(), NOW)
    const test = { testId: 'unit::mod::x', name: 'x', module: 'mod', file: null }
    const message = `${'1'.repeat(4095)}!`
    // (\w|\d)+$ cannot match a message that ends in `!`; (a|a)*$ matches the empty string at its end.
    expect(findRule(rules, { test, status: 'failed', message, branch: null, env: {} })?.id).toBe('overlap-broad')
    for (const id of ['overlap', 'overlap-broad'])
      await s.store.deleteQuarantineRule(id, {
        action: 'release',
        actor: 't',
        at: new Date(NOW).toISOString(),
        reason: 'x',
      })
  })

  it('replaces a rule and removes it, each change in the audit trail', async () => {
    const update = await put({ ...body, reason: 'still slow' }, auth('ci-token-0123456789abc'))
    expect(update.statusCode, update.body).toBe(200)
    expect(update.json<RuleJson>()).toMatchObject({ reason: 'still slow', created_by: 'alice' })

    const noReason = await s.app.inject({ method: 'DELETE', url, headers: auth('ci-token-0123456789abc') })
    expect(noReason.statusCode).toBe(400)
    const del = await s.app.inject({
      method: 'DELETE',
      url: `${url}?reason=${encodeURIComponent('runners replaced')}`,
      headers: auth('ci-token-0123456789abc'),
    })
    expect(del.statusCode, del.body).toBe(200)
    expect(await s.store.listQuarantineRules()).toEqual([])
    const again = await s.app.inject({
      method: 'DELETE',
      url: `${url}?reason=x`,
      headers: auth('ci-token-0123456789abc'),
    })
    expect(again.statusCode).toBe(404)
    expect(again.json<{ error: { code: string } }>().error.code).toBeTruthy()

    const audit = (
      await s.app.inject({ method: 'GET', url: '/api/v1/rules/audit?rule_id=timeouts-arm64' })
    ).json<RuleAuditResponse>()
    expect(audit.audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['release', 'ci', 'runners replaced'],
      ['update', 'ci', 'still slow'],
      ['quarantine', 'alice', 'arm64 runners are slow'],
    ])
    expect(audit.audit[0]!.rule).toBeNull()
    expect(audit.audit[2]!.rule).toMatchObject({ id: 'timeouts-arm64', match: body.match })
  })
})
