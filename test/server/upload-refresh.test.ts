import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import type { IngestSummary } from '../../src/pipeline/ingest-files.js'
import { REFRESH_BEFORE_ANSWER_ROWS, refreshAnalyses, storeClock } from '../../src/pipeline/persisted-analyses.js'
import type { UploadResponse } from '../../src/server/api-types.js'
import type { createApp as CreateApp } from '../../src/server/app.js'
import { createSnapshotBuilder } from '../../src/server/snapshot-builder.js'
import { ingestUpload, type UploadJob } from '../../src/server/upload-job.js'
import { UploadPool } from '../../src/server/upload-pool.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { config, tempDir, WRITE_TOKEN } from './helpers.js'

const DIST_APP = join(import.meta.dirname, '..', '..', 'dist', 'server', 'app.js')

const pg = await resolveTestPg()
const cfg = resolveAnalysisConfig()

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface Backend {
  name: string
  /** A new store's location: a SQLite file or a PostgreSQL schema's URL. */
  db(): string
  open(db: string): Promise<Store>
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    db() {
      const tmp = tempDir()
      cleanups.push(tmp.cleanup)
      return join(tmp.dir, 'fw.db')
    },
    open: (db) => openSqliteStore(db),
  },
]
const pgSchemas = pg.url === undefined ? null : schemas(pg.url)
if (pgSchemas) {
  afterAll(() => pgSchemas.dropAll())
  backends.push({ name: 'PostgreSQL', db: () => pgSchemas.fresh(), open: (db) => openPostgresStore(db) })
}

/** Upload `k` of one suite: the same 30 tests in 3 files, one failing in turn, a run of its own an hour apart. */
function upload(k: number): UploadJob {
  const cases = Array.from({ length: 30 }, (_, i) =>
    i === k % 30
      ? `<testcase classname="m${i % 3}" name="t${i}"><failure message="boom"/></testcase>`
      : `<testcase classname="m${i % 3}" name="t${i}"/>`,
  ).join('')
  const at = new Date(Date.UTC(2026, 2, 1, k)).toISOString()
  const content = Buffer.from(`<testsuite name="s" timestamp="${at}">${cases}</testsuite>`)
  return {
    files: [{ name: `u${k}.xml`, hash: createHash('sha256').update(content).digest('hex'), path: null, content }],
    context: { suite: 'unit', runId: `run-${k}` },
    format: undefined,
    replace: false,
    root: null,
    analysis: {},
  }
}

const runIdsOf = (s: IngestSummary) => s.ingested.map((i) => i.run_id)

