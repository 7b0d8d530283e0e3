import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditResponse } from '../../src/server/api-types.js'
import { parseNamedTokens } from '../../src/config/load.js'
import { auth, config, enc, id, seededApp, WRITE_TOKEN, type TestServer } from './helpers.js'

const CI = 'ci-token-0123456789'
const ALICE = 'alice-token-0123456789'

describe('named write tokens', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await seededApp({ config: config({ writeTokens: { ci: CI, alice: ALICE } }) })
  })
  afterAll(() => s.cleanup())

  it('records the token name as the actor, never a field of the request', async () => {
    const url = `/api/v1/quarantine/${enc(id('flaky'))}`
    const put = await s.app.inject({
      method: 'PUT',
      url,
      headers: auth(ALICE),
      payload: { reason: 'flaky on CI', actor: 'someone-else' },
    })
    expect(put.statusCode, put.body).toBe(200)
    const del = await s.app.inject({
      method: 'DELETE',
      url: `${url}?actor=mallory`,
      headers: auth(CI),
      payload: { reason: 'fixed' },
    })
    expect(del.statusCode, del.body).toBe(200)
    // The single unnamed token still works beside the named ones, as "api".
    const again = await s.app.inject({ method: 'PUT', url, headers: auth(WRITE_TOKEN), payload: { reason: 'back' } })
    expect(again.statusCode, again.body).toBe(200)
    const wrong = await s.app.inject({
      method: 'PUT',
      url,
      headers: auth('alice-token-wrong'),
      payload: { reason: 'x' },
    })
    expect(wrong.statusCode).toBe(401)

    const audit = (
      await s.app.inject({ url: `/api/v1/quarantine/audit?test_id=${enc(id('flaky'))}` })
    ).json<AuditResponse>()
    expect(audit.audit.map((a) => [a.action, a.actor])).toEqual([
      ['quarantine', 'api'],
      ['release', 'ci'],
      ['quarantine', 'alice'],
    ])
  })

  it('parses FLAKEWATCH_WRITE_TOKENS and names a malformed entry', () => {
    expect(parseNamedTokens('ci:s3cret-ci-token, alice:tok:with:colons')).toEqual({
      ci: 's3cret-ci-token',
      alice: 'tok:with:colons',
    })
    expect(() => parseNamedTokens('ci:short')).toThrow(/FLAKEWATCH_WRITE_TOKENS.*"ci"/)
    expect(() => parseNamedTokens('justatoken0123')).toThrow(/name:token/)
    expect(() => parseNamedTokens('ci:s3cret-ci-token,ci:other-token-1')).toThrow(/given twice/)
  })
})
