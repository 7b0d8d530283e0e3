// REST API latency at 1M stored results (10,000 tests × 100 runs), over real HTTP on 127.0.0.1, beside the
// baseline measured in the same run: GET /healthz (one tiny store query, no analysis). Each endpoint gets a
// warm-up, then a bounded sequential loop of requests; p95 is the target (≤ 50 ms). Also reported: the cold
// analysis (first request, one full scan), and p95 while another instance's write forces a background rebuild.
// Run against the build: npx tsc -p tsconfig.build.json && node bench/server-api.mjs
import { join } from 'node:path'
import { benchStore, percentiles } from './lib/server-data.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const N = Number(process.env.BENCH_REQUESTS ?? 200)
const WARMUP = 10
const dist = join(import.meta.dirname, '..', process.env.BENCH_DIST ?? 'dist')
const log = (s) => process.stderr.write(`${s}\n`)
const emit = (row) => process.stdout.write(`${JSON.stringify({ bench: 'server-api', ...row })}\n`)

const { createApp } = await import(join(dist, 'server/app.js'))
const { resolveConfig } = await import(join(dist, 'config/load.js'))
const { openSqliteStore } = await import(join(dist, 'store/sqlite/sqlite-store.js'))

log(`server-api: ${TESTS} tests × ${RUNS} runs`)
const { store, file, reused } = await benchStore({ dist, name: 'server-api', tests: TESTS, runs: RUNS, log })
const stats = await store.stats()
log(`  store ${reused ? 'reused' : 'generated'}: ${stats.results} results`)
const scanStore = await openSqliteStore(file)
const config = { ...resolveConfig({}), file: null }
// As `flakewatch serve` does: analysis in a worker thread on its own connection, a second one for long scans.
const app = await createApp({ store, db: file, scanStore, config, webRoot: null })
log(`  analysis builds: ${app.flakewatchAnalysis}`)
await app.listen({ host: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${app.server.address().port}`

async function request(path) {
  const t = performance.now()
  const res = await fetch(`${base}${path}`)
  const body = await res.arrayBuffer()
  const ms = performance.now() - t
  if (!res.ok) throw new Error(`${path}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`)
  return { ms, bytes: body.byteLength }
}

async function measure(path, n = N) {
  for (let i = 0; i < WARMUP; i++) await request(path)
  const samples = []
  let bytes = 0
  for (let i = 0; i < n; i++) {
    const r = await request(path)
    samples.push(r.ms)
    bytes = r.bytes
  }
  return { ...percentiles(samples), bytes }
}

// Cold: the first analysed request waits for the one scan of every result.
const cold = await request('/api/v1/leaderboard?limit=50')
emit({
  metric: 'cold analysis (first leaderboard request, full scan) ms',
  value: Math.round(cold.ms),
  results: stats.results,
})

const top = (await (await fetch(`${base}/api/v1/leaderboard?limit=1`)).json()).rows[0].test_id
const enc = encodeURIComponent(top)
const endpoints = [
  ['GET /healthz (baseline)', '/healthz'],
  ['GET /api/v1/leaderboard?limit=50', '/api/v1/leaderboard?limit=50'],
  ['GET /api/v1/leaderboard sorted by name, page 100', '/api/v1/leaderboard?limit=50&sort=name&offset=5000'],
  ['GET /api/v1/leaderboard?search=', '/api/v1/leaderboard?limit=50&search=renders%20case%207'],
  ['GET /api/v1/heatmap?limit=200', '/api/v1/heatmap?limit=200'],
  ['GET /api/v1/heatmap (2,000 tests × 100 runs)', '/api/v1/heatmap?limit=2000'],
  ['GET /api/v1/trends', '/api/v1/trends'],
  ['GET /api/v1/kiosk', '/api/v1/kiosk'],
  ['GET /api/v1/facets', '/api/v1/facets'],
  ['GET /api/v1/runs?limit=50', '/api/v1/runs?limit=50'],
  ['GET /api/v1/tests?search=', '/api/v1/tests?search=feature_12&limit=50'],
  ['GET /api/v1/tests/:id', `/api/v1/tests/${enc}`],
  ['GET /api/v1/tests/:id/history?limit=100', `/api/v1/tests/${enc}/history?limit=100`],
  ['GET /api/v1/quarantine', '/api/v1/quarantine'],
]
let baseline = null
for (const [name, path] of endpoints) {
  const r = await measure(path)
  baseline ??= r.p95
  log(`  ${name}: p50 ${r.p50} p95 ${r.p95} p99 ${r.p99} max ${r.max} ms (${r.bytes} B)`)
  const ratio = Math.round((r.p95 / baseline) * 10) / 10
  const { p50, p99, n, bytes } = r
  emit({ metric: `${name} p95 ms`, value: r.p95, target: '≤ 50', p50, p99, n, bytes, vs_healthz: ratio })
}

// Another instance writes a new run: the next probe sees it and the snapshot is rebuilt in the background,
// while requests keep being answered from the previous one.
{
  const other = await openSqliteStore(file)
  const now = Date.now()
  const unknown = ['revision', 'pipelineId', 'pipelineUrl', 'jobId', 'jobUrl', 'artifactsUrl', 'jobStatus']
  const meta = Object.fromEntries([...unknown, 'pipelineStatus', 'runnerId'].map((k) => [k, null]))
  const startedAt = new Date(now).toISOString()
  const run = { ...meta, runId: `other-${now}`, suite: 'web', branch: 'main', env: {}, startedAt }
  const test = { testId: 'web::m::newcomer', suite: 'web', module: 'm', name: 'newcomer', file: null }
  const result = { test, status: 'passed', flakyOnRetry: false, durationMs: 1, errorType: null, message: null }
  await other.ingestReport({
    file: 'other.xml',
    contentHash: `other-${now}`,
    runs: [
      {
        run: { ...run, finishedAt: null, durationMs: null, status: 'complete' },
        results: [{ ...result, healingOccurred: false, attempts: [] }],
      },
    ],
  })
  await other.close()
  await new Promise((r) => setTimeout(r, 5100))
  const before = (await (await fetch(`${base}/api/v1/leaderboard?limit=1`)).json()).generated_at
  const samples = []
  const started = performance.now()
  let rebuiltAfter = null
  while (performance.now() - started < 60_000) {
    const t = performance.now()
    const res = await fetch(`${base}/api/v1/leaderboard?limit=50`)
    const body = await res.json()
    samples.push(performance.now() - t)
    if (body.generated_at !== before) {
      rebuiltAfter = performance.now() - started
      break
    }
  }
  const r = percentiles(samples)
  const rebuild = Math.round(rebuiltAfter ?? -1)
  log(`  during rebuild: ${r.n} requests, p50 ${r.p50} p95 ${r.p95} max ${r.max} ms; rebuilt after ${rebuild} ms`)
  const metric = 'GET /api/v1/leaderboard p95 during a background rebuild ms'
  emit({ metric, value: r.p95, target: '≤ 50', p50: r.p50, max: r.max, n: r.n, rebuild_ms: rebuild })
}

await app.close()
await scanStore.close()
await store.close()
