import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { BundleRun, BundleTest } from '../../src/export/bundle-types.js'
import { bundlePipelineId, bundleTime, bundleUri } from '../../src/export/bundle-run.js'
import { classifyByThresholds, classifyByVerdict } from '../../src/export/classify-bundle-test.js'
import { resolveBundleExport } from '../../src/export/write-bundle.js'
import { InputError } from '../../src/errors.js'
import type { Result, RunMeta } from '../../src/model.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { VERSION } from '../../src/version.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'
import { collector, exportBundle, tempDir, validate } from './helpers.js'

const tmp = tempDir('fw-bundle-')
afterAll(tmp.cleanup)
let n = 0
const newStore = () => openSqliteStore(join(tmp.dir, `s${n++}.db`))

const DAY = 86_400_000
const T0 = Date.UTC(2026, 4, 1)
const NOW = T0 + 30 * DAY
const iso = (ms: number) => new Date(ms).toISOString()

/** Stores one run per entry, `day` days after T0, with the given results. */
async function seed(store: Store, runs: { id: string; day: number; run?: Partial<RunMeta>; results: Result[] }[]) {
  for (const r of runs) await store.ingestReport(batch(runMeta(r.id, iso(T0 + r.day * DAY), r.run), r.results))
}

const byId = <T extends { run_id?: string; test_id?: string }>(list: T[]) =>
  new Map(list.map((x) => [(x.run_id ?? x.test_id)!, x]))

describe('export bundle: runs[]', () => {
  it('carries every field flakewatch knows, nulls what it does not, and validates', async () => {
    const store = await newStore()
    await seed(store, [
      {
        id: 'gitlab-9001',
        day: 20,
        run: {
          suite: 'nightly',
          branch: 'trunk',
          revision: '175518',
          pipelineId: '12345',
          pipelineUrl: 'https://gitlab.example.com/g/p/-/pipelines/12345',
          jobId: '9001',
          jobUrl: 'https://gitlab.example.com/g/p/-/jobs/9001',
          jobStatus: 'success',
          runnerId: 'runner-03',
          env: { gfx_api: 'dx12', quality: 'highest', os: 'windows' },
          finishedAt: iso(T0 + 20 * DAY + 3_240_000),
          durationMs: 3_240_400,
        },
        results: [result('a', 'passed', {}, 'nightly')],
      },
    ])
    const { bundle } = await exportBundle(store, { now: NOW })
    expect(validate(bundle)).toEqual([])
    const run = bundle.runs[0]!
    expect(run).toMatchObject({
      run_id: 'gitlab-9001',
      suite: 'nightly',
      gfx_api: 'dx12',
      quality: 'highest',
      custom_profile_hash: null,
      source_revision: '175518',
      source_branch: 'trunk',
      pipeline_id: 12345,
      pipeline_url: 'https://gitlab.example.com/g/p/-/pipelines/12345',
      artifacts_url: null,
      started_at: '2026-05-21T00:00:00Z',
      finished_at: '2026-05-21T00:54:00Z',
      duration_seconds: 3240,
      runner_id: 'runner-03',
      status: 'complete',
      job_id: '9001',
      job_url: 'https://gitlab.example.com/g/p/-/jobs/9001',
      job_status: 'success',
      pipeline_status: null,
      env: { gfx_api: 'dx12', quality: 'highest', os: 'windows' },
    })
    expect(Number.isInteger(run.duration_seconds)).toBe(true)
    expect(run).not.toHaveProperty('pipeline_ref')
    expect(Date.parse(run.uploaded_at as string)).toBeGreaterThan(0)
    await store.close()
  })

  it('a run whose report carried no start time starts when it was uploaded, so GitLabViz can date it', async () => {
    const store = await newStore()
    await seed(store, [{ id: 'no-times', day: 20, run: { startedAt: null }, results: [result('a', 'passed')] }])
    // The store dates an undated run at ingest: the window has to reach now.
    const { bundle } = await exportBundle(store, { now: Date.now() + 1000 })
    expect(validate(bundle)).toEqual([])
    const run = bundle.runs[0]!
    expect(run.started_at).not.toBeNull()
    expect(run.started_at).toBe(run.uploaded_at)
    await store.close()
  })

  it('pipeline_id is an integer only when the id is one; otherwise null, with the id kept as pipeline_ref', async () => {
    expect(bundlePipelineId('12345')).toBe(12345)
    expect(bundlePipelineId('0')).toBe(0)
    for (const id of ['a1b2-c3', '0012', '-5', '1.5', '', '99999999999999999', null])
      expect(bundlePipelineId(id)).toBeNull()
    const store = await newStore()
    await seed(store, [
      { id: 'circle', day: 20, run: { pipelineId: '5d5c3f0e-uuid' }, results: [result('a', 'passed')] },
    ])
    const { bundle } = await exportBundle(store, { now: NOW })
    expect(bundle.runs[0]).toMatchObject({ pipeline_id: null, pipeline_ref: '5d5c3f0e-uuid' })
    expect(validate(bundle)).toEqual([])
    await store.close()
  })

  it('interrupted runs keep status interrupted and finished_at null', async () => {
    const store = await newStore()
    await seed(store, [
      {
        id: 'r1',
        day: 20,
        run: { status: 'interrupted', finishedAt: iso(T0 + 20 * DAY + 60_000) },
        results: [result('a', 'failed')],
      },
    ])
    const { bundle } = await exportBundle(store, { now: NOW })
    expect(bundle.runs[0]).toMatchObject({ status: 'interrupted', finished_at: null })
    expect(bundle.tests[0]!.results_by_context[0]!.failing_run_ids).toEqual(['r1'])
    expect(validate(bundle)).toEqual([])
    await store.close()
  })

  it('writes values that would break the schema formats as null or in their valid form', () => {
    expect(bundleTime('2026-05-19T08:00:00.000Z')).toBe('2026-05-19T08:00:00Z')
    expect(bundleTime('2026-05-19T08:00:00.250Z')).toBe('2026-05-19T08:00:00.250Z')
    expect(bundleTime('yesterday')).toBeNull()
    expect(bundleTime(null)).toBeNull()
    expect(bundleUri('https://ci.example.com/a b')).toBe('https://ci.example.com/a%20b')
    expect(bundleUri('not a url')).toBeNull()
  })
})

