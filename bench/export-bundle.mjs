// Bundle export at 1M stored results (2,000 tests × 500 nightly runs), beside baselines measured in the same run:
// JSON.stringify of the very same bundle object (built in memory from the same scan), and the bare history scan.
// Peak RSS of the streaming export and of the build-then-stringify approach, each in its own process.
// Run against the build: npx tsc -p tsconfig.build.json && node bench/export-bundle.mjs
import { execFileSync } from 'node:child_process'
import { createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

const TESTS = Number(process.env.BENCH_TESTS ?? 2000)
const RUNS = Number(process.env.BENCH_RUNS ?? 500)
const REPS = Number(process.env.BENCH_REPS ?? 3)
const dir = join(import.meta.dirname, '.tmp', 'export-bundle')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const root = join(import.meta.dirname, '..')

const { openSqliteStore } = await import('../dist/store/sqlite/sqlite-store.js')
const { writeBundle } = await import('../dist/export/write-bundle.js')
const { bundleRun } = await import('../dist/export/bundle-run.js')
const { createBundleTest } = await import('../dist/export/bundle-test.js')
const { DEFAULT_CONTEXT_KEYS } = await import('../dist/export/bundle-types.js')

const DAY = 86_400_000
const T0 = Date.UTC(2025, 0, 1, 2)
const NOW = T0 + RUNS * DAY
const DAYS = RUNS + 1
const db = join(dir, 'store.db')

// Straight into the store through the real ingest path: one report per nightly run, ~2% failures.
{
  const store = await openSqliteStore(db)
  const tests = Array.from({ length: TESTS }, (_, i) => {
    const module = `tests/area_${i % 40}/test_feature_${i % 200}.py`
    const name = `test_case_${i}[param_${i % 7}]`
    return { testId: `nightly::${module}::${name}`, suite: 'nightly', module, name, file: null }
  })
  for (let r = 0; r < RUNS; r++) {
    const results = tests.map((test, i) => ({
      test,
      status: (i * 7919 + r * 104729) % 50 === 0 ? 'failed' : 'passed',
      flakyOnRetry: false,
      durationMs: 100,
      errorType: null,
      message: null,
      healingOccurred: false,
      attempts: [],
    }))
    const run = {
      runId: `gitlab-${8_000_000_000 + r * 1237}`,
      suite: 'nightly',
      branch: 'main',
      revision: `r${175_000 + r}`,
      pipelineId: String(1_400_000 + r),
      pipelineUrl: `https://gitlab.example.com/group/project/-/pipelines/${1_400_000 + r}`,
      jobId: null,
      jobUrl: null,
      artifactsUrl: null,
      jobStatus: 'success',
      pipelineStatus: null,
      runnerId: `runner-${r % 4}`,
      env: { gfx_api: r % 2 ? 'dx12' : 'vulkan', quality: 'high' },
      startedAt: new Date(T0 + r * DAY).toISOString(),
      finishedAt: new Date(T0 + r * DAY + 3_000_000).toISOString(),
      durationMs: 3_000_000,
      status: 'complete',
    }
    await store.ingestReport({ file: `n${r}`, contentHash: `h${r}`, runs: [{ run, results }] })
  }
  await store.close()
}
const results = TESTS * RUNS
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const store = await openSqliteStore(db)

// Baseline 1: the bare scan the export rides on.
const scanTimes = []
for (let i = 0; i < REPS; i++) {
  const t0 = performance.now()
  let n = 0
  for await (const h of store.scanHistory({ since: NOW - DAYS * DAY, until: NOW })) n += h.entries.length
  scanTimes.push(performance.now() - t0)
  if (n !== results) throw new Error(`scan saw ${n} of ${results}`)
}

// Baseline 2: the same bundle as one object, then JSON.stringify of it (only the stringify is timed).
async function buildInMemory() {
  const runs = (await store.listRuns({ since: NOW - DAYS * DAY, until: NOW })).reverse()
  const toTest = createBundleTest({ contextKeys: DEFAULT_CONTEXT_KEYS, runIds: new Set(runs.map((r) => r.runId)) })
  const tests = []
  for await (const h of store.scanHistory({ since: NOW - DAYS * DAY, until: NOW })) {
    const t = toTest(h)
    if (t) tests.push(t)
  }
  const head = {
    schema_version: 1,
    generated_at: new Date(NOW).toISOString(),
    generator: { name: 'flakewatch', version: 'bench' },
  }
  return { ...head, window: { retention_days: DAYS }, runs: runs.map((r) => bundleRun(r, DEFAULT_CONTEXT_KEYS)), tests }
}
const buildTimes = []
const stringifyTimes = []
let stringBytes = 0
for (let i = 0; i < REPS; i++) {
  let t0 = performance.now()
  const obj = await buildInMemory()
  buildTimes.push(performance.now() - t0)
  t0 = performance.now()
  const text = JSON.stringify(obj)
  stringifyTimes.push(performance.now() - t0)
  stringBytes = Buffer.byteLength(text)
}

// The export itself, end to end: scan, build each test, stringify it, stream it to a file.
const exportTimes = []
let summary
const file = join(dir, 'bundle.json')
for (let i = 0; i < REPS; i++) {
  const t0 = performance.now()
  summary = await writeBundle(store, createWriteStream(file), { now: NOW, days: DAYS })
  exportTimes.push(performance.now() - t0)
}
await store.close()
if (summary.tests !== TESTS || summary.runs !== RUNS || statSync(file).size !== summary.bytes)
  throw new Error('export incomplete')

// Peak RSS, each approach in its own process so that each figure is that process's high-water mark.
const child = (code) =>
  JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop(),
  )
