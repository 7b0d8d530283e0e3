import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTestId, type Result } from '../../src/model.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runMeta } from '../helpers/builders.js'
import { collector, tempDir, validate } from './helpers.js'
import { writeBundle } from '../../src/export/write-bundle.js'
import type { Bundle } from '../../src/export/bundle-types.js'

const TESTS = 2000
const NIGHTS = 365
const DAY = 86_400_000
const T0 = Date.UTC(2025, 0, 1, 2)
const NOW = T0 + NIGHTS * DAY
const MB = 1024 * 1024

const tmp = tempDir('fw-size-')
let store: SqliteStore

/**
 * A year of nightly runs of 2,000 tests, written straight into a store (730k results). Run ids have the shape
 * flakewatch gives GitLab jobs (`gitlab-<job id>`); names look like real pytest ids. About 1 in 50 results fails.
 */
beforeAll(async () => {
  store = await openSqliteStore(join(tmp.dir, 'year.db'))
  const tests = Array.from({ length: TESTS }, (_, i) => {
    const module = `tests/area_${i % 40}/test_feature_${i % 200}.py`
    const name = `test_case_${i}[param_${i % 7}]`
    return { testId: makeTestId('nightly', module, name), suite: 'nightly', module, name, file: null }
  })
  for (let night = 0; night < NIGHTS; night++) {
    const results: Result[] = tests.map((test, i) => ({
      test,
      status: (i * 7919 + night * 104729) % 50 === 0 ? 'failed' : 'passed',
      flakyOnRetry: false,
      durationMs: 100,
      errorType: null,
      message: null,
      healingOccurred: false,
      attempts: [],
    }))
    const run = runMeta(`gitlab-${8_000_000_000 + night * 1_237}`, new Date(T0 + night * DAY).toISOString(), {
      suite: 'nightly',
      pipelineId: String(1_400_000 + night),
      pipelineUrl: `https://gitlab.example.com/group/project/-/pipelines/${1_400_000 + night}`,
      env: { gfx_api: night % 2 ? 'dx12' : 'vulkan', quality: 'high' },
    })
    await store.ingestReport({ file: `n${night}`, contentHash: `h${night}`, runs: [{ run, results }] })
  }
}, 300_000)

afterAll(async () => {
  await store?.close()
  tmp.cleanup()
})

describe('bundle size: a year of nightly runs × 2,000 tests', () => {
  it('is the 730k run-id references plus a bounded per-test and per-run overhead (figures printed)', async () => {
    const out = collector()
    const summary = await writeBundle(store, out, { now: NOW, days: 366 })
    const text = out.text()
    const bundle = JSON.parse(text) as Bundle
    expect(summary).toMatchObject({ runs: NIGHTS, tests: TESTS, bytes: Buffer.byteLength(text) })
    expect(validate(bundle)).toEqual([])

    // The floor the schema sets: every result is one quoted run id plus a comma in passing_/failing_run_ids.
    let refBytes = 0
    let contexts = 0
    for (const t of bundle.tests) {
      contexts += t.results_by_context.length
      for (const c of t.results_by_context)
        for (const id of [...c.passing_run_ids, ...c.failing_run_ids]) refBytes += id.length + 3
    }
    const runsBytes = Buffer.byteLength(JSON.stringify(bundle.runs))
    const testOverhead = summary.bytes - refBytes - runsBytes
    const figures = {
      bytes: summary.bytes,
      mb: +(summary.bytes / MB).toFixed(2),
      refMb: +(refBytes / MB).toFixed(2),
      runsBytes,
      perTestOverhead: Math.round(testOverhead / TESTS),
      contextsPerTest: contexts / TESTS,
      runIdLength: bundle.runs[0]!.run_id.length,
    }
    console.log(JSON.stringify({ bundleSize: figures }))
    // Per test: its names and, per context, the facets, counts, rate and last status (≈ 360 bytes a context here).
    expect(testOverhead / TESTS).toBeLessThan(250 + 400 * (contexts / TESTS))
    expect(runsBytes / NIGHTS).toBeLessThan(1024)
    // So at this scale the size is set by the references: 730k × (id length + 3) bytes. 5 MB would need run ids of
    // at most two characters and no optional cell fields, which the contract (stable run ids) does not allow.
    expect(refBytes / summary.bytes).toBeGreaterThan(0.85)
  }, 120_000)
})
