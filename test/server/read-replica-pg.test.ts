import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { HealthResponse, LeaderboardResponse, RunsResponse, UploadResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { ReadReplica } from '../../src/server/read-replica.js'
import { parseLsn } from '../../src/store/postgres/replication.js'
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js'
import { resolveTestPg, resolveTestPgReplica, schemas } from '../store/pg-helpers.js'
import { auth, config, NOW, seed, until } from './helpers.js'

const primaryPg = await resolveTestPg()
const replicaPg = primaryPg.url === undefined ? primaryPg : await resolveTestPgReplica()
const skip = primaryPg.skip ?? replicaPg.skip

/** The replica's URL for the store a primary URL names: the same database and schema, on the replica's server. */
function onReplica(primaryUrl: string): string {
  const u = new URL(primaryUrl)
  const r = new URL(replicaPg.url!)
  u.host = r.host
  u.username = r.username
  u.password = r.password
  return u.toString()
}

/** One statement on the replica's server itself (pausing and resuming its replay). */
async function onReplicaServer(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: replicaPg.url! })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** A JUnit report of one test, its run stamped at `at`. */
const report = (name: string, at: number) =>
  `<testsuite name="s" timestamp="${new Date(at).toISOString().slice(0, 19)}"><testcase classname="m" name="${name}"/></testsuite>`

