import { afterEach, describe, expect, it } from 'vitest'
import { publishToGitlab, type PublishGitlabOptions } from '../../src/export/publish-gitlab.js'
import { closeFakeGitlabs, fakeGitlab, NOW, TOKEN, type Pkg } from './fake-gitlab.js'

const DAY = 86_400_000

afterEach(closeFakeGitlabs)

const ago = (days: number) => new Date(NOW - days * DAY).toISOString()
const pkg = (id: number, version: string, created: string | undefined, name = 'flake-history'): Pkg => ({
  id,
  name,
  version,
  package_type: 'generic',
  ...(created ? { created_at: created } : {}),
})

const base = (url: string, extra: Partial<PublishGitlabOptions> = {}): PublishGitlabOptions => ({
  url,
  project: 'group/sub/app',
  token: { kind: 'job', value: TOKEN },
  body: '{"schema_version":1}',
  now: NOW,
  backoffMs: 1,
  ...extra,
})

describe('publish gitlab', () => {
  it('PUTs bundle.json under a unix-time version with JOB-TOKEN, then prunes only old versions of this package', async () => {
    const gl = await fakeGitlab({
      perPage: 2,
      packages: [
        pkg(1, '1', ago(40)),
        pkg(2, '2', ago(15)),
        pkg(3, '3', ago(6)),
        pkg(4, '4', ago(40), 'flake-history-old'),
        pkg(5, String(Math.floor((NOW - 20 * DAY) / 1000)), undefined),
        pkg(6, 'no-date', undefined),
      ],
    })
    const r = await publishToGitlab(base(gl.url, { keepDays: 14 }))
    const version = String(NOW / 1000)
    expect(r).toMatchObject({ ok: true, uploaded: true, version, warnings: [] })
    expect(r.pruned.sort()).toEqual(['1', '2', String(Math.floor((NOW - 20 * DAY) / 1000))].sort())
    expect(gl.packages.map((p) => p.id).sort((a, b) => a - b)).toEqual([3, 4, 6, 1000])

    const put = gl.log[0]!
    expect(put).toMatchObject({
      method: 'PUT',
      url: `/api/v4/projects/group%2Fsub%2Fapp/packages/generic/flake-history/${version}/bundle.json`,
    })
    expect(put.headers['job-token']).toBe(TOKEN)
    expect(put.headers['private-token']).toBeUndefined()
    expect(put.headers['content-type']).toBe('application/json')
    expect(put.body).toBe('{"schema_version":1}')
    const lists = gl.log.filter((l) => l.method === 'GET')
    expect(lists.length).toBeGreaterThan(1)
    for (const [i, l] of lists.entries()) {
      const q = new URL(l.url, 'http://x').searchParams
      expect([q.get('package_name'), q.get('package_type'), q.get('page')]).toEqual([
        'flake-history',
        'generic',
        String(i + 1),
      ])
    }
    expect(
      gl.log
        .filter((l) => l.method === 'DELETE')
        .map((l) => l.url)
        .sort(),
    ).toEqual([
      '/api/v4/projects/group%2Fsub%2Fapp/packages/1',
      '/api/v4/projects/group%2Fsub%2Fapp/packages/2',
      '/api/v4/projects/group%2Fsub%2Fapp/packages/5',
    ])
    expect(r.fileUrl).toBe(
      `${gl.url}/api/v4/projects/group%2Fsub%2Fapp/packages/generic/flake-history/${version}/bundle.json`,
    )
  })

  it('uses PRIVATE-TOKEN for --token, accepts a numeric project and an /api/v4 URL', async () => {
    const gl = await fakeGitlab({ project: '42' })
    const r = await publishToGitlab(
      base(`${gl.url}/api/v4/`, { project: '42', token: { kind: 'private', value: TOKEN } }),
    )
    expect(r.ok).toBe(true)
    expect(gl.log[0]!.headers['private-token']).toBe(TOKEN)
    expect(gl.log[0]!.headers['job-token']).toBeUndefined()
    expect(gl.log[0]!.url).toMatch(/^\/api\/v4\/projects\/42\/packages\/generic\//)
  })

  it('always keeps 7 days, whatever --keep-days says', async () => {
    const gl = await fakeGitlab({ packages: [pkg(1, 'a', ago(6.9)), pkg(2, 'b', ago(7.1))] })
    const r = await publishToGitlab(base(gl.url, { keepDays: 1 }))
    expect(r.ok).toBe(true)
    expect(r.pruned).toEqual(['b'])
    expect(r.warnings).toEqual(['--keep-days 1 is below the minimum; keeping 7 days'])
  })

  it('never prunes the version it just uploaded, even with the clock skewed', async () => {
    const version = String(NOW / 1000)
    const gl = await fakeGitlab({ packages: [pkg(1, version, ago(400))] })
    const r = await publishToGitlab(base(gl.url))
    expect(r).toMatchObject({ ok: true, pruned: [] })
    expect(gl.packages.map((p) => p.version)).toEqual([version, version])
  })

  it('401: a clear error naming the token, no retry, nothing pruned', async () => {
    const gl = await fakeGitlab({ packages: [pkg(1, 'old', ago(100))] })
    const r = await publishToGitlab(base(gl.url, { token: { kind: 'job', value: 'wrong' } }))
    expect(r).toMatchObject({ ok: false, uploaded: false })
    expect(r.error).toMatch(/^upload: GitLab rejected the token \(401 Unauthorized\); check CI_JOB_TOKEN \(JOB-TOKEN\)/)
    expect(r.error).not.toContain('wrong')
    expect(gl.log).toHaveLength(1)
    expect(gl.packages).toHaveLength(1)
  })

  it('404: says the project was not found', async () => {
    const gl = await fakeGitlab()
    const r = await publishToGitlab(base(gl.url, { project: 'nobody/nothing' }))
    expect(r.ok).toBe(false)
    expect(r.error).toMatch(
      /^upload: project "nobody\/nothing" not found \(404\), or CI_JOB_TOKEN \(JOB-TOKEN\) cannot see it/,
    )
    expect(gl.log).toHaveLength(1)
  })

  it('5xx: retries with backoff and succeeds', async () => {
    const gl = await fakeGitlab({ fail: { PUT: [502, 503], GET: [500] } })
    const retries: string[] = []
    const r = await publishToGitlab(
      base(gl.url, { onRetry: (what, n, why) => retries.push(`${what} #${n} ${why.slice(0, 8)}`) }),
    )
    expect(r.ok).toBe(true)
    expect(gl.log.filter((l) => l.method === 'PUT')).toHaveLength(3)
    expect(retries).toEqual(['upload #1 HTTP 502', 'upload #2 HTTP 503', 'list packages #1 HTTP 500'])
  })

  it('5xx: gives up after a bounded number of attempts', async () => {
    const gl = await fakeGitlab({ fail: { PUT: [500, 500, 500, 500, 500, 500] } })
    const waits: number[] = []
    const sleep = (ms: number) => Promise.resolve(void waits.push(ms))
    const r = await publishToGitlab(base(gl.url, { retries: 2, backoffMs: 20, sleep }))
    expect(r).toMatchObject({ ok: false, uploaded: false })
    expect(r.error).toMatch(/^upload: HTTP 500: .*\(gave up after 3 attempts\)$/)
    expect(gl.log).toHaveLength(3)
    // The delay doubles, and stays bounded.
    expect(waits).toEqual([20, 40])
  })

  it('a network error is retried, then reported', async () => {
    const gl = await fakeGitlab()
    const closed = gl.url
    await closeFakeGitlabs()
    const r = await publishToGitlab(base(closed, { retries: 1 }))
    expect(r.ok).toBe(false)
    expect(r.error).toMatch(/^upload: ECONNREFUSED \(gave up after 2 attempts\)$/)
  })

  it('a pruning failure keeps the upload, and says both', async () => {
    const gl = await fakeGitlab({ fail: { GET: [403] } })
    const r = await publishToGitlab(base(gl.url))
    expect(r).toMatchObject({ ok: false, uploaded: true })
    expect(r.error).toMatch(
      /^uploaded version \d+, but pruning failed: list packages: the token may not do this \(403 Forbidden\)/,
    )
  })

  it('a version another job deleted first counts as pruned', async () => {
    const gl = await fakeGitlab({ packages: [pkg(1, 'old', ago(30))], fail: { DELETE: [404] } })
    const r = await publishToGitlab(base(gl.url))
    expect(r).toMatchObject({ ok: true, pruned: ['old'] })
  })

  it('bad settings come back as errors, before any request', async () => {
    expect((await publishToGitlab(base('ftp://x'))).error).toMatch(/--url must be an http\(s\) URL/)
    expect((await publishToGitlab(base('not a url'))).error).toMatch(/--url is not a URL/)
    expect((await publishToGitlab(base('http://127.0.0.1:9', { token: { kind: 'job', value: '' } }))).error).toMatch(
      /no GitLab token/,
    )
    expect((await publishToGitlab(base('http://127.0.0.1:9', { packageName: 'a/b' }))).error).toMatch(
      /--package "a\/b"/,
    )
  })
})
