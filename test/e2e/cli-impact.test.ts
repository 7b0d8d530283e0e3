import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ImpactResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openStore } from '../../src/store/open.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'
import { config, id, NOW, RUNS, seed } from '../server/helpers.js'

/**
 * `flakewatch impact` through the built CLI, on a real SQLite file: the figures of docs/impact.md, the same JSON as
 * `GET /api/v1/impact` over the same store, the API's options, and exit 2 for bad input.
 */
describe('flakewatch impact', () => {
  let dir: string
  const db = () => join(dir, 'fw.db')
  const impact = (...args: string[]) => runCli(['impact', '--db', db(), ...args], { cwd: dir })
  const json = async (...args: string[]) => {
    const res = await impact('--json', ...args)
    expect(res.exitCode, res.stderr).toBe(0)
    return JSON.parse(res.stdout) as ImpactResponse
  }

  beforeAll(async () => {
    dir = testdir({}, 'cli-impact-')
    const store = await openStore({ db: db() })
    try {
      await seed(store)
      await seed(store, { suite: 'e2e', prefix: 'e' })
    } finally {
      await store.close()
    }
  })
  afterAll(() => cleanup(dir))

  it('charges the flaky tests their failed attempts, in a table and in JSON', async () => {
    const body = await json()
    // Per suite, five retried passes (12 ms each) and five failures (10 ms each), as the API test counts them.
    const flaky = body.tests.find((t) => t.test_id === id('flaky'))!
    expect(flaky).toMatchObject({ time_lost_ms: 110, failures: 5, failed_attempts: 10, passes_on_retry: 5 })
    expect(body.tests.map((t) => t.test_id)).not.toContain(id('broken'))
    // Two suites, each with that test, one more flaky test (four failures, 10 ms each) and one broken.
    expect(body.totals).toMatchObject({ runs: 2 * RUNS, time_lost_ms: 300, failures: 18, flaky: 4, broken: 2 })
    expect(body.suites.map((s) => [s.suite, s.time_lost_ms])).toEqual([
      ['e2e', 150],
      ['unit', 150],
    ])
    expect(body.owners).toEqual([expect.objectContaining({ owner: null, tests: body.totals.tests })])
    expect(body.weeks.reduce((n, w) => n + w.time_lost_ms, 0)).toBe(300)

    const table = await impact()
    expect(table.exitCode, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^CI time lost to flaky tests: 300 ms in 28 failed attempt\(s\); 18 failure\(s\)/)
    expect(table.stdout).toMatch(/^unit::mod::flaky\s+14\s+110 ms\s+5\s+10\s+5\s+–$/m)
    expect(table.stdout).toMatch(/^\(no owner\)\s+12\s+4\s+2\s+300 ms/m)
  })

  it('gives the JSON the API gives for the same store and clock', async () => {
    const store = await openStore({ db: db() })
    const app = await createApp({ store, config: config(), now: () => NOW, webRoot: null, analysisWorker: false })
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/impact?limit=5' })
      expect(res.statusCode, res.body).toBe(200)
      const api = res.json<ImpactResponse>()
      const cli = await json('--limit', '5', '--as-of', new Date(NOW).toISOString())
      expect({ ...cli, generated_at: null }).toEqual({ ...api, generated_at: null })
    } finally {
      await app.close()
      await store.close()
    }
  })

  it('takes --suite, --branch, --since and --limit', async () => {
    const e2e = await json('--suite', 'e2e')
    expect(e2e.suites.map((s) => s.suite)).toEqual(['e2e'])
    expect(e2e.totals.runs).toBe(RUNS)
    const one = await json('--limit', '1')
    expect(one.tests).toHaveLength(1)
    expect(one.costly_tests).toBeGreaterThan(1)
    const none = await impact('--branch', 'nowhere')
    expect(none.exitCode).toBe(0)
    expect(none.stderr).toMatch(/no runs match \(branch nowhere\)/)
    // The last four runs of each suite: four weeks' runs no longer count.
    const late = await json('--since', new Date(NOW - 4 * 86_400_000).toISOString())
    expect(late.totals.runs).toBe(8)
  })

  it('exits 2 on bad input, naming it', async () => {
    for (const [args, message] of [
      [['--limit', '101'], /--limit: expected a whole number from 1 to 100/],
      [['--limit', 'x'], /--limit/],
      [['--since', 'yesterday-ish'], /--since: expected a date/],
      [['--as-of', 'soon'], /--as-of/],
    ] as const) {
      const res = await impact(...args)
      expect(res.exitCode, `${args.join(' ')}: ${res.stderr}`).toBe(2)
      expect(res.stderr).toMatch(message)
    }
    const missing = await runCli(['impact', '--db', join(dir, 'none.db')], { cwd: dir })
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/none\.db: no flakewatch database here/)
  })
})
