import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/load.js'
import { makeTestId, type Result } from '../../src/model.js'
import type { FacetsResponse, ImpactResponse, LeaderboardResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openStore } from '../../src/store/open.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

/*
 * One rule for a test's owners everywhere: its file first, then its module when that is a path (CODEOWNERS is
 * about files). The cart test's file and module map to different owners; the stock test has only a module.
 */
const CODEOWNERS = '/web/ @team-web\n/lib/ @team-lib\n'
const CART = makeTestId('unit', 'lib/cart.ts', 'adds')
const STOCK = makeTestId('unit', 'lib/stock.test.ts', 'counts')

const cart = (status: Result['status']): Result => ({
  ...result('adds', status),
  test: { testId: CART, suite: 'unit', module: 'lib/cart.ts', name: 'adds', file: 'web/cart.test.ts' },
})
const stock = (status: Result['status']): Result => ({
  ...result('counts', status),
  test: { testId: STOCK, suite: 'unit', module: 'lib/stock.test.ts', name: 'counts', file: null },
})

describe('owners by file first, then module, in every owner filter', () => {
  let dir: string
  const db = () => join(dir, 'fw.db')

  beforeAll(async () => {
    dir = testdir({ CODEOWNERS }, 'owner-resolution-')
    const store = await openStore({ db: db() })
    try {
      for (let i = 0; i < 10; i++) {
        const run = runMeta(`r${i}`, new Date(Date.now() - (10 - i) * 3_600_000).toISOString(), { revision: 'x' })
        await store.ingestReport(batch(run, [cart(i % 2 ? 'failed' : 'passed'), stock('passed')]))
      }
    } finally {
      await store.close()
    }
  })
  afterAll(() => cleanup(dir))

  it('analyze --owner goes by the file, and by the module only where there is no file', async () => {
    const owned = async (owner: string) => {
      const res = await runCli(['analyze', '--json', '--db', db(), '--owner', owner], { cwd: dir })
      expect(res.exitCode, res.stderr).toBe(0)
      return (JSON.parse(res.stdout) as { test_id: string; owners: string[] }[]).map((r) => [r.test_id, r.owners])
    }
    expect(await owned('@team-web')).toEqual([[CART, ['@team-web']]])
    expect(await owned('@team-lib')).toEqual([[STOCK, ['@team-lib']]])
  })

  it('the leaderboard, its facets and the impact page agree with it', async () => {
    const store = await openStore({ db: db() })
    const config = { ...resolveConfig({}), file: join(dir, 'flakewatch.config.json') }
    const app = await createApp({ store, config, analysisWorker: false })
    const get = async <T>(url: string) => {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, res.body).toBe(200)
      return res.json<T>()
    }
    try {
      const web = await get<LeaderboardResponse>(`/api/v1/leaderboard?owner=${encodeURIComponent('@team-web')}`)
      expect(web.rows.map((r) => [r.test_id, r.owners])).toEqual([[CART, ['@team-web']]])
      expect(web.total).toBe(1)
      const lib = await get<LeaderboardResponse>(`/api/v1/leaderboard?owner=${encodeURIComponent('@team-lib')}`)
      expect(lib.rows.map((r) => r.test_id)).toEqual([STOCK])
      expect((await get<FacetsResponse>('/api/v1/facets')).owners).toEqual(['@team-lib', '@team-web'])
      const impact = await get<ImpactResponse>('/api/v1/impact')
      const groups = new Map(impact.owners.map((g) => [g.owner, g.tests]))
      expect(groups).toEqual(
        new Map([
          ['@team-web', 1],
          ['@team-lib', 1],
        ]),
      )
    } finally {
      await app.close()
      await store.close()
    }
  })
})