describe.skipIf(skip !== undefined)(`serve with a streaming read replica${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const pgs = schemas(primaryPg.url ?? '')
  let primary: PostgresStore
  let replica: ReadReplica
  let app: FastifyInstance
  const closing: (() => Promise<unknown>)[] = []

  beforeAll(async () => {
    const url = pgs.fresh()
    primary = await openPostgresStore(url)
    await seed(primary)
    // The replica answers once it has replayed the schema and the seed.
    const seeded = await primary.replication().walPosition()
    const probe = await openReplicaWhenReplayed(onReplica(url), seeded)
    await probe.close()
    replica = new ReadReplica({
      primary,
      location: 'the test replica',
      open: () => openPostgresStore(onReplica(url), { readOnly: true }),
    })
    app = await appWith(replica)
  }, 60_000)

  afterEach(() => onReplicaServer('SELECT pg_wal_replay_resume()'))

  afterAll(async () => {
    await onReplicaServer('SELECT pg_wal_replay_resume()').catch(() => undefined)
    for (const close of closing.splice(0)) await close()
    await app?.close()
    await primary?.close()
    await pgs.dropAll()
  })

  /** An app on the primary with reads through `readReplica`; uploads stored on this thread. */
  const appWith = (readReplica: ReadReplica) =>
    createApp({
      store: primary,
      config: config(),
      now: () => NOW,
      webRoot: null,
      analysisWorker: false,
      uploadWorkers: false,
      replica: readReplica,
    })
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })
  const runIds = (body: string) => (JSON.parse(body) as RunsResponse).runs.map((r) => r.run_id)

  it('reads from the replica, and a client sees its own upload while the replica is behind', async () => {
    const before = await get('/api/v1/runs?limit=100')
    expect(before.statusCode).toBe(200)
    expect(before.headers['x-flakewatch-read-from']).toBe('replica')
    expect(Number(before.headers['x-flakewatch-replica-lag-ms'])).toBeGreaterThanOrEqual(0)

    // Lag, induced: the replica keeps receiving WAL but stops replaying it.
    await onReplicaServer('SELECT pg_wal_replay_pause()')
    const upload = await app.inject({
      method: 'POST',
      url: '/api/v1/reports?suite=unit&run_id=during-lag',
      headers: { ...auth(), 'content-type': 'application/xml' },
      payload: report('newcomer', NOW - 3_600_000),
    })
    expect(upload.statusCode, upload.body).toBe(201)
    const written = upload.json<UploadResponse>().written_lsn!
    expect(parseLsn(written)).not.toBeNull()
    expect(upload.headers['x-flakewatch-written']).toBe(written)
    expect(String(upload.headers['set-cookie'])).toContain(`flakewatch_written=${written};`)

    // Everyone else reads the replica, which has not replayed the upload, and is told how far behind it is.
    const stale = await get('/api/v1/runs?limit=100')
    expect(stale.headers['x-flakewatch-read-from']).toBe('replica')
    expect(runIds(stale.body)).not.toContain('during-lag')
    await until(async () => {
      const health = (await get('/healthz')).json<HealthResponse>()
      return health.replica!.reachable && health.replica!.lag_bytes! > 0 && health.replica!.lag_ms! > 0
    }, 10_000)
    const lagging = await get('/api/v1/runs?limit=100')
    expect(Number(lagging.headers['x-flakewatch-replica-lag-ms'])).toBeGreaterThan(0)

    // The uploader presents its position, by header or by cookie: the primary answers, with its upload.
    const presented: Record<string, string>[] = [
      { 'x-flakewatch-written': written },
      { cookie: `theme=dark; flakewatch_written=${written}` },
    ]
    for (const headers of presented) {
      const own = await get('/api/v1/runs?limit=100', headers)
      expect(own.headers['x-flakewatch-read-from']).toBe('primary')
      expect(own.headers['x-flakewatch-replica-lag-ms']).toBeUndefined()
      expect(runIds(own.body)).toContain('during-lag')
      const history = await get(`/api/v1/tests/${encodeURIComponent('unit::m::newcomer')}/history`, headers)
      expect(history.statusCode).toBe(200)
    }
    expect((await get(`/api/v1/tests/${encodeURIComponent('unit::m::newcomer')}/history`)).statusCode).toBe(404)
    const board = (await get('/api/v1/leaderboard', { 'x-flakewatch-written': written })).json<LeaderboardResponse>()
    expect(board.rows.map((r) => r.name)).toContain('newcomer')

    // Replay resumes: the replica catches up, and the same read goes back to it, upload included.
    await onReplicaServer('SELECT pg_wal_replay_resume()')
    await until(async () => {
      const res = await get('/api/v1/runs?limit=100', { 'x-flakewatch-written': written })
      return res.headers['x-flakewatch-read-from'] === 'replica' && runIds(res.body).includes('during-lag')
    }, 20_000)
    const health = (await get('/healthz')).json<HealthResponse>()
    expect(health.replica!.reachable).toBe(true)
    expect(parseLsn(health.replica!.replayed_lsn!)! >= parseLsn(written)!).toBe(true)
  }, 60_000)

  it('answers a quarantine change with its position, and a read presenting it sees the change', async () => {
    await onReplicaServer('SELECT pg_wal_replay_pause()')
    const testId = encodeURIComponent('unit::mod::flaky')
    const put = await app.inject({
      method: 'PUT',
      url: `/api/v1/quarantine/${testId}`,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: { reason: 'flaky on CI', owner: 'team' },
    })
    expect(put.statusCode, put.body).toBeLessThan(300)
    const written = put.headers['x-flakewatch-written'] as string
    expect(parseLsn(written)).not.toBeNull()
    const list = async (headers: Record<string, string> = {}) => {
      const res = await get('/api/v1/quarantine', headers)
      return JSON.stringify(res.json()).includes('unit::mod::flaky')
    }
    expect(await list()).toBe(false)
    expect(await list({ 'x-flakewatch-written': written })).toBe(true)
  }, 30_000)

  it('reports a replica it cannot reach and reads from the primary', async () => {
    const unreachable = new ReadReplica({
      primary,
      location: 'postgres://postgres@127.0.0.1:1/test',
      open: () => openPostgresStore('postgres://postgres@127.0.0.1:1/test', { readOnly: true, connectTimeoutMs: 2000 }),
    })
    const other = await appWith(unreachable)
    closing.push(() => other.close())
    const health = await other.inject({ method: 'GET', url: '/healthz' })
    expect(health.statusCode).toBe(200)
    const replicaHealth = health.json<HealthResponse>().replica!
    expect(replicaHealth.reachable).toBe(false)
    expect(replicaHealth.error).toMatch(/127\.0\.0\.1:1|ECONNREFUSED|connect/i)
    const runs = await other.inject({ method: 'GET', url: '/api/v1/runs' })
    expect(runs.statusCode).toBe(200)
    expect(runs.headers['x-flakewatch-read-from']).toBe('primary')
    expect(runIds(runs.body).length).toBeGreaterThan(0)
  }, 30_000)
})

/** Opens the replica's store once the replica has replayed `position` (the schema's creation among it). */
async function openReplicaWhenReplayed(url: string, position: bigint): Promise<PostgresStore> {
  let store: PostgresStore | null = null
  await until(async () => {
    try {
      store ??= await openPostgresStore(url, { readOnly: true })
      const replayed = (await store.replication().replayState()).replayed
      return replayed !== null && replayed >= position
    } catch {
      return false
    }
  }, 30_000)
  return store!
}