for (const backend of backends) {
  describe(`uploads re-analysed together before their answers (${backend.name})`, () => {
    it('re-analyses uploads stored one after another in one refresh, and answers each with its rows current', async () => {
      const store = await backend.open(backend.db())
      cleanups.push(() => store.close())
      const calls: { runIds: string[]; maxRows: number }[] = []
      const pool = new UploadPool({
        store,
        capacity: 16,
        worker: false,
        refresh: (runIds, maxRows) => {
          calls.push({ runIds: [...runIds].sort(), maxRows })
          return refreshAnalyses(store, cfg, { runIds, maxRows })
        },
      })
      cleanups.push(() => pool.close())
      const summaries = await Promise.all([0, 1, 2, 3].map((k) => pool.run(pool.reserve()!, upload(k))))
      // Stored one at a time (one writer on this thread), re-analysed once, after the last of them was stored.
      expect(calls).toEqual([{ runIds: ['run-0', 'run-1', 'run-2', 'run-3'], maxRows: 4 * REFRESH_BEFORE_ANSWER_ROWS }])
      expect(summaries.map(runIdsOf)).toEqual([['run-0'], ['run-1'], ['run-2'], ['run-3']])
      expect(summaries.flatMap((s) => s.ingested.flatMap((i) => i.warnings ?? []))).toEqual([])
      expect(await store.analyses().analysisBacklog(await storeClock(store))).toEqual({ rows: 30, due: 0 })
      // Nothing stored is lost, and the same upload again adds nothing and asks for no refresh.
      expect((await store.stats()).results).toBe(120)
      const again = await pool.run(pool.reserve()!, upload(2))
      expect(again.duplicates.map((d) => d.run_id)).toEqual(['run-2'])
      expect(again.ingested).toEqual([])
      expect((await store.stats()).results).toBe(120)
      expect(calls).toHaveLength(1)
    })

    it('stores no upload while a refresh runs, and answers with a warning when a refresh fails', async () => {
      const store = await backend.open(backend.db())
      cleanups.push(() => store.close())
      const calls: string[][] = []
      const gate: { release?: () => void } = {}
      const pool = new UploadPool({
        store,
        capacity: 16,
        worker: false,
        refresh: async (runIds, maxRows) => {
          calls.push([...runIds])
          if (calls.length === 1) {
            // The first refresh holds until released, then fails: its rows stay stale for the sweep.
            await new Promise<void>((resolve) => (gate.release = resolve))
            throw new Error('the analysis thread is gone')
          }
          return refreshAnalyses(store, cfg, { runIds, maxRows })
        },
      })
      cleanups.push(() => pool.close())
      const first = pool.run(pool.reserve()!, upload(0))
      while (gate.release === undefined) await store.stats()
      const second = pool.run(pool.reserve()!, upload(1))
      // Queued, not stored: a commit now would mark the rows being re-analysed stale again.
      await store.stats()
      expect((await store.runSummaries({})).map((r) => r.runId)).toEqual(['run-0'])
      gate.release()
      const a = await first
      expect(a.ingested[0]!.warnings).toEqual([expect.stringMatching(/not refreshed.*analysis thread is gone/)])
      const b = await second
      expect(b.ingested[0]!.warnings).toBeUndefined()
      expect(calls).toEqual([['run-0'], ['run-1']])
      expect((await store.runSummaries({})).map((r) => r.runId).sort()).toEqual(['run-0', 'run-1'])
      // The second refresh took the files both uploads marked: every row is current again.
      expect(await store.analyses().analysisBacklog(await storeClock(store))).toEqual({ rows: 30, due: 0 })
    })

    it("runs one refresh at a time, an upload's before those waiting: it waits for the chunk in flight only", async () => {
      const store = await backend.open(backend.db())
      cleanups.push(() => store.close())
      // Stored, not yet re-analysed: its 30 rows are stale.
      await ingestUpload(store, { ...upload(0), analysis: undefined })
      // The sweep's chunk is held after its claim, where it reads the histories of the rows it leased.
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      let holding!: () => void
      const held = new Promise<void>((resolve) => (holding = resolve))
      const scan = store.scanHistory.bind(store)
      let first = true
      store.scanHistory = (filter) => {
        if (!first) return scan(filter)
        first = false
        holding()
        return (async function* () {
          await released
          yield* scan(filter)
        })()
      }
      const builder = createSnapshotBuilder({ store, cfg, worker: false })
      const settled: string[] = []
      const sweep = builder.refresh({ maxRows: 500 }).finally(() => settled.push('sweep'))
      await held
      // A read's refresh asks first, then the upload's: the upload's goes first.
      const read = builder.refresh({ maxRows: 500 }).finally(() => settled.push('read'))
      const own = builder.refresh({ runIds: ['run-0'], maxRows: REFRESH_BEFORE_ANSWER_ROWS }).then(async (outcome) => {
        settled.push('upload')
        return { outcome, backlog: await store.analyses().analysisBacklog(await storeClock(store)) }
      })
      // Not waiting its turn, the upload's refresh would run now, beside the held chunk, and skip or redo its rows.
      await new Promise((resolve) => setTimeout(resolve, 200))
      release()
      const [swept, upload0, afterwards] = await Promise.all([sweep, own, read])
      expect(settled).toEqual(['sweep', 'upload', 'read'])
      expect(swept).toEqual({ claimed: 30, written: 30 })
      expect(afterwards).toEqual({ claimed: 0, written: 0 })
      // The chunk it waited for analysed its rows: nothing was left, and every row was current at its answer.
      expect(upload0).toEqual({ outcome: { claimed: 0, written: 0 }, backlog: { rows: 30, due: 0 } })
    })

    it.skipIf(!existsSync(DIST_APP))(
      'answers uploads stored by worker processes once their rows are current (the analysis thread re-analyses them)',
      async () => {
        const { createApp } = (await import(DIST_APP)) as { createApp: typeof CreateApp }
        const db = backend.db()
        const store = await backend.open(db)
        cleanups.push(() => store.close())
        // No sweep: only the uploads' own refresh can analyse their rows.
        const app = await createApp({ store, db, config: config(), webRoot: null, analysisSweep: false })
        cleanups.push(() => app.close())
        expect(app.flakewatchUploads).toBe('worker')
        const headers = { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/xml' }
        const answers = await Promise.all(
          [0, 1, 2].map((k) =>
            app.inject({
              method: 'POST',
              url: `/api/v1/reports?suite=unit&run_id=w-${k}`,
              headers,
              payload: Buffer.from(upload(k).files[0]!.content!),
            }),
          ),
        )
        expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201])
        const warnings = answers.flatMap((a) => a.json<UploadResponse>().ingested.flatMap((i) => i.warnings ?? []))
        expect(warnings).toEqual([])
        expect(await store.analyses().analysisBacklog(await storeClock(store))).toEqual({ rows: 30, due: 0 })
      },
    )
  })
}
