import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import type { LeaderboardResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { SELECTION_MAX_RESULTS } from '../../src/server/selection.js'
import { runState } from '../../src/server/snapshot.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, DAY, NOW, recordingScans, tempDir } from './helpers.js'

const cfg = resolveAnalysisConfig()
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Six runs of main and three of a feature branch, interleaved, each of ten tests. */
async function seeded(): Promise<Store> {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  cleanups.push(() => store.close())
  const tests = Array.from({ length: 10 }, (_, i) => `t${i}`)
  for (let r = 0; r < 9; r++) {
    const branch = r % 3 === 2 ? 'feature' : 'main'
    const run = runMeta(`r${r}`, new Date(NOW - (9 - r) * DAY).toISOString(), { branch })
    await store.ingestReport(
      batch(
        run,
        tests.map((t, i) => result(t, (r + i) % 4 ? 'passed' : 'failed')),
      ),
    )
  }
  return store
}

describe('a selection of results is analysed over a bounded window of its newest runs', () => {
  it('keeps the newest runs while their results fit the bound, and says it cut the rest', async () => {
    const store = await seeded()
    const main = { branch: 'main', env: [] }
    const all = await runState(store, main, cfg, NOW)
    expect(all.runs.map((r) => r.runId)).toEqual(['r7', 'r6', 'r4', 'r3', 'r1', 'r0'])
    expect(all.capped).toBe(false)
    const cut = await runState(store, main, cfg, NOW, 25)
    expect(cut.runs.map((r) => r.runId)).toEqual(['r7', 'r6'])
    expect(cut.capped).toBe(true)
    expect([...cut.runCounts.keys()].sort()).toEqual(['r6', 'r7'])
    // Its scan reads those runs' results only.
    expect(cut.filter.runIds).toEqual(['r7', 'r6'])
    // Whatever the bound, one run at least.
    expect((await runState(store, main, cfg, NOW, 1)).runs.map((r) => r.runId)).toEqual(['r7'])
    // The default selection is not cut: the persisted analyses answer it, and the impact page reads all its runs.
    const every = await runState(store, { env: [] }, cfg, NOW, 1)
    expect([every.runs.length, every.capped, every.filter.runIds]).toEqual([9, false, undefined])
  })

  it("answers a branch from its own runs' results, and says which runs it covers", async () => {
    const recorded = recordingScans(await seeded())
    const app = await createApp({
      store: recorded.store,
      config: config(),
      now: () => NOW,
      webRoot: null,
      analysisWorker: false,
      uploadWorkers: false,
      analysisSweep: false,
    })
    cleanups.push(() => app.close())
    const r = await app.inject({ method: 'GET', url: '/api/v1/leaderboard?branch=feature' })
    expect(r.statusCode).toBe(200)
    const board = r.json<LeaderboardResponse>()
    expect([board.runs, board.total]).toEqual([3, 10])
    expect(board.covers).toEqual({
      runs: 3,
      oldest_run_at: new Date(NOW - 7 * DAY).toISOString(),
      newest_run_at: new Date(NOW - 1 * DAY).toISOString(),
      capped: false,
      max_results: SELECTION_MAX_RESULTS,
    })
    const scans = recorded.filters.filter((f) => f.testIds === undefined)
    expect(scans.map((f) => f.runIds)).toEqual([['r8', 'r5', 'r2']])
    // The persisted analyses' answers cover no selection of their own.
    expect((await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).json<LeaderboardResponse>().covers).toBe(
      undefined,
    )
  })
})
