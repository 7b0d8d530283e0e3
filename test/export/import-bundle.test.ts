import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { Bundle, BundleContextResult, BundleRun, BundleTest } from '../../src/export/bundle-types.js'
import { DEFAULT_CONTEXT_KEYS } from '../../src/export/bundle-types.js'
import { roundRate } from '../../src/export/bundle-test.js'
import { bundleBatches, importBundle, parseBundle } from '../../src/export/import-bundle.js'
import { InputError } from '../../src/errors.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'
import { exportBundle, FIXTURES, SAMPLE, tempDir, validate } from './helpers.js'

const tmp = tempDir('fw-import-')
afterAll(tmp.cleanup)
let n = 0
const newStore = () => openSqliteStore(join(tmp.dir, `s${n++}.db`))
const KEYS = DEFAULT_CONTEXT_KEYS
const sample = JSON.parse(readFileSync(SAMPLE, 'utf8')) as Bundle

/** Fields flakewatch adds to runs[] (allowed by v1's additionalProperties); a foreign bundle has none of them. */
const ADDITIVE_RUN_FIELDS = ['job_id', 'job_url', 'job_status', 'pipeline_status', 'pipeline_ref', 'uploaded_at', 'env']

type CellSet = { context: string; passing: string[]; failing: string[]; rest: Record<string, unknown> }

/** A cell with its id lists as sorted sets and its context as a key, so that cells compare regardless of order. */
function cellSet(c: BundleContextResult): CellSet {
  const { passing_run_ids, failing_run_ids, ...rest } = c
  return {
    context: JSON.stringify(KEYS.map((k) => c[k] ?? null)),
    passing: [...passing_run_ids].sort(),
    failing: [...failing_run_ids].sort(),
    rest,
  }
}
const cellSets = (cells: BundleContextResult[]) => cells.map(cellSet).sort((a, b) => a.context.localeCompare(b.context))

/**
 * What flakewatch makes of a test's cells: each result filed under its run's own facets (flakewatch has one
 * context per run), with counts, rate and last status recomputed. For a bundle whose cells agree with their
 * runs this is the identity, which the test checks.
 */
function regroup(test: BundleTest, runs: Map<string, BundleRun>): BundleContextResult[] {
  const status = new Map<string, 'pass' | 'fail'>()
  for (const c of test.results_by_context) {
    for (const id of c.passing_run_ids) status.set(id, 'pass')
    for (const id of c.failing_run_ids) status.set(id, 'fail')
  }
  const groups = new Map<string, BundleContextResult>()
  const started = (id: string) => Date.parse(runs.get(id)!.started_at!)
  for (const [id, s] of [...status].sort((a, b) => started(b[0]) - started(a[0]))) {
    const run = runs.get(id)!
    const key = JSON.stringify(KEYS.map((k) => run[k] ?? null))
    let g = groups.get(key)
    if (!g) {
      g = Object.fromEntries(KEYS.map((k) => [k, run[k] ?? null])) as BundleContextResult
      Object.assign(g, { passing_run_ids: [], failing_run_ids: [], last_status: s, last_run_id: id })
      groups.set(key, g)
    }
    ;(s === 'pass' ? g.passing_run_ids : g.failing_run_ids).push(id)
  }
  return [...groups.values()].map((g) => {
    const p = g.passing_run_ids.length
    const f = g.failing_run_ids.length
    return { ...g, pass_count: p, fail_count: f, pass_rate: roundRate(p / (p + f)) }
  })
}

