import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/load.js'
import { createProjectEntry, createProjectsApp } from '../../src/server/projects.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import type { Store } from '../../src/store/store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'

const pg = await resolveTestPg()

const SHOP = { write: 'shop-ci-token-0123456789', read: 'shop-read-token-0123456789' }
const API = { write: 'api-ci-token-0123456789', read: 'api-read-token-0123456789' }
const ORG = 'org-token-0123456789'

/** The same test id in both projects: `unit::cart::pays`, flaky in the shop, passing in the api. */
const junit = (failed: boolean, i: number) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="cart" tests="2" timestamp="2026-03-${String(1 + i).padStart(2, '0')}T10:00:00">
  <testcase classname="cart" name="pays" time="0.5">${failed ? '<failure message="timeout">at x</failure>' : ''}</testcase>
  <testcase classname="cart" name="lists" time="0.1"/>
</testsuite></testsuites>
`

if (pg.skip !== undefined) {
  console.warn(`multi-project PostgreSQL tests skipped: ${pg.skip}`)
  describe.skip(`two projects on one PostgreSQL server (skipped: ${pg.skip})`, () => {
    it('isolates projects by their tokens', () => undefined)
  })
} else {
  const db = schemas(pg.url)

  describe('two projects on one PostgreSQL server, isolated by their tokens', () => {
    let app: FastifyInstance
    let url = ''
    const stores: Store[] = []
    const dir = testdir(
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`r${i}.xml`, junit(i % 2 === 1, i)])),
      'projects-',
    )

    beforeAll(async () => {
      const config = { ...resolveConfig({}), file: null }
      const entries = []
      for (const [key, t] of [
        ['acme/shop', SHOP],
        ['acme/api', API],
      ] as const) {
        const dbUrl = db.fresh()
        const store = await openPostgresStore(dbUrl)
        stores.push(store)
        const project = { db: dbUrl, writeTokens: { ci: t.write }, readToken: t.read }
        entries.push(
          await createProjectEntry({
            key,
            project,
            store,
            config,
            app: { webRoot: null, analysisWorker: false, uploadWorkers: false },
          }),
        )
      }
      app = await createProjectsApp({ projects: entries, defaultProject: 'acme/shop', orgToken: ORG, bodyLimitMb: 10 })
      await app.listen({ host: '127.0.0.1', port: 0 })
      url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    })
    afterAll(async () => {
      await app?.close()
      for (const s of stores) await s.close()
      await db.dropAll()
    })

    const get = (path: string, token: string | null, project?: string) =>
      fetch(`${url}${path}`, {
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(project ? { 'x-flakewatch-project': project } : {}),
        },
      })
    const upload = (file: string, env: Record<string, string>, extra: string[] = []) =>
      runCli(['upload', file, '--url', url, '--suite', 'unit', '--json', ...extra], { cwd: dir, env })

    it('stores each upload in the project its CI names, with that project’s token', { timeout: 120_000 }, async () => {
      const shop = await upload('r*.xml', { GITHUB_REPOSITORY: 'acme/shop', FLAKEWATCH_WRITE_TOKEN: SHOP.write })
      expect(shop.exitCode, shop.stderr).toBe(0)
      expect(JSON.parse(shop.stdout).failed).toEqual([])
      const api = await upload('r0.xml', { FLAKEWATCH_WRITE_TOKEN: API.write }, [
        '--project',
        'acme/api',
        '--run-id',
        'api-0',
      ])
      expect(JSON.parse(api.stdout).failed).toEqual([])

      const shopRuns = (await (await get('/api/v1/runs', SHOP.read, 'acme/shop')).json()) as { runs: unknown[] }
      const apiRuns = (await (await get('/api/v1/runs?project=acme/api', API.read)).json()) as { runs: unknown[] }
      expect(shopRuns.runs).toHaveLength(8)
      expect(apiRuns.runs).toHaveLength(1)
      // The same test id lives in both projects, each with its own history.
      expect(((await stores[0]!.getTestHistory('unit::cart::pays'))?.entries ?? []).length).toBe(8)
      expect(((await stores[1]!.getTestHistory('unit::cart::pays'))?.entries ?? []).length).toBe(1)
    })

    it('refuses a token of one project on the other: reads, uploads and quarantines', { timeout: 60_000 }, async () => {
      expect((await get('/api/v1/runs', SHOP.read, 'acme/api')).status).toBe(401)
      expect((await get('/api/v1/runs', SHOP.write, 'acme/api')).status).toBe(401)
      expect((await get('/api/v1/runs', null, 'acme/api')).status).toBe(401)
      const cross = await upload('r1.xml', { FLAKEWATCH_WRITE_TOKEN: SHOP.write }, [
        '--project',
        'acme/api',
        '--run-id',
        'x',
      ])
      expect(JSON.parse(cross.stdout).failed).toEqual([expect.objectContaining({ status: 401 })])
      const put = await fetch(`${url}/api/v1/quarantine/${encodeURIComponent('unit::cart::pays')}`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${API.write}`,
          'x-flakewatch-project': 'acme/shop',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ reason: 'not yours' }),
      })
      expect(put.status).toBe(401)
      expect(await stores[0]!.listQuarantines()).toEqual([])
      expect((await stores[1]!.listRuns({})).map((r) => r.runId)).toEqual(['api-0'])
    })

    it('quarantines in one project only', async () => {
      const put = await fetch(`${url}/api/v1/quarantine/${encodeURIComponent('unit::cart::pays')}?project=acme/shop`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${SHOP.write}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'times out every other run' }),
      })
      expect(put.status, await put.text()).toBe(200)
      expect((await stores[0]!.listQuarantines()).map((q) => [q.testId, q.createdBy])).toEqual([
        ['unit::cart::pays', 'ci'],
      ])
      expect(await stores[1]!.listQuarantines()).toEqual([])
    })

    it('sends a request that names no project to the default one, and an unknown project gets 404', async () => {
      expect((await get('/api/v1/runs', SHOP.read)).status).toBe(200)
      expect((await get('/api/v1/runs', API.read)).status).toBe(401)
      expect((await get('/api/v1/runs', ORG, 'acme/nope')).status).toBe(404)
    })

    it('lists to each token the projects it reaches; the organisation token sees the overview', async () => {
      const list = async (token: string | null) => (await get('/api/v1/projects', token)).json() as Promise<unknown>
      expect(await list(SHOP.read)).toEqual({ default: 'acme/shop', projects: [{ key: 'acme/shop' }] })
      expect(await list(API.write)).toEqual({ default: 'acme/shop', projects: [{ key: 'acme/api' }] })
      expect(await list(ORG)).toEqual({ default: 'acme/shop', projects: [{ key: 'acme/shop' }, { key: 'acme/api' }] })
      expect((await get('/api/v1/projects', null)).status).toBe(401)

      expect((await get('/api/v1/overview', SHOP.read)).status).toBe(401)
      const overview = (await (await get('/api/v1/overview', ORG)).json()) as {
        projects: {
          project: string
          tests: number
          flaky: number
          quarantined: number
          ci_time_lost_ms: number
          top_flaky: { test_id: string }[]
        }[]
      }
      expect(overview.projects.map((p) => p.project)).toEqual(['acme/shop', 'acme/api'])
      const [shop, api] = overview.projects
      expect(shop).toMatchObject({ tests: 2, flaky: 1, quarantined: 1 })
      expect(shop!.top_flaky.map((t) => t.test_id)).toEqual(['unit::cart::pays'])
      expect(shop!.ci_time_lost_ms).toBe(2000)
      expect(api).toMatchObject({ tests: 2, flaky: 0, quarantined: 0, ci_time_lost_ms: 0, top_flaky: [] })
    })
  })
}
