import { afterAll, describe, expect, it } from 'vitest'
import type { HealthResponse } from '../../src/server/api-types.js'
import { runCli, spawnServe, testdir } from '../helpers/run-cli.js'
import { resolveTestPg, resolveTestPgReplica, schemas } from '../store/pg-helpers.js'

const primaryPg = await resolveTestPg()
const replicaPg = primaryPg.url === undefined ? primaryPg : await resolveTestPgReplica()
const skip = primaryPg.skip ?? replicaPg.skip

describe('serve --read-db', () => {
  it('refuses a store that is not PostgreSQL, naming both flags (exit 2)', async () => {
    const dir = testdir({}, 'read-db-')
    const res = await runCli(['serve', '--db', 'fw.db', '--read-db', 'postgres://postgres@127.0.0.1:5433/test'], {
      cwd: dir,
    })
    expect(res.exitCode).toBe(2)
    expect(res.stderr).toMatch(/--read-db needs PostgreSQL: both --db and --read-db must be postgres:\/\/ URLs/)
  })

  describe.skipIf(skip !== undefined)(`with a streaming replica${skip ? ` (skipped: ${skip})` : ''}`, () => {
    const pgs = schemas(primaryPg.url ?? '')
    afterAll(() => pgs.dropAll())

    it('reads from the replica and reports its lag; an unreachable one is said at start and in /healthz', async () => {
      const db = pgs.fresh()
      const replicaUrl = new URL(db)
      replicaUrl.host = new URL(replicaPg.url!).host
      // The first server creates the schema on the primary; the replica has it once it has replayed that far.
      const first = await spawnServe(['--db', db, '--read-db', replicaUrl.toString()])
      try {
        await expect
          .poll(
            async () => {
              const health = (await (await fetch(`${first.url}/healthz`)).json()) as HealthResponse
              return health.replica?.reachable
            },
            { timeout: 30_000, interval: 250 },
          )
          .toBe(true)
        const runs = await fetch(`${first.url}/api/v1/runs`)
        expect(runs.status).toBe(200)
        expect(runs.headers.get('x-flakewatch-read-from')).toBe('replica')
        expect(Number(runs.headers.get('x-flakewatch-replica-lag-ms'))).toBeGreaterThanOrEqual(0)
      } finally {
        await first.close()
      }

      const down = await spawnServe(['--db', db, '--read-db', 'postgres://postgres@127.0.0.1:1/test'])
      try {
        expect(down.stderr()).toMatch(/the replica postgres:\/\/postgres@127\.0\.0\.1:1\/test is not used for now/)
        const health = (await (await fetch(`${down.url}/healthz`)).json()) as HealthResponse
        expect(health.status).toBe('ok')
        expect(health.replica).toMatchObject({ reachable: false, lag_ms: null, lag_bytes: null })
        const runs = await fetch(`${down.url}/api/v1/runs`)
        expect(runs.status).toBe(200)
        expect(runs.headers.get('x-flakewatch-read-from')).toBe('primary')
      } finally {
        await down.close()
      }
    }, 90_000)
  })
})