describe('export bundle: tests[]', () => {
  async function contextsStore() {
    const store = await newStore()
    const dx = { env: { gfx_api: 'dx12', quality: 'high' } }
    const vk = { env: { gfx_api: 'vulkan', quality: 'high' } }
    await seed(store, [
      { id: 'r1', day: 20, run: dx, results: [result('a', 'passed'), result('b', 'skipped'), result('c', 'failed')] },
      { id: 'r2', day: 21, run: vk, results: [result('a', 'failed'), result('b', 'skipped'), result('c', 'failed')] },
      { id: 'r3', day: 22, run: dx, results: [result('a', 'error'), result('b', 'skipped'), result('c', 'failed')] },
      { id: 'r4', day: 23, run: vk, results: [result('a', 'passed'), result('c', 'failed')] },
      { id: 'r5', day: 24, run: dx, results: [result('a', 'passed'), result('c', 'skipped')] },
    ])
    return store
  }

  it('gives one results_by_context entry per facet combination, newest run first, with counts and last status', async () => {
    const store = await contextsStore()
    const { bundle } = await exportBundle(store, { now: NOW })
    expect(validate(bundle)).toEqual([])
    const a = byId(bundle.tests).get('unit::mod::a')!
    expect(a.results_by_context).toEqual([
      {
        gfx_api: 'dx12',
        quality: 'high',
        custom_profile_hash: null,
        passing_run_ids: ['r5', 'r1'],
        failing_run_ids: ['r3'],
        pass_count: 2,
        fail_count: 1,
        pass_rate: 0.6667,
        last_status: 'pass',
        last_run_id: 'r5',
      },
      {
        gfx_api: 'vulkan',
        quality: 'high',
        custom_profile_hash: null,
        passing_run_ids: ['r4'],
        failing_run_ids: ['r2'],
        pass_count: 1,
        fail_count: 1,
        pass_rate: 0.5,
        last_status: 'pass',
        last_run_id: 'r4',
      },
    ])
    expect(a.overall).toEqual({
      pass_count: 3,
      fail_count: 2,
      pass_rate: 0.6,
      is_flaky: true,
      flake_classification: 'intermittent',
    })
    expect(a).toMatchObject({ suite: 'unit', module: 'mod', name: 'a' })
    await store.close()
  })

  it('skipped results are neither passing nor failing; a test that was only skipped is left out', async () => {
    const store = await contextsStore()
    const { bundle } = await exportBundle(store, { now: NOW })
    const tests = byId(bundle.tests)
    expect(tests.has('unit::mod::b')).toBe(false)
    const c = tests.get('unit::mod::c')!
    const ids = c.results_by_context.flatMap((x) => [...x.passing_run_ids, ...x.failing_run_ids])
    expect(ids).not.toContain('r5')
    expect(c.overall).toMatchObject({ pass_count: 0, fail_count: 4, flake_classification: 'broken', is_flaky: false })
    // Runs are listed whether or not every test ran in them.
    expect(bundle.runs.map((r) => r.run_id)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5'])
    await store.close()
  })

  it('every run id a test references is in runs[], and every count matches its id list', async () => {
    const store = await contextsStore()
    const { bundle } = await exportBundle(store, { now: NOW })
    const runIds = new Set(bundle.runs.map((r) => r.run_id))
    expect(bundle.tests).toHaveLength(2)
    for (const t of bundle.tests) {
      let p = 0
      let f = 0
      for (const c of t.results_by_context) {
        for (const id of [...c.passing_run_ids, ...c.failing_run_ids]) expect(runIds.has(id)).toBe(true)
        expect(c.pass_count).toBe(c.passing_run_ids.length)
        expect(c.fail_count).toBe(c.failing_run_ids.length)
        p += c.pass_count!
        f += c.fail_count!
      }
      expect([t.overall.pass_count, t.overall.fail_count]).toEqual([p, f])
    }
    await store.close()
  })

  it('--context-keys picks the facets that make a context', async () => {
    const store = await newStore()
    await seed(store, [
      { id: 'r1', day: 20, run: { env: { browser: 'chromium', os: 'linux' } }, results: [result('a', 'passed')] },
      { id: 'r2', day: 21, run: { env: { browser: 'firefox', os: 'linux' } }, results: [result('a', 'failed')] },
      { id: 'r3', day: 22, run: { env: { os: 'linux' } }, results: [result('a', 'passed')] },
    ])
    const { bundle } = await exportBundle(store, { now: NOW, contextKeys: ['browser'] })
    expect(validate(bundle)).toEqual([])
    expect(bundle.runs[0]).toMatchObject({ browser: 'chromium' })
    expect(bundle.runs[0]).not.toHaveProperty('gfx_api')
    const cells = bundle.tests[0]!.results_by_context
    expect(cells.map((c) => [c.browser, c.passing_run_ids, c.failing_run_ids])).toEqual([
      ['chromium', ['r1'], []],
      ['firefox', [], ['r2']],
      [null, ['r3'], []],
    ])
    await store.close()
  })

  it('classification by thresholds follows GitLabViz, and is_flaky is true exactly for the in-between classes', () => {
    expect(classifyByThresholds(10, 0)).toEqual({ flake_classification: 'stable', is_flaky: false })
    expect(classifyByThresholds(95, 5)).toEqual({ flake_classification: 'stable', is_flaky: false })
    expect(classifyByThresholds(94, 6)).toEqual({ flake_classification: 'intermittent', is_flaky: true })
    expect(classifyByThresholds(1, 1)).toEqual({ flake_classification: 'intermittent', is_flaky: true })
    expect(classifyByThresholds(1, 3)).toEqual({ flake_classification: 'actively_flaky', is_flaky: true })
    expect(classifyByThresholds(0, 3)).toEqual({ flake_classification: 'broken', is_flaky: false })
  })

  it('classification by verdict maps flakewatch verdicts onto the four classes', () => {
    expect(classifyByVerdict('healthy', 3, 7)).toEqual({ flake_classification: 'stable', is_flaky: false })
    expect(classifyByVerdict('broken', 0, 3)).toEqual({ flake_classification: 'broken', is_flaky: false })
    // GitLabViz: broken means no passes. A regression after passes gets the class of its counts, and is not flaky.
    expect(classifyByVerdict('broken', 10, 4)).toEqual({ flake_classification: 'intermittent', is_flaky: false })
    expect(classifyByVerdict('broken', 97, 3)).toEqual({ flake_classification: 'stable', is_flaky: false })
    expect(classifyByVerdict('flaky', 10, 0)).toEqual({ flake_classification: 'intermittent', is_flaky: true })
    expect(classifyByVerdict('flaky', 1, 3)).toEqual({ flake_classification: 'actively_flaky', is_flaky: true })
    expect(classifyByVerdict('insufficient_data', 1, 1)).toEqual({
      flake_classification: 'intermittent',
      is_flaky: false,
    })
  })

  it('a test with a pass is never broken, in any mode, for any verdict and counts', () => {
    const verdicts = ['healthy', 'flaky', 'broken', 'insufficient_data'] as const
    for (let pass = 0; pass <= 20; pass++) {
      for (let fail = 0; fail <= 20; fail++) {
        const all = [classifyByThresholds(pass, fail), ...verdicts.map((v) => classifyByVerdict(v, pass, fail))]
        for (const c of all) {
          if (pass > 0) expect(c.flake_classification, `${pass} passes, ${fail} failures`).not.toBe('broken')
          // Broken (no passes) is never called flaky.
          if (c.flake_classification === 'broken') expect(c.is_flaky).toBe(false)
        }
      }
    }
  })

  it('--classification verdict uses the analysis: a fresh regression is not flaky, a retry pass is flaky', async () => {
    const store = await newStore()
    const runs = []
    for (let d = 0; d < 20; d++) {
      runs.push({
        id: `r${d}`,
        day: d,
        results: [
          // 17 passes then 3 failures: 85% pass rate (intermittent by thresholds), but a breakage by verdict.
          result('regressed', d < 17 ? 'passed' : 'failed'),
          d === 5 ? flakyResult('retried') : result('retried', 'passed'),
        ],
      })
    }
    await seed(store, runs)
    const now = T0 + 20 * DAY
    const thresholds = byId((await exportBundle(store, { now, days: 30 })).bundle.tests)
    expect(thresholds.get('unit::mod::regressed')!.overall.flake_classification).toBe('intermittent')
    expect(thresholds.get('unit::mod::retried')!.overall.flake_classification).toBe('stable')
    expect(thresholds.get('unit::mod::retried')!.overall).not.toHaveProperty('verdict')

    const { bundle } = await exportBundle(store, { now, days: 30, classification: 'verdict' })
    expect(validate(bundle)).toEqual([])
    const verdict = byId(bundle.tests)
    // Broken by verdict, but it passed 17 times in the window: the class of its counts, not flaky, verdict kept.
    expect(verdict.get('unit::mod::regressed')!.overall).toMatchObject({
      pass_count: 17,
      fail_count: 3,
      flake_classification: 'intermittent',
      is_flaky: false,
      verdict: 'broken',
    })
    expect(verdict.get('unit::mod::retried')!.overall).toMatchObject({
      flake_classification: 'intermittent',
      is_flaky: true,
      verdict: 'flaky',
    })
    expect(typeof verdict.get('unit::mod::retried')!.overall.verdict_reason).toBe('string')
    await store.close()
  })
})

describe('export bundle: envelope, window and filters', () => {
  it('has schema_version 1, generator flakewatch with its version, and the window of the runs it holds', async () => {
    const store = await newStore()
    await seed(store, [
      { id: 'old', day: 0, results: [result('a', 'passed')] },
      { id: 'r1', day: 20, results: [result('a', 'passed')] },
      { id: 'r2', day: 25, results: [result('a', 'failed')] },
    ])
    const { bundle, text } = await exportBundle(store, { now: NOW, days: 14 })
    expect(validate(bundle)).toEqual([])
    expect(Object.keys(bundle)).toEqual(['schema_version', 'generated_at', 'generator', 'window', 'runs', 'tests'])
    expect(bundle).toMatchObject({
      schema_version: 1,
      generated_at: bundleTime(NOW),
      generator: { name: 'flakewatch', version: VERSION },
    })
    expect(bundle.runs.map((r) => r.run_id)).toEqual(['r1', 'r2'])
    expect(bundle.window!.retention_days).toBe(14)
    const uploaded = bundle.runs.map((r) => r.uploaded_at as string).sort()
    expect(bundle.window).toMatchObject({ oldest_run_uploaded_at: uploaded[0], newest_run_uploaded_at: uploaded[1] })
    // The old run is outside the window, so no test may reference it.
    expect(text).not.toContain('"old"')
    // Compact JSON: no indentation.
    expect(text).not.toMatch(/\n\s/)
    await store.close()
  })

  it('--suite keeps only that suite’s runs', async () => {
    const store = await newStore()
    await seed(store, [
      { id: 'u1', day: 20, results: [result('a', 'passed')] },
      { id: 'e1', day: 21, run: { suite: 'e2e' }, results: [result('x', 'failed', {}, 'e2e')] },
    ])
    const { bundle } = await exportBundle(store, { now: NOW, suite: 'e2e' })
    expect(bundle.runs.map((r) => r.run_id)).toEqual(['e1'])
    expect(bundle.tests.map((t) => t.test_id)).toEqual(['e2e::mod::x'])
    await store.close()
  })

  it('an empty store gives a valid, empty bundle', async () => {
    const store = await newStore()
    const { bundle } = await exportBundle(store, { now: NOW })
    expect(validate(bundle)).toEqual([])
    expect(bundle).toMatchObject({
      runs: [],
      tests: [],
      window: { oldest_run_uploaded_at: null, newest_run_uploaded_at: null },
    })
    await store.close()
  })

  it('streams: a large export reaches the stream in many writes, not one string', async () => {
    const store = await newStore()
    const results = Array.from({ length: 3000 }, (_, i) =>
      result(`test_with_a_longish_name_${i}`, i % 7 ? 'passed' : 'failed'),
    )
    await seed(store, [
      { id: 'r1', day: 20, results },
      { id: 'r2', day: 21, results },
    ])
    const out = collector()
    const { writeBundle } = await import('../../src/export/write-bundle.js')
    const summary = await writeBundle(store, out, { now: NOW })
    expect(summary).toMatchObject({ runs: 2, tests: 3000, bytes: Buffer.byteLength(out.text()) })
    expect(out.writes).toBeGreaterThan(5)
    expect(validate(JSON.parse(out.text()))).toEqual([])
    await store.close()
  })

  it('rejects bad options with the flag named', () => {
    expect(() => resolveBundleExport({ days: 0 })).toThrow(/--days/)
    expect(() => resolveBundleExport({ days: 1.5 })).toThrow(InputError)
    expect(() => resolveBundleExport({ contextKeys: ['status'] })).toThrow(/--context-keys: "status"/)
    expect(() => resolveBundleExport({ contextKeys: ['a', 'a'] })).toThrow(/twice/)
    expect(() => resolveBundleExport({ classification: 'vibes' as never })).toThrow(/--classification/)
  })
})

export type { BundleRun, BundleTest }
