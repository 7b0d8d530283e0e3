import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classifyFailures } from '../../src/comment/classify.js'
import { commentMarker, escapeMarkdown, renderComment } from '../../src/comment/render.js'
import { retryAfterMs } from '../../src/http/retrying-fetch.js'
import { openStore } from '../../src/store/open.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'
import { fakeForge } from './fake-forge.js'

const TOKEN = 'ghs_test-token-123'
const XSS = '<img src=x onerror=alert(1)> **bold** [x](javascript:alert(1)) @everyone'

/** A JUnit report of the pull request's job: one of each kind of failure. */
const junit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="unit" tests="6">
  <testcase classname="mod" name="broken on main" time="0.1"><failure message="expected 1 to be 2">at x</failure></testcase>
  <testcase classname="mod" name="wobbly" time="0.1"><failure message="timeout">at y</failure></testcase>
  <testcase classname="mod" name="quarantined" time="0.1"><failure message="socket hang up">at z</failure></testcase>
  <testcase classname="mod" name="${XSS.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}" time="0.1"><failure message="new &lt;b&gt;bug&lt;/b&gt;">at w</failure></testcase>
  <testcase classname="mod" name="fine" time="0.1"/>
</testsuite></testsuites>
`

describe('escaping and rendering', () => {
  it('makes untrusted names inert: no HTML, no links, no mentions', () => {
    const s = escapeMarkdown(XSS)
    expect(s).not.toMatch(/<img|\]\(|@everyone/)
    expect(s).toContain('&lt;img')
    expect(escapeMarkdown('see https://evil.example')).not.toMatch(/https:\/\//)
  })
  it('parses Retry-After as seconds or a date', () => {
    expect(retryAfterMs('3')).toBe(3000)
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000)
    expect(retryAfterMs('soon')).toBeNull()
  })
  it('links each test to its dashboard page, and says there is nothing when nothing failed', () => {
    const failures = classifyFailures({
      results: [result('a b', 'failed')],
      quarantines: new Map(),
      defaultBranch: 'main',
    })
    const body = renderComment(failures, { serverUrl: 'https://fw.example.com/' })
    expect(body).toContain('(https://fw.example.com/tests/unit%3A%3Amod%3A%3Aa%20b)')
    expect(renderComment([], { serverUrl: 'javascript:alert(1)' })).toMatch(/No failures/)
    expect(renderComment([], { serverUrl: 'javascript:alert(1)' })).not.toMatch(/javascript/)
  })
})

describe('flakewatch comment against a local GitHub and GitLab', () => {
  let dir: string
  let forge: Awaited<ReturnType<typeof fakeForge>>
  const db = () => join(dir, 'fw.db')

  beforeAll(async () => {
    dir = testdir({ 'junit.xml': junit }, 'comment-')
    forge = await fakeForge({ token: TOKEN, comments: [{ id: 1, body: 'LGTM' }] })
    writeFileSync(join(dir, 'event.json'), JSON.stringify({ action: 'synchronize', pull_request: { number: 12 } }))
    const store = await openStore({ db: db() })
    try {
      for (let i = 0; i < 12; i++) {
        const run = runMeta(`r${i}`, new Date(Date.UTC(2026, 0, 1 + i)).toISOString(), { revision: `rev${i}` })
        await store.ingestReport(
          batch(run, [
            result('broken on main', i >= 9 ? 'failed' : 'passed'),
            i % 3 === 0 ? flakyResult('wobbly') : result('wobbly', i % 2 ? 'failed' : 'passed'),
            result('quarantined', 'passed'),
            result('fine', 'passed'),
          ]),
        )
      }
      await store.putQuarantine(
        {
          testId: 'unit::mod::quarantined',
          reason: 'backend flake',
          owner: '@team-shop',
          issueUrl: null,
          createdAt: new Date().toISOString(),
          createdBy: 'me',
          expiresAt: null,
          source: 'manual',
        },
        { action: 'quarantine', actor: 'me', at: new Date().toISOString(), reason: 'backend flake', source: 'manual' },
      )
    } finally {
      await store.close()
    }
  })
  afterAll(async () => {
    await forge.close()
    cleanup(dir)
  })

  const github = {
    GITHUB_ACTIONS: 'true',
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: 'acme/shop',
    GITHUB_EVENT_PATH: '',
    GITHUB_API_URL: '',
  }
  const env = () => ({ ...github, GITHUB_EVENT_PATH: join(dir, 'event.json'), GITHUB_API_URL: forge.url })

  it('posts one comment that classifies every failure, then updates it instead of adding another', async () => {
    const args = ['comment', 'junit.xml', '--suite', 'unit', '--db', db(), '--json']
    const first = await runCli(args, { cwd: dir, env: env() })
    expect(first.exitCode, first.stderr).toBe(0)
    const out = JSON.parse(first.stdout) as {
      ok: boolean
      action: string
      failures: { kind: string; test_id: string; broken_since: string | null }[]
    }
    expect(out).toMatchObject({ ok: true, action: 'created' })
    const kinds = Object.fromEntries(out.failures.map((f) => [f.test_id, f.kind]))
    expect(kinds).toEqual({
      'unit::mod::broken on main': 'broken',
      'unit::mod::wobbly': 'known_flaky',
      'unit::mod::quarantined': 'known_flaky',
      [`unit::mod::${XSS}`]: 'new_failure',
    })
    expect(out.failures.find((f) => f.kind === 'broken')!.broken_since).toBe('rev9')
    expect(forge.comments).toHaveLength(2)
    const body = forge.comments[1]!.body
    expect(body).toContain(commentMarker())
    expect(body).toMatch(/broken since `rev9`/)
    expect(body).toMatch(/quarantined: backend flake, owner @\u200bteam\\-shop/)
    expect(body).not.toMatch(/<img|<b>|\]\(javascript/)
    const post = forge.log.find((l) => l.method === 'POST')!
    expect(post.url).toBe('/repos/acme/shop/issues/12/comments')
    expect(post.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(post.headers['x-github-api-version']).toBe('2022-11-28')

    const second = await runCli(args, { cwd: dir, env: env() })
    expect(JSON.parse(second.stdout)).toMatchObject({ ok: true, action: 'updated' })
    expect(forge.comments).toHaveLength(2)
    expect(forge.log.at(-1)).toMatchObject({
      method: 'PATCH',
      url: `/repos/acme/shop/issues/comments/${forge.comments[1]!.id}`,
    })
  })

  it('retries 5xx and 429 (honouring Retry-After), and never fails the build unless --strict', async () => {
    forge.fail.push({ status: 502 }, { status: 429, retryAfter: '1' })
    const ok = await runCli(['comment', 'junit.xml', '--suite', 'unit', '--db', db()], { cwd: dir, env: env() })
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(ok.stderr).toMatch(/retry 1 after HTTP 502/)
    expect(ok.stderr).toMatch(/retry 2 after HTTP 429/)
    expect(ok.stderr).toMatch(/comment: updated/)

    const bad = { ...env(), GITHUB_TOKEN: 'wrong' }
    const soft = await runCli(['comment', 'junit.xml', '--suite', 'unit'], { cwd: dir, env: bad })
    expect(soft.exitCode).toBe(0)
    expect(soft.stderr).toMatch(/not posted: listing comments: HTTP 401 \(the token was refused\)/)
    const strict = await runCli(['comment', 'junit.xml', '--suite', 'unit', '--strict'], { cwd: dir, env: bad })
    expect(strict.exitCode).toBe(2)
  })

  it('gate --comment comments and keeps the gate’s own verdict', async () => {
    const res = await runCli(['gate', 'junit.xml', '--suite', 'unit', '--db', db(), '--comment'], {
      cwd: dir,
      env: env(),
    })
    expect(res.exitCode).toBe(1)
    expect(res.stderr).toMatch(/flakewatch comment: updated/)
  })

  it('posts a merge-request note on GitLab with a private token, and updates it with PUT', async () => {
    const gitlab = {
      GITLAB_CI: 'true',
      CI_API_V4_URL: `${forge.url}/api/v4`,
      CI_PROJECT_ID: '42',
      CI_MERGE_REQUEST_IID: '7',
      FLAKEWATCH_GITLAB_TOKEN: TOKEN,
    }
    const args = ['comment', 'junit.xml', '--suite', 'unit', '--db', db(), '--key', 'unit-tests']
    expect((await runCli(args, { cwd: dir, env: gitlab })).stderr).toMatch(/comment: created/)
    const post = forge.log.at(-1)!
    expect(post).toMatchObject({ method: 'POST', url: '/api/v4/projects/42/merge_requests/7/notes' })
    expect(post.headers['private-token']).toBe(TOKEN)
    expect((await runCli(args, { cwd: dir, env: gitlab })).stderr).toMatch(/comment: updated/)
    expect(forge.log.at(-1)!.method).toBe('PUT')
    expect(forge.comments.filter((c) => c.body.includes(commentMarker('unit-tests')))).toHaveLength(1)
    // Outside a merge request pipeline there is nothing to comment on: a warning, exit 0.
    const noMr = await runCli(args, { cwd: dir, env: { ...gitlab, CI_MERGE_REQUEST_IID: '' } })
    expect(noMr.exitCode).toBe(0)
    expect(noMr.stderr).toMatch(/no merge request/)
  })
})