describe('import bundle: the GitLabViz sample round-trips', () => {
  it('import, export, and every field is equivalent (runs and tests compared as sets)', async () => {
    const store = await newStore()
    const summary = await importBundle(store, SAMPLE)
    expect(summary).toMatchObject({ runs: 4, tests: 6, results: 15, duplicateRuns: [] })

    const { bundle } = await exportBundle(store, {
      now: Date.parse(sample.generated_at),
      days: sample.window!.retention_days,
    })
    expect(validate(bundle)).toEqual([])
    expect(bundle.schema_version).toBe(1)
    expect(bundle.window!.retention_days).toBe(sample.window!.retention_days)

    // runs[]: the same set; every field the sample has is equal; the rest are flakewatch's additive fields.
    const got = new Map(bundle.runs.map((r) => [r.run_id, r]))
    expect([...got.keys()].sort()).toEqual(sample.runs.map((r) => r.run_id).sort())
    for (const want of sample.runs) {
      const run = got.get(want.run_id)!
      for (const [k, v] of Object.entries(want)) expect(run[k], `${want.run_id}.${k}`).toEqual(v)
      for (const k of Object.keys(run).filter((k) => !(k in want))) {
        expect(ADDITIVE_RUN_FIELDS.concat('artifacts_url'), `${want.run_id}.${k}`).toContain(k)
        if (k === 'artifacts_url' || k.startsWith('job') || k === 'pipeline_status') expect(run[k], k).toBeNull()
      }
      expect(run.env).toEqual(Object.fromEntries(KEYS.filter((k) => want[k] != null).map((k) => [k, want[k]])))
    }

    // tests[]: the same set; identity, names and overall are equal; cells equal as sets, each result under its run's facets.
    const runs = new Map(sample.runs.map((r) => [r.run_id, r]))
    const tests = new Map(bundle.tests.map((t) => [t.test_id, t]))
    expect([...tests.keys()].sort()).toEqual(sample.tests.map((t) => t.test_id).sort())
    for (const want of sample.tests) {
      const t = tests.get(want.test_id)!
      expect({ ...t, results_by_context: null }).toEqual({ ...want, results_by_context: null })
      expect(cellSets(t.results_by_context), want.test_id).toEqual(cellSets(regroup(want, runs)))
    }
  })

  it('the sample files run 5cb34a1f (dx12) under vulkan in two tests; only those cells move, and import says so', async () => {
    const runs = new Map(sample.runs.map((r) => [r.run_id, r]))
    const moved = ['nightly::level_test.py::test_level[italy]', 'nightly::vehicle_test.py::test_drift[scintilla]']
    for (const t of sample.tests) {
      const same = isDeepStrictEqual(cellSets(regroup(t, runs)), cellSets(t.results_by_context))
      expect(same, t.test_id).toBe(!moved.includes(t.test_id))
    }
    const store = await newStore()
    const summary = await importBundle(store, SAMPLE)
    expect(summary.contextMismatches).toBe(2)
    expect(summary.mismatchExamples.map((m) => [m.testId, m.runId, m.cell.gfx_api, m.run.gfx_api])).toEqual([
      [moved[0], '5cb34a1f', 'vulkan', 'dx12'],
      [moved[1], '5cb34a1f', 'vulkan', 'dx12'],
    ])
    await store.close()
  })

  it('importing the same bundle again stores nothing twice', async () => {
    const store = await newStore()
    await importBundle(store, SAMPLE)
    const again = await importBundle(store, SAMPLE)
    expect(again).toMatchObject({ runs: 0, results: 0 })
    expect(again.duplicateRuns.sort()).toEqual(sample.runs.map((r) => r.run_id).sort())
    expect((await store.stats()).results).toBe(15)
    await store.close()
  })
})

describe('import bundle: flakewatch’s own bundles round-trip without loss', () => {
  it('export → import → export gives the same bundle (apart from upload times)', async () => {
    const store = await newStore()
    const t0 = Date.UTC(2026, 4, 1)
    const at = (d: number) => new Date(t0 + d * 86_400_000).toISOString()
    const env = (gfx: string) => ({ gfx_api: gfx, quality: 'high', os: 'linux' })
    await store.ingestReport(
      batch(
        runMeta('gitlab-1', at(1), {
          suite: 'nightly',
          revision: 'abc',
          pipelineId: '77',
          pipelineUrl: 'https://gitlab.example.com/g/p/-/pipelines/77',
          jobId: '1',
          jobUrl: 'https://gitlab.example.com/g/p/-/jobs/1',
          artifactsUrl: 'https://gitlab.example.com/g/p/-/jobs/1/artifacts/download',
          jobStatus: 'failed',
          pipelineStatus: 'failed',
          runnerId: 'r-1',
          env: env('dx12'),
          finishedAt: at(1.01),
          durationMs: 864_000,
        }),
        [
          result('a', 'passed', {}, 'nightly'),
          result('b', 'error', {}, 'nightly'),
          result('c', 'skipped', {}, 'nightly'),
        ],
      ),
    )
    await store.ingestReport(
      batch(
        runMeta('circle-2', at(2), {
          suite: 'nightly',
          pipelineId: 'wf-uuid-1',
          env: env('vulkan'),
          status: 'interrupted',
        }),
        [flakyResult('a', 'nightly'), result('b', 'failed', {}, 'nightly')],
      ),
    )
    await store.ingestReport(
      batch(runMeta('r-3', at(3), { suite: 'nightly', status: 'unknown', env: {} }), [
        result('a', 'failed', {}, 'nightly'),
      ]),
    )
    const now = t0 + 5 * 86_400_000
    const first = (await exportBundle(store, { now })).bundle
    expect(validate(first)).toEqual([])
    const file = join(tmp.dir, 'own.json')
    writeFileSync(file, JSON.stringify(first))

    const copy = await newStore()
    expect(await importBundle(copy, file)).toMatchObject({ runs: 3, tests: 2, results: 5, contextMismatches: 0 })
    const second = (await exportBundle(copy, { now })).bundle
    const strip = (b: Bundle) => ({
      ...b,
      window: { ...b.window, oldest_run_uploaded_at: null, newest_run_uploaded_at: null },
      runs: b.runs.map((r) => ({ ...r, uploaded_at: null })),
    })
    expect(strip(second)).toEqual(strip(first))
    await store.close()
    await copy.close()
  })
})

