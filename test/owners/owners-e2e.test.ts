import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/load.js'
import { bundleSchemaErrors } from '../../src/export/bundle-schema.js'
import { makeTestId, type Result } from '../../src/model.js'
import type { FacetsResponse, LeaderboardResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openStore } from '../../src/store/open.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

const gitlabCodeowners = readFileSync(join(ROOT, 'test', 'fixtures', 'codeowners', 'gitlab.CODEOWNERS'), 'utf8')

const test = (module: string, name: string, status: Result['status']): Result => ({
  ...result(name, status),
  test: { testId: makeTestId('unit', module, name), suite: 'unit', module, name, file: null },
})

describe('code owners in the CLI, the bundle and the API', () => {
  let dir: string
  const db = () => join(dir, 'fw.db')

  beforeAll(async () => {
    dir = testdir({ '.gitlab/CODEOWNERS': gitlabCodeowners }, 'owners-e2e-')
    const store = await openStore({ db: db() })
    try {
      for (let i = 0; i < 12; i++) {
        const run = runMeta(`r${i}`, new Date(Date.now() - (12 - i) * 3_600_000).toISOString())
        await store.ingestReport(
          batch(run, [
            test('spec/frontend/cart_spec.js', 'adds', i % 2 ? 'failed' : 'passed'),
            test('qa/specs/login_spec.rb', 'logs in', 'passed'),
            test('doc/user/index.md', 'doc example', 'passed'),
          ]),
        )
      }
    } finally {
      await store.close()
    }
  })
  afterAll(() => cleanup(dir))

  it('analyze --json carries owners, and --owner filters', async () => {
    const res = await runCli(['analyze', '--json', '--db', db()], { cwd: dir })
    expect(res.exitCode, res.stderr).toBe(0)
    const rows = JSON.parse(res.stdout) as { test_id: string; owners: string[] }[]
    const byId = new Map(rows.map((r) => [r.test_id, r.owners]))
    expect(byId.get('unit::spec/frontend/cart_spec.js::adds')).toContain('@gitlab-org/maintainers/frontend')
    expect(byId.get('unit::qa/specs/login_spec.rb::logs in')).toEqual(expect.arrayContaining(['@gl-quality']))
    expect(byId.get('unit::doc/user/index.md::doc example')).toEqual([])
    const only = await runCli(['analyze', '--json', '--db', db(), '--owner', '@gl-quality'], { cwd: dir })
    expect((JSON.parse(only.stdout) as { test_id: string }[]).map((r) => r.test_id)).toEqual([
      'unit::qa/specs/login_spec.rb::logs in',
    ])
    const show = await runCli(['show', 'unit::qa/specs/login_spec.rb::logs in', '--db', db()], { cwd: dir })
    expect(show.stdout).toMatch(/^owners: .*@gl-quality/m)
  })

  it('a quarantine without --owner takes the code owners, and quarantine list --owner filters', async () => {
    const add = await runCli(
      ['quarantine', 'add', 'unit::qa/specs/login_spec.rb::logs in', '--reason', 'flaky login', '--json', '--db', db()],
      { cwd: dir },
    )
    expect(add.exitCode, add.stderr).toBe(0)
    const [record] = JSON.parse(add.stdout) as { owner: string }[]
    expect(record!.owner.split(' ')).toContain('@gl-quality')
    await runCli(
      ['quarantine', 'add', 'unit::spec/frontend/cart_spec.js::adds', '--reason', 'x', '--owner', '@me', '--db', db()],
      { cwd: dir },
    )
    const mine = await runCli(['quarantine', 'list', '--owner', '@me', '--json', '--db', db()], { cwd: dir })
    const listing = JSON.parse(mine.stdout) as { quarantined: { test_id: string }[] }
    expect(listing.quarantined.map((r) => r.test_id)).toEqual(['unit::spec/frontend/cart_spec.js::adds'])
  })

  it('writes owners as an additive field of the bundle, which stays valid', async () => {
    const res = await runCli(['export', 'bundle', '--db', db()], { cwd: dir })
    expect(res.exitCode, res.stderr).toBe(0)
    const bundle = JSON.parse(res.stdout) as { tests: { test_id: string; owners?: string[] }[] }
    expect(bundleSchemaErrors(bundle)).toEqual([])
    const cart = bundle.tests.find((t) => t.test_id.endsWith('cart_spec.js::adds'))
    expect(cart?.owners).toContain('@gitlab-org/maintainers/frontend')
    expect(bundle.tests.find((t) => t.test_id.endsWith('doc example'))).not.toHaveProperty('owners')
  })

  it('serves owners on leaderboard rows and facets, and filters the leaderboard by owner', async () => {
    const store = await openStore({ db: db() })
    const config = { ...resolveConfig({}), file: join(dir, 'flakewatch.config.json') }
    const app = await createApp({ store, config, analysisWorker: false })
    try {
      const facets = (await app.inject({ method: 'GET', url: '/api/v1/facets' })).json<FacetsResponse>()
      expect(facets.owners).toContain('@gl-quality')
      const board = (
        await app.inject({ method: 'GET', url: `/api/v1/leaderboard?owner=${encodeURIComponent('@gl-quality')}` })
      ).json<LeaderboardResponse>()
      expect(board.rows.map((r) => r.test_id)).toEqual(['unit::qa/specs/login_spec.rb::logs in'])
      expect(board.total).toBe(1)
      expect(board.rows[0]!.owners).toContain('@gl-quality')
    } finally {
      await app.close()
      await store.close()
    }
  })
})
