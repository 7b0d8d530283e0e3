import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { LeaderboardResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { auth, config, DAY, NOW, recordingScans, seed, START, tempDir, until } from './helpers.js'

const pg = await resolveTestPg()

/** Two stores on one location, as two `flakewatch serve` processes behind a load balancer would open it. */
interface Backend {
  name: string
  open(): Promise<{ a: Store; b: Store; cleanup: () => Promise<void> | void }>
}

const backends: Backend[] = [
  {
    name: 'one SQLite file',
    async open() {
      const tmp = tempDir()
      const file = join(tmp.dir, 'fw.db')
      const a = await openSqliteStore(file)
      const b = await openSqliteStore(file)
      return { a, b, cleanup: () => tmp.cleanup() }
    },
  },
]
const pgSchemas = pg.url === undefined ? null : schemas(pg.url)
if (pgSchemas) {
  afterAll(() => pgSchemas.dropAll())
  backends.push({
    name: 'one PostgreSQL schema',
    async open() {
      const url = pgSchemas.fresh()
      const a = await openPostgresStore(url)
      const b = await openPostgresStore(url)
      return { a, b, cleanup: () => undefined }
    },
  })
} else {
  console.warn(`two instances on PostgreSQL skipped: ${pg.skip}`)
  describe.skip(`two instances on one PostgreSQL schema (skipped: ${pg.skip})`, () => {
    it('shows an upload through one instance on the other', () => undefined)
  })
}

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A JUnit report of one test, its run stamped at `at`. */
const report = (name: string, at: number) =>
  `<testsuite name="s" timestamp="${new Date(at).toISOString().slice(0, 19)}"><testcase classname="m" name="${name}"/></testsuite>`

for (const backend of backends) {
  describe(`two instances on ${backend.name}`, () => {
    it('shows an upload through one instance on the other, without a full scan', async () => {
      const { a, b, cleanup } = await backend.open()
      cleanups.push(
        cleanup,
        () => a.close(),
        () => b.close(),
      )
      await seed(a)
      const recorded = recordingScans(b)
      const app = (store: Store): Promise<FastifyInstance> =>
        createApp({
          store,
          config: config(),
          now: () => NOW,
          webRoot: null,
          analysisWorker: false,
          uploadWorkers: false,
          // Every read probes: what is measured is that the write is found, not how soon.
          cache: { ttlMs: 0 },
        })
      const [appA, appB] = await Promise.all([app(a), app(recorded.store)])
      cleanups.push(
        () => appA.close(),
        () => appB.close(),
      )
      const board = async (target: FastifyInstance) =>
        (await target.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
      const before = await board(appB)
      expect(before.rows.map((r) => r.name)).not.toContain('newcomer')

      const upload = (runId: string, body: string) =>
        appA.inject({
          method: 'POST',
          url: `/api/v1/reports?suite=unit&run_id=${runId}`,
          headers: { ...auth(), 'content-type': 'application/xml' },
          payload: body,
        })
      expect((await upload('up-new', report('newcomer', NOW - 3_600_000))).statusCode).toBe(201)
      // A report of long ago: not among the newest runs, yet written now.
      expect((await upload('up-old', report('old-timer', START + DAY + 3_600_000))).statusCode).toBe(201)

      await until(async () => {
        const names = (await board(appB)).rows.map((r) => r.name)
        return names.includes('newcomer') && names.includes('old-timer')
      }, 10_000)
      // No full scan: B answers from the persisted analyses, which A's uploads refreshed by reading their tests
      // by id (B reads only the few rows that its clock found stale, by id too).
      expect(recorded.filters.filter((f) => f.testIds === undefined)).toHaveLength(0)
      // And the answer is the one the instance that took the uploads gives.
      const [onA, onB] = await Promise.all([board(appA), board(appB)])
      expect({ ...onB, generated_at: null }).toEqual({ ...onA, generated_at: null })
    })
  })
}