const open = `const { openSqliteStore } = await import('./dist/store/sqlite/sqlite-store.js'); const store = await openSqliteStore(${JSON.stringify(db)})`
const baseRss = child(
  `${open}; await store.close(); console.log(JSON.stringify({ rss: process.resourceUsage().maxRSS / 1024 }))`,
)
const streamChild = (days) =>
  child(`${open}
  const { writeBundle } = await import('./dist/export/write-bundle.js')
  const { createWriteStream } = await import('node:fs')
  await writeBundle(store, createWriteStream(${JSON.stringify(join(dir, 'child.json'))}), { now: ${NOW}, days: ${days} })
  console.log(JSON.stringify({ rss: process.resourceUsage().maxRSS / 1024 }))`)
const streamRss = streamChild(DAYS)
// A quarter of the history: if memory is flat, the peak is about the same as for all of it.
const streamQuarterRss = streamChild(Math.ceil(DAYS / 4))
const memoryRss = child(`${open}
  const { bundleRun } = await import('./dist/export/bundle-run.js')
  const { createBundleTest } = await import('./dist/export/bundle-test.js')
  const { writeFileSync } = await import('node:fs')
  const keys = ['gfx_api', 'quality', 'custom_profile_hash']
  const runs = (await store.listRuns({ since: ${NOW - DAYS * DAY}, until: ${NOW} })).reverse()
  const toTest = createBundleTest({ contextKeys: keys, runIds: new Set(runs.map((r) => r.runId)) })
  const tests = []
  for await (const h of store.scanHistory({ since: ${NOW - DAYS * DAY}, until: ${NOW} })) { const t = toTest(h); if (t) tests.push(t) }
  writeFileSync(${JSON.stringify(join(dir, 'child-mem.json'))}, JSON.stringify({ schema_version: 1, runs: runs.map((r) => bundleRun(r, keys)), tests }))
  console.log(JSON.stringify({ rss: process.resourceUsage().maxRSS / 1024 }))`)

const ms = (x) => Math.round(x)
const figures = {
  results,
  tests: TESTS,
  runs: RUNS,
  bundleMb: +(summary.bytes / 1024 / 1024).toFixed(2),
  exportMs: ms(median(exportTimes)),
  stringifyMs: ms(median(stringifyTimes)),
  buildInMemoryMs: ms(median(buildTimes)),
  scanMs: ms(median(scanTimes)),
  ratioExportToStringify: +(median(exportTimes) / median(stringifyTimes)).toFixed(2),
  ratioExportToBuildPlusStringify: +(median(exportTimes) / (median(buildTimes) + median(stringifyTimes))).toFixed(2),
  ratioExportToScan: +(median(exportTimes) / median(scanTimes)).toFixed(2),
  peakRssMb: {
    openStoreOnly: Math.round(baseRss.rss),
    streamingExportQuarter: Math.round(streamQuarterRss.rss),
    streamingExport: Math.round(streamRss.rss),
    buildThenStringify: Math.round(memoryRss.rss),
  },
  stringifiedMb: +(stringBytes / 1024 / 1024).toFixed(2),
}
const line = (o) => console.log(JSON.stringify(o))
line({
  bench: 'export-bundle',
  metric: 'export ms at 1M results (median)',
  value: figures.exportMs,
  results,
  bundleMb: figures.bundleMb,
})
line({
  bench: 'export-bundle',
  metric: 'baseline: JSON.stringify of the same bundle object, ms',
  value: figures.stringifyMs,
})
line({ bench: 'export-bundle', metric: 'baseline: bare history scan, ms', value: figures.scanMs })
line({ bench: 'export-bundle', metric: 'ratio export / JSON.stringify', value: figures.ratioExportToStringify })
line({ bench: 'export-bundle', metric: 'ratio export / bare history scan', value: figures.ratioExportToScan })
line({
  bench: 'export-bundle',
  metric: 'ratio export / (build in memory + JSON.stringify)',
  value: figures.ratioExportToBuildPlusStringify,
})
line({
  bench: 'export-bundle',
  metric: 'peak RSS MB, streaming export',
  value: figures.peakRssMb.streamingExport,
  atQuarterOfTheData: figures.peakRssMb.streamingExportQuarter,
  openStoreOnly: figures.peakRssMb.openStoreOnly,
})
line({
  bench: 'export-bundle',
  metric: 'peak RSS MB, build then JSON.stringify',
  value: figures.peakRssMb.buildThenStringify,
})
line({ bench: 'export-bundle', metric: 'summary', value: figures.ratioExportToStringify, figures })
