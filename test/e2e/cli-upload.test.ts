import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { WRITE_TOKEN, config, tempDir } from '../server/helpers.js'

const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="2" failures="1">
  <testsuite name="cart" tests="2" failures="1" timestamp="2026-03-20T10:00:00">
    <testcase classname="cart adds items" name="cart adds items" time="0.4"></testcase>
    <testcase classname="cart applies coupon" name="cart applies coupon" time="0.8">
      <failure message="expected 90 to be 81">Error: expected 90 to be 81</failure>
    </testcase>
  </testsuite>
</testsuites>
`

/** `flakewatch upload` against a real server on 127.0.0.1, with the run context a GitLab job sets. */
describe('flakewatch upload', () => {
  let url = ''
  let store: SqliteStore
  let close: () => Promise<void>
  const dir = testdir({ 'junit.xml': JUNIT })

  beforeAll(async () => {
    const tmp = tempDir()
    store = await openSqliteStore(join(tmp.dir, 'fw.db'))
    const app = await createApp({ store, config: config(), webRoot: null })
    await app.listen({ host: '127.0.0.1', port: 0 })
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    close = async () => {
      await app.close()
      await store.close()
      tmp.cleanup()
    }
  })
  afterAll(() => close())

  const gitlab = {
    GITLAB_CI: 'true',
    CI_PIPELINE_ID: '4242',
    CI_JOB_ID: '777',
    CI_COMMIT_REF_NAME: 'main',
    CI_COMMIT_SHA: 'abc1234def',
    CI_JOB_STATUS: 'failed',
  }

  it('sends the report with its content type and the CI run context, and the server stores it', async () => {
    const r = await runCli(['upload', 'junit.xml', '--suite', 'unit', '--url', url, '--token', WRITE_TOKEN, '--json'], {
      cwd: dir,
      env: gitlab,
    })
    expect(r.exitCode, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as { uploaded: { file: string; status: number }[]; failed: unknown[] }
    expect(out.failed).toEqual([])
    expect(out.uploaded).toEqual([expect.objectContaining({ file: 'junit.xml', status: 201 })])
    const runs = await store.listRuns({})
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ suite: 'unit', branch: 'main', revision: 'abc1234def', pipelineId: '4242' })
    const tests = await store.listTests({ suite: 'unit' })
    expect(tests.map((t) => t.name).sort()).toEqual(['cart adds items', 'cart applies coupon'])
  })

  it('tells the server the checkout’s root, so absolute paths give the ids `flakewatch ingest` gives here', async () => {
    const repo = testdir({ 'checkout/.git/HEAD': 'ref: refs/heads/main\n' })
    const checkout = join(repo, 'checkout')
    const jest = {
      numTotalTests: 1,
      testResults: [
        {
          name: join(checkout, 'src', 'cart.test.js'),
          assertionResults: [{ ancestorTitles: ['cart'], title: 'totals', status: 'passed', duration: 3 }],
        },
      ],
    }
    writeFileSync(join(checkout, 'jest.json'), JSON.stringify(jest))
    const args = ['--suite', 'root', '--run-id', 'root-1']
    const up = await runCli(['upload', 'jest.json', ...args, '--url', url, '--token', WRITE_TOKEN], { cwd: checkout })
    expect(up.exitCode, up.stderr).toBe(0)
    const local = join(checkout, 'local.db')
    expect((await runCli(['ingest', 'jest.json', ...args, '--db', local], { cwd: checkout })).exitCode).toBe(0)
    const ids = (await store.listTests({ suite: 'root' })).map((t) => t.testId)
    expect(ids).toEqual(['root::src/cart.test.js::cart › totals'])
    const shown = JSON.parse((await runCli(['show', ids[0]!, '--db', local, '--json'], { cwd: checkout })).stdout)
    expect(shown.test_id).toBe(ids[0])
  })

  it('never fails the build on a refused upload unless --strict, and says why', async () => {
    const bad = ['upload', 'junit.xml', '--url', url, '--token', 'not-the-token', '--retries', '0']
    const lenient = await runCli(bad, { cwd: dir, env: gitlab })
    expect(lenient.exitCode).toBe(0)
    expect(lenient.stderr).toMatch(/warning: upload of junit\.xml failed: HTTP 401/)
    const strict = await runCli([...bad, '--strict'], { cwd: dir, env: gitlab })
    expect(strict.exitCode).toBe(2)
    expect(strict.stderr).toMatch(/error: upload of junit\.xml failed: HTTP 401/)
  })

  it('refuses a missing --url and a file that matches nothing with exit 2', async () => {
    const noUrl = await runCli(['upload', 'junit.xml'], { cwd: dir, env: { FLAKEWATCH_URL: '' } })
    expect(noUrl.exitCode).toBe(2)
    expect(noUrl.stderr).toMatch(/--url or FLAKEWATCH_URL/)
    writeFileSync(join(dir, 'other.txt'), 'x')
    const missing = await runCli(['upload', 'nothing-*.xml', '--url', url], { cwd: dir })
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/no report matches "nothing-\*\.xml"/)
  })
})
