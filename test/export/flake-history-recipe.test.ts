import { copyFileSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleSchemaErrors } from '../../src/export/bundle-schema.js'
import type { Bundle } from '../../src/export/bundle-types.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

const TOKEN = 'job-token-123'
const DOC = readFileSync(join(ROOT, 'docs', 'flake-history.md'), 'utf8')

/** The `script` and `after_script` lines of one job of the first YAML block, as the docs write them. */
function jobScripts(job: string): { script: string[]; after: string[] } {
  const yaml = /```yaml\n([\s\S]*?)```/.exec(DOC)![1]!
  const lines = yaml.split('\n')
  const start = lines.indexOf(`${job}:`)
  expect(start, `docs/flake-history.md has no job "${job}"`).toBeGreaterThan(-1)
  const out: { script: string[]; after: string[] } = { script: [], after: [] }
  let into: string[] | null = null
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break
    if (/^ {2}script:/.test(line)) into = out.script
    else if (/^ {2}after_script:/.test(line)) into = out.after
    else if (/^ {2}\S/.test(line)) into = null
    else if (into && /^ {4}- /.test(line)) into.push(line.replace(/^ {4}- /, ''))
  }
  return out
}

/** One script line as argv for the built CLI: `npx flakewatch …` is this checkout's flakewatch; `npm ci` is a no-op here. */
function flakewatchArgs(line: string): string[] | null {
  if (line === 'npm ci') return null
  const words = line.split(/\s+/)
  expect(words.slice(0, 2), `unexpected recipe line: ${line}`).toEqual(['npx', 'flakewatch'])
  return words.slice(2)
}

/** GitLab's generic packages, as the recipe uses them: upload, list (substring filter, sort), download, delete. */
async function fakeGitlab(): Promise<{ url: string; versions: () => { version: string; body: string }[] }> {
  const stored: { id: number; name: string; version: string; created: number; body: string }[] = []
  let id = 1
  let clock = Date.now()
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      const send = (status: number, data?: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(data === undefined ? undefined : typeof data === 'string' ? data : JSON.stringify(data))
      }
      if (req.headers['job-token'] !== TOKEN) return send(401, { message: '401 Unauthorized' })
      const url = new URL(req.url!, 'http://x')
      const prefix = '/api/v4/projects/42/packages'
      if (!url.pathname.startsWith(prefix)) return send(404, { message: '404 Project Not Found' })
      const file = /^\/generic\/([^/]+)\/([^/]+)\/bundle\.json$/.exec(url.pathname.slice(prefix.length))
      if (file && req.method === 'PUT') {
        // Publishes in one test follow each other within a second; GitLab would refuse nothing, but the
        // versions must stay apart, so the fake's clock moves on.
        stored.push({ id: id++, name: file[1]!, version: file[2]!, created: (clock += 1000), body })
        return send(201, { message: '201 Created' })
      }
      if (file && req.method === 'GET') {
        const p = stored.filter((s) => s.name === file[1] && s.version === file[2]).at(-1)
        return p ? send(200, p.body) : send(404, { message: '404 Package Not Found' })
      }
      if (url.pathname === prefix && req.method === 'GET') {
        const name = url.searchParams.get('package_name') ?? ''
        const list = stored
          .filter((s) => s.name.includes(name))
          .sort((a, b) => (url.searchParams.get('sort') === 'desc' ? b.created - a.created : a.created - b.created))
          .map((s) => ({
            id: s.id,
            name: s.name,
            version: s.version,
            package_type: 'generic',
            created_at: new Date(s.created).toISOString(),
          }))
        return send(200, list)
      }
      send(404, { message: '404 Not Found' })
    })
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    versions: () => stored.map((s) => ({ version: s.version, body: s.body })),
  }
}
const servers: Server[] = []
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))))

/** What jest-junit writes: `flaky` fails in the second pipeline only. */
const junit = (pipeline: number) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="2" failures="${pipeline === 2 ? 1 : 0}" errors="0" time="1.2">
  <testsuite name="cart" errors="0" failures="${pipeline === 2 ? 1 : 0}" skipped="0" timestamp="2026-11-2${pipeline}T10:00:00" time="1.1" tests="2">
    <testcase classname="cart adds" name="cart adds" time="0.01"></testcase>
    <testcase classname="cart flaky" name="cart flaky" time="0.5">${pipeline === 2 ? '<failure>Error: timeout</failure>' : ''}</testcase>
  </testsuite>
