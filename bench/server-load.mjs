// The team server under continuous load, at 1M stored results (10,000 tests × 100 runs) on SQLite: `flakewatch
// serve` runs as its own process; 20 concurrent readers (leaderboard, test detail, default heatmap) and the
// baseline GET /healthz run beside 10 clients uploading 2,000-test JUnit reports back to back. Reported: p95 per
// endpoint with its ratio to /healthz p95 in the same run, failed requests, how long after its 201 each upload
// shows in the leaderboard, and the server's RSS over the run (a soak of BENCH_SECONDS, default 60).
// Run against the build: npm run build && node bench/server-load.mjs
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { junitXml } from './lib/junit-gen.mjs'
import { benchStore, percentiles } from './lib/server-data.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const READERS = 20
const UPLOADERS = 10
const UPLOAD_TESTS = 2000
const TOKEN = 'bench-write-token-0123456789'
const dist = join(import.meta.dirname, '..', 'dist')
const log = (s) => process.stderr.write(`${s}\n`)
const emit = (row) => process.stdout.write(`${JSON.stringify({ bench: 'server-load', ...row })}\n`)

const { store, file } = await benchStore({ dist, name: 'server-api', tests: TESTS, runs: RUNS, log })
const results = (await store.stats()).results
await store.close()
log(`server-load: ${results} results, ${READERS} readers, ${UPLOADERS} uploaders, ${SECONDS} s`)

const server = spawn(process.execPath, [join(dist, 'cli/main.js'), 'serve', '--db', file, '--port', '0'], {
  env: { ...process.env, FLAKEWATCH_WRITE_TOKEN: TOKEN, FLAKEWATCH_LOG_LEVEL: 'error' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const base = await new Promise((resolve, reject) => {
  server.stdout.on('data', (d) => {
    const url = /http:\/\/[^\s]+/.exec(String(d))?.[0]
    if (url) resolve(url.replace(/\/$/, ''))
  })
  server.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
})
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) * 1024

// The first analysis (one full scan) happens before the clock starts: it is the cold start, not the load.
const coldStart = performance.now()
const top = (await (await fetch(`${base}/api/v1/leaderboard?limit=1`)).json()).rows[0].test_id
emit({
  metric: 'cold analysis before the load (full scan) ms',
  value: Math.round(performance.now() - coldStart),
  results,
})

const samples = new Map()
let failed = 0
const failures = []
const end = Date.now() + SECONDS * 1000
async function timed(name, path, init) {
  const t = performance.now()
  try {
    const res = await fetch(`${base}${path}`, init)
    const body = await res.arrayBuffer()
    const ms = performance.now() - t
    if (!res.ok && res.status !== 503) {
      failed++
      if (failures.length < 5) failures.push(`${name} ${res.status} ${Buffer.from(body).toString().slice(0, 120)}`)
    }
    if (!samples.has(name)) samples.set(name, { ms: [], bytes: 0, refused: 0 })
    const s = samples.get(name)
    s.ms.push(ms)
    s.bytes = body.byteLength
    if (res.status === 503) s.refused++
    return { res, body }
  } catch (error) {
    failed++
    if (failures.length < 5) failures.push(`${name}: ${error.message}`)
    return null
  }
}

const reads = [
  ['GET /api/v1/leaderboard?limit=50', '/api/v1/leaderboard?limit=50'],
  ['GET /api/v1/tests/:id', `/api/v1/tests/${encodeURIComponent(top)}`],
  ['GET /api/v1/heatmap (default)', '/api/v1/heatmap'],
  ['GET /healthz (baseline)', '/healthz'],
]
async function reader(i) {
  for (let k = i; Date.now() < end; k++) {
    const [name, path] = reads[k % reads.length]
    await timed(name, path)
  }
}

const visibleAfter = []
let uploads = 0
let refusedUploads = 0
async function uploader(u) {
  for (let k = 0; Date.now() < end; k++) {
    const runIndex = 100_000 + u * 10_000 + k
    const marker = `visible ${u} ${k}`
    const xml = junitXml(runIndex, UPLOAD_TESTS, { stamp: Date.now() - runIndex * 3_600_000 }).replace(
      '</testsuite>',
      `<testcase classname="bench.Visibility" name="${marker}"/></testsuite>`,
    )
    const r = await timed('POST /api/v1/reports (2,000 tests)', `/api/v1/reports?suite=bench&run_id=load-${runIndex}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
      body: xml,
    })
    if (!r) continue
    if (r.res.status === 503) {
      refusedUploads++
      await new Promise((res) => setTimeout(res, Number(r.res.headers.get('retry-after') ?? 1) * 1000))
      continue
    }
    if (r.res.status !== 201) continue
    uploads++
    const at = performance.now()
    // Visible: the leaderboard finds the upload's own marker test.
    for (;;) {
      const res = await fetch(`${base}/api/v1/leaderboard?limit=1&search=${encodeURIComponent(marker)}`)
      if ((await res.json()).total === 1) break
      if (performance.now() - at > 30_000) break
      await new Promise((res) => setTimeout(res, 50))
    }
    visibleAfter.push(performance.now() - at)
  }
}

const rssSamples = []
const sampler = setInterval(() => rssSamples.push(rss()), 1000)
await Promise.all([
  ...Array.from({ length: READERS }, (_, i) => reader(i)),
  ...Array.from({ length: UPLOADERS }, (_, u) => uploader(u)),
])
clearInterval(sampler)
server.kill('SIGTERM')

const baseline = percentiles(samples.get('GET /healthz (baseline)').ms).p95
for (const [name, s] of samples) {
  const r = percentiles(s.ms)
  log(
    `  ${name}: n ${r.n} p50 ${r.p50} p95 ${r.p95} max ${r.max} ms (${s.bytes} B${s.refused ? `, ${s.refused} × 503` : ''})`,
  )
  const extra = { p50: r.p50, max: r.max, n: r.n, bytes: s.bytes, vs_healthz: Math.round((r.p95 / baseline) * 10) / 10 }
  emit({
    metric: `${name} p95 under load ms`,
    value: r.p95,
    target: name.startsWith('GET /api') ? '≤ 50' : undefined,
    ...extra,
  })
}
const v = percentiles(visibleAfter)
emit({
  metric: 'upload visible in leaderboard after its 201, p95 ms',
  value: v.p95,
  target: '≤ 2000',
  max: v.max,
  n: v.n,
})
emit({
  metric: 'failed requests',
  value: failed,
  target: '0',
  uploads,
  refused_503: refusedUploads,
  first: failures.join(' | '),
})
const mb = (b) => Math.round(b / 1048576)
const third = Math.max(1, Math.floor(rssSamples.length / 3))
const early = Math.max(...rssSamples.slice(0, third))
const late = Math.max(...rssSamples.slice(-third))
emit({
  metric: `server RSS over a ${SECONDS} s upload soak, last third vs first third (max MB)`,
  value: `${mb(early)} → ${mb(late)}`,
  target: 'flat',
  peak_mb: mb(Math.max(...rssSamples)),
})