describe('import bundle: sparse bundles', () => {
  it('a bundle with only the required fields imports, and unknowns come back out as null', async () => {
    const store = await newStore()
    const file = join(FIXTURES, 'valid/required-only.json')
    expect(await importBundle(store, file)).toMatchObject({ runs: 1, tests: 1, results: 1 })
    // The run has no start time, so the store dates it at import: the window has to reach now.
    const { bundle } = await exportBundle(store, { now: Date.now() + 1000 })
    expect(validate(bundle)).toEqual([])
    expect(bundle.runs[0]).toMatchObject({
      run_id: 'r1',
      suite: null,
      pipeline_id: null,
      status: 'unknown',
    })
    // Undated in the bundle, so dated by its import.
    expect(bundle.runs[0]!.started_at).toBe(bundle.runs[0]!.uploaded_at)
    expect(bundle.tests[0]).toMatchObject({ test_id: 't', name: 't', suite: null, module: null })
    expect(bundle.tests[0]!.overall).toMatchObject({ pass_count: 0, fail_count: 1, flake_classification: 'broken' })
    await store.close()
  })
})

describe('import bundle: refusals', () => {
  const write = (name: string, data: unknown) => {
    const file = join(tmp.dir, name)
    writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data))
    return file
  }

  it('refuses a schema_version other than 1 with an InputError naming the file', async () => {
    const store = await newStore()
    const file = write('v2.json', { ...sample, schema_version: 2 })
    const err = await importBundle(store, file).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InputError)
    expect((err as InputError).message).toBe(
      `${file}: flake-history bundle schema_version 2 is not supported; flakewatch reads version 1`,
    )
    expect((await store.stats()).runs).toBe(0)
    await store.close()
  })

  it('names the file and the problem for JSON, schema and reference errors', () => {
    expect(() => parseBundle('{', 'x.json')).toThrow(/^x\.json: not JSON/)
    expect(() => parseBundle('[]', 'x.json')).toThrow(/^x\.json: not a flake-history bundle/)
    expect(() => parseBundle('{"runs":[]}', 'x.json')).toThrow('x.json: not a flake-history bundle (no schema_version)')
    const bad = readFileSync(join(FIXTURES, 'invalid/run-status-unknown-value.json'), 'utf8')
    expect(() => parseBundle(bad, 'b.json')).toThrow(
      /^b\.json: not a valid flake-history bundle v1: \/runs\/0\/status: must be equal to one of the allowed values/,
    )
    const unknownRun = structuredClone(sample)
    unknownRun.tests[0]!.results_by_context[0]!.passing_run_ids.push('nope')
    expect(() => parseBundle(JSON.stringify(unknownRun), 'u.json')).toThrow(
      /u\.json: tests\[0\]\.results_by_context\[0\]: run "nope" is not in runs\[\]/,
    )
    const both = structuredClone(sample)
    both.tests[0]!.results_by_context[0]!.failing_run_ids.push('5cb34a1f')
    expect(() => parseBundle(JSON.stringify(both), 'c.json')).toThrow(/both passed and failed in run "5cb34a1f"/)
    const twice = structuredClone(sample)
    twice.runs.push(twice.runs[0]!)
    expect(() => parseBundle(JSON.stringify(twice), 'd.json')).toThrow(/run_id "5cb34a1f" appears twice/)
  })

  it('a missing file is an InputError, not a crash', async () => {
    const store = await newStore()
    await expect(importBundle(store, join(tmp.dir, 'missing.json'))).rejects.toThrow(
      /missing\.json: cannot read: ENOENT/,
    )
    await store.close()
  })
})

describe('import bundle: batching', () => {
  it('stores a large bundle a batch of runs at a time, every run and result present', () => {
    const runs: BundleRun[] = Array.from({ length: 6 }, (_, i) => ({ run_id: `r${i}`, status: 'complete' }))
    const tests: BundleTest[] = Array.from({ length: 20_000 }, (_, i) => ({
      test_id: `s::m::t${i}`,
      name: `t${i}`,
      results_by_context: [{ passing_run_ids: runs.map((r) => r.run_id), failing_run_ids: [] }],
      overall: { pass_count: 6, fail_count: 0, is_flaky: false, flake_classification: 'stable' },
    }))
    const bundle: Bundle = { schema_version: 1, generated_at: '2026-01-01T00:00:00Z', runs, tests }
    const batches = [...bundleBatches(bundle, { file: 'f', contentHash: 'h' })]
    expect(batches.length).toBeGreaterThan(1)
    expect(batches.flatMap((b) => b.runs.map((r) => r.run.runId))).toEqual(runs.map((r) => r.run_id))
    expect(batches.reduce((s, b) => s + b.runs.reduce((x, r) => x + r.results.length, 0), 0)).toBe(120_000)
    const one = batches[0]!.runs[0]!.results[0]!
    expect(one).toMatchObject({ status: 'passed', test: { testId: 's::m::t0', suite: '', module: '', name: 't0' } })
  })
})
