import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LeaderboardResponse } from '../../src/server/api-types.js'
import type { createApp as CreateApp } from '../../src/server/app.js'
import { createApp as createAppFromSource } from '../../src/server/app.js'
import type * as SnapshotBuilderModule from '../../src/server/snapshot-builder.js'
import { BACKGROUND_NICE } from '../../src/server/worker-priority.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, NOW, seed, tempDir } from './helpers.js'

// The worker thread runs compiled JavaScript, so this suite drives the build in dist/ (test/global-setup.ts keeps
// it current); from TypeScript sources the app builds in process, which every other suite covers.
const DIST_APP = join(import.meta.dirname, '..', '..', 'dist', 'server', 'app.js')
const DIST_BUILDER = join(import.meta.dirname, '..', '..', 'dist', 'server', 'snapshot-builder.js')

/** Counts the scans asked of `store` (on this thread): `scanHistory` is where analysis reads histories. */
function countScans(store: SqliteStore): () => number {
  let scans = 0
  const scan = store.scanHistory.bind(store)
  store.scanHistory = (filter) => {
    scans++
    return scan(filter)
  }
  return () => scans
}

describe.skipIf(!existsSync(DIST_APP))('analysis in a worker thread', () => {
  let createApp: typeof CreateApp
  let store: SqliteStore
  let file: string
  let cleanup: () => void
  beforeAll(async () => {
    ;({ createApp } = (await import(DIST_APP)) as { createApp: typeof CreateApp })
    const tmp = tempDir()
    cleanup = tmp.cleanup
    file = join(tmp.dir, 'fw.db')
    store = await openSqliteStore(file)
    await seed(store)
  })
  afterAll(async () => {
    await store.close()
    cleanup()
  })

  it('answers the same as an in-process build', async () => {
    const worker = await createApp({ store, db: file, config: config(), now: () => NOW, webRoot: null })
    const local = await createAppFromSource({ store, config: config(), now: () => NOW, webRoot: null })
    try {
      expect(worker.flakewatchAnalysis).toBe('worker')
      expect(local.flakewatchAnalysis).toBe('in-process')
      for (const url of ['/api/v1/leaderboard', '/api/v1/heatmap?last=5', '/api/v1/trends', '/api/v1/kiosk']) {
        const a = (await worker.inject({ method: 'GET', url })).json<Record<string, unknown>>()
        const b = (await local.inject({ method: 'GET', url })).json<Record<string, unknown>>()
        expect({ ...a, generated_at: 0 }, url).toEqual({ ...b, generated_at: 0 })
      }
    } finally {
      await worker.close()
      await local.close()
    }
  })

  it('a build cut short by closing is a stop, not a store failure the server would log as an error', async () => {
    const { createSnapshotBuilder, AnalysisStoppedError } = (await import(DIST_BUILDER)) as typeof SnapshotBuilderModule
    const { resolveAnalysisConfig } = await import('../../src/analysis/index.js')
    const builder = createSnapshotBuilder({ store, cfg: resolveAnalysisConfig({}), db: file })
    expect(builder.kind).toBe('worker')
    const build = builder.build({ env: [] }, NOW)
    await builder.close()
    await expect(build).rejects.toBeInstanceOf(AnalysisStoppedError)
  })

  it('asked after closing, answers that it stopped instead of starting a worker that nothing would stop', async () => {
    const { createSnapshotBuilder, AnalysisStoppedError } = (await import(DIST_BUILDER)) as typeof SnapshotBuilderModule
    const { resolveAnalysisConfig } = await import('../../src/analysis/index.js')
    const builder = createSnapshotBuilder({ store, cfg: resolveAnalysisConfig({}), db: file })
    expect(await builder.refresh({ maxRows: 10 })).toEqual(expect.objectContaining({ claimed: expect.any(Number) }))
    await builder.close()
    // A sweep's chunk or an upload's refresh asked late, as the server stops.
    await expect(builder.refresh({ maxRows: 10 })).rejects.toBeInstanceOf(AnalysisStoppedError)
    await expect(builder.build({ env: [] }, NOW)).rejects.toBeInstanceOf(AnalysisStoppedError)
  })

  it.skipIf(process.platform !== 'linux')('analyses at a lower priority than the thread that answers', async () => {
    // Linux keeps a nice value per thread: /proc/self/task/<tid>/stat, field 19 (after the command's parentheses).
    const nice = (task: string) =>
      Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ')[16])
    const lowered = () => readdirSync('/proc/self/task').filter((t) => nice(t) === BACKGROUND_NICE).length
    expect(nice(String(process.pid))).not.toBe(BACKGROUND_NICE)
    const before = lowered()
    const app = await createApp({ store, db: file, config: config(), now: () => NOW, webRoot: null })
    try {
      // A selection of the last runs is analysed from its histories, in the worker.
      expect((await app.inject({ method: 'GET', url: '/api/v1/leaderboard?last=100' })).statusCode).toBe(200)
      expect(lowered()).toBe(before + 1)
      expect(nice(String(process.pid))).not.toBe(BACKGROUND_NICE)
    } finally {
      await app.close()
    }
  })

  it('keeps input errors as 400s across the thread boundary, and sees writes', async () => {
    const app = await createApp({ store, db: file, config: config(), now: () => NOW, webRoot: null })
    try {
      const bad = await app.inject({ method: 'GET', url: '/api/v1/leaderboard?rev=nope...rev02' })
      expect(bad.statusCode).toBe(400)
      expect(bad.json<{ error: { code: string } }>().error.code).toBe('FW_INPUT')
      const before = (await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
      const body = '<testsuite name="s"><testcase classname="m" name="uploaded"/></testsuite>'
      const headers = { authorization: `Bearer ${config().server.writeToken}`, 'content-type': 'application/xml' }
      const url = '/api/v1/reports?suite=unit&run_id=w-1'
      const up = await app.inject({ method: 'POST', url, headers, payload: body })
      expect(up.statusCode).toBe(201)
      const after = (await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
      expect(after.total).toBe(before.total + 1)
    } finally {
      await app.close()
    }
  })

  it('has an upload stored on the main thread re-analysed in the analysis thread before its 201', async () => {
    const tmp = tempDir()
    const db = join(tmp.dir, 'up.db')
    const own = await openSqliteStore(db)
    const mainThreadScans = countScans(own)
    // Uploads on this thread (no worker process), no sweep: only the upload's own refresh can analyse its rows.
    const app = await createApp({
      store: own,
      db,
      config: config(),
      now: () => NOW,
      webRoot: null,
      uploadWorkers: false,
      analysisSweep: false,
    })
    try {
      expect(app.flakewatchUploads).toBe('in-process')
      const cases = Array.from({ length: 30 }, (_, i) => `<testcase classname="m${i % 3}" name="t${i}"/>`).join('')
      const headers = { authorization: `Bearer ${config().server.writeToken}`, 'content-type': 'application/xml' }
      const up = await app.inject({
        method: 'POST',
        url: '/api/v1/reports?suite=unit&run_id=main-thread-upload',
        headers,
        payload: `<testsuite name="s" timestamp="2026-03-01T10:00:00Z">${cases}</testsuite>`,
      })
      expect(up.statusCode).toBe(201)
      expect(JSON.stringify(up.json())).not.toMatch(/not refreshed/)
      expect(await own.analyses().analysisBacklog(Date.parse('2026-03-01T10:00:00Z') + 1)).toEqual({ rows: 30, due: 0 })
      expect(mainThreadScans()).toBe(0)
    } finally {
      await app.close()
      await own.close()
      tmp.cleanup()
    }
  })

  it('keeps the main thread free while a large store is analysed', async () => {
    const tmp = tempDir()
    const big = await openSqliteStore(join(tmp.dir, 'big.db'))
    const tests = Array.from({ length: 1000 }, (_, i) => `t-${i}`)
    for (let r = 0; r < 60; r++) {
      const run = runMeta(`big-${r}`, new Date(NOW - (r + 1) * 3_600_000).toISOString())
      await big.ingestReport(
        batch(
          run,
          tests.map((t) => result(t, (r + t.length) % 9 ? 'passed' : 'failed')),
        ),
      )
    }
    const db = join(tmp.dir, 'big.db')
    // The scan must happen off this thread: the request's store is never asked to scan.
    const mainThreadScans = countScans(big)
    // The sweep starts at once: its backlog (every test's row, stale since ingest) is analysed off this thread too.
    const app = await createApp({
      store: big,
      db,
      config: config(),
      now: () => NOW,
      webRoot: null,
      analysisSweep: { firstAfterMs: 0 },
    })
    try {
      // More stale rows than a read re-analyses: answers come at once, saying how many are pending, and fill in
      // as the sweep (in the worker) catches up.
      const first = (await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
      expect(first.pending).toBeGreaterThan(0)
      let answers = 1
      for (;;) {
        const board = (await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>()
        answers++
        if (board.total === 1000 && board.pending === undefined) break
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(answers).toBeGreaterThan(1)
      // The sweep analyses at the app's clock, as its reads do.
      const clock = NOW
      expect(await big.analyses().analysisBacklog(clock)).toEqual({ rows: 1000, due: 0 })
      expect(mainThreadScans()).toBe(0)
    } finally {
      await app.close()
      await big.close()
      tmp.cleanup()
    }
  }, 180_000)
})