</testsuites>
`

describe('docs/flake-history.md: the GitLab recipe without a server', { timeout: 180_000 }, () => {
  it('publishes a history that holds every pipeline’s runs, run as written over three pipelines', async () => {
    const gl = await fakeGitlab()
    const test = jobScripts('test')
    const publisher = jobScripts('flake-history')
    expect(test.after.length).toBeGreaterThan(0)
    expect(publisher.script.some((l) => l.includes('--accumulate'))).toBe(true)

    for (const pipeline of [1, 2, 3]) {
      const env = (job: number) => ({
        GITLAB_CI: 'true',
        CI: 'true',
        CI_SERVER_URL: gl.url,
        CI_PROJECT_ID: '42',
        CI_JOB_TOKEN: TOKEN,
        CI_PIPELINE_ID: String(100 + pipeline),
        CI_PIPELINE_URL: `${gl.url}/group/app/-/pipelines/${100 + pipeline}`,
        CI_JOB_ID: String(job),
        CI_JOB_URL: `${gl.url}/group/app/-/jobs/${job}`,
        CI_JOB_STATUS: pipeline === 2 ? 'failed' : 'success',
        CI_COMMIT_SHA: `${pipeline}`.repeat(40),
        CI_COMMIT_BRANCH: 'main',
      })
      // The test job: jest-junit's report, then the recipe's after_script.
      const testJob = testdir({ 'junit.xml': junit(pipeline) })
      for (const line of test.after) {
        const args = flakewatchArgs(line)
        if (!args) continue
        const r = await runCli(args, { cwd: testJob, env: env(1000 + pipeline * 10) })
        expect(r.exitCode, `${line}\n${r.stderr}`).toBe(0)
      }
      // The publishing job starts from the test job's artifacts only.
      const publishJob = testdir({})
      copyFileSync(join(testJob, '.flakewatch.db'), join(publishJob, '.flakewatch.db'))
      for (const line of publisher.script) {
        const args = flakewatchArgs(line)
        if (!args) continue
        const r = await runCli(args, { cwd: publishJob, env: env(1001 + pipeline * 10) })
        expect(r.exitCode, `${line}\n${r.stderr}`).toBe(0)
        expect(r.stderr).toMatch(/published flake-history version \d+/)
        expect(r.stderr).not.toMatch(/warning/)
      }
    }

    const versions = gl.versions()
    expect(versions).toHaveLength(3)
    const bundles = versions.map((v) => JSON.parse(v.body) as Bundle)
    // Each version holds everything published before it, plus its own pipeline.
    expect(bundles.map((b) => b.runs.length)).toEqual([1, 2, 3])
    const newest = bundles[2]!
    expect(newest.runs.map((r) => r.pipeline_id).sort()).toEqual([101, 102, 103])
    expect(newest.runs.map((r) => r.run_id).sort()).toEqual(['gitlab-1010', 'gitlab-1020', 'gitlab-1030'])
    const flaky = newest.tests.find((t) => t.name === 'cart flaky')!
    const failing = flaky.results_by_context.flatMap((c) => c.failing_run_ids)
    const passing = flaky.results_by_context.flatMap((c) => c.passing_run_ids)
    expect(failing).toEqual(['gitlab-1020'])
    expect(passing.sort()).toEqual(['gitlab-1010', 'gitlab-1030'])
    // The newest version is what GitLabViz reads: it must stay a valid bundle after the round trips.
    expect(bundleSchemaErrors(newest)).toEqual([])
  })

  it('publishes nothing when the earlier history cannot be read, rather than a history of one pipeline', async () => {
    const dir = testdir({ 'junit.xml': junit(1) })
    expect((await runCli(['ingest', 'junit.xml', '--suite', 'unit'], { cwd: dir })).exitCode).toBe(0)
    const env = { CI_SERVER_URL: 'http://127.0.0.1:9', CI_PROJECT_ID: '42', CI_JOB_TOKEN: TOKEN }
    const args = flakewatchArgs(jobScripts('flake-history').script.find((l) => l.includes('--accumulate'))!)!
    const r = await runCli([...args, '--json'], { cwd: dir, env })
    expect(r.exitCode).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.ok).toBe(false)
    expect(out.error).toMatch(/--accumulate: could not read the published history/)
    expect(out.publish).toBeUndefined()
    expect(r.stderr).toMatch(/not failing the build/)
  })
})
