// The team server under continuous load, at 1M stored results (10,000 tests × 100 runs) on SQLite: `flakewatch
// serve` runs as its own process; 20 concurrent readers (leaderboard, test detail, default heatmap) and the
// baseline GET /healthz run beside 10 clients uploading 2,000-test JUnit reports back to back. Reported: p95 per
// endpoint with its ratio to /healthz p95 in the same run, failed requests, how long after its 201 each upload
// shows in the leaderboard, and the server's RSS over the run (a soak of BENCH_SECONDS, default 60).
// Run against the build: npm run build && node bench/server-load.mjs
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg, setPriority } from 'node:os'
import { join } from 'node:path'
import { benchStore, percentiles } from './lib/server-data.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const READERS = 20
const UPLOADERS = 10
const UPLOAD_TESTS = 2000
const TOKEN = 'bench-write-token-0123456789'
/** The upload clients' niceness (0 normal, 19 lowest): remote CI machines, not this machine's work. */
const CLIENT_NICE = 10
const dist = join(import.meta.dirname, '..', 'dist')
const log = (s) => process.stderr.write(`${s}\n`)
const emit = (row) => process.stdout.write(`${JSON.stringify({ bench: 'server-load', ...row })}\n`)

const { store, file } = await benchStore({ dist, name: 'server-api', tests: TESTS, runs: RUNS, log })
const results = (await store.stats()).results
await store.close()
log(`server-load: ${results} results, ${READERS} readers, ${UPLOADERS} uploaders, ${SECONDS} s`)

// BENCH_CPU_PROF=<dir> writes the server's CPU profile there, to find what the HTTP thread spends its time on.
const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
const server = spawn(process.execPath, [...profile, join(dist, 'cli/main.js'), 'serve', '--db', file, '--port', '0'], {
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
const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
const rss = () => rssOf(server.pid)
/** The server and the processes it started (upload workers), as `ps` would sum them. */
function rssWithChildren(pid = server.pid) {
  let total = 0
  try {
    total = rssOf(pid)
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
      for (const kid of kids ? kids.split(' ') : []) total += rssWithChildren(Number(kid))
    }
  } catch {
    // A process that ended between two reads.
  }
  return total
}

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

// The uploading clients stand for remote CI machines: a process of their own, at a lower OS priority, so that
// building their reports does not take the CPU the server and the readers are measured on.
function uploadClients() {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'lib', 'upload-clients.mjs'), base, TOKEN, String(SECONDS), String(UPLOADERS), String(UPLOAD_TESTS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  setPriority(child.pid, CLIENT_NICE)
  const rows = []
  let rest = ''
  child.stdout.on('data', (d) => {
    const lines = (rest + d).split('\n')
    rest = lines.pop()
    for (const line of lines) if (line) rows.push(JSON.parse(line))
  })
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve(rows) : reject(new Error(`upload clients exited with ${code}`))))
  })
}

const rssSamples = []
const allSamples = []
const sampler = setInterval(() => {
  rssSamples.push(rss())
  allSamples.push(rssWithChildren())
}, 1000)
const [uploadRows] = await Promise.all([uploadClients(), ...Array.from({ length: READERS }, (_, i) => reader(i))])
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
const posts = uploadRows.filter((r) => r.status !== undefined)
const uploads = posts.filter((r) => r.status === 201).length
const refusedUploads = posts.filter((r) => r.status === 503).length
const clients = uploadRows.find((r) => r.done)
failed += clients.failed
failures.push(...clients.failures)
const up = percentiles(posts.map((r) => r.ms))
emit({
  metric: 'POST /api/v1/reports (2,000 tests) p95 under load ms',
  value: up.p95,
  p50: up.p50,
  max: up.max,
  n: up.n,
  vs_healthz: Math.round((up.p95 / baseline) * 10) / 10,
})
const v = percentiles(posts.filter((r) => r.status === 201).map((r) => r.visible_ms ?? 30_000))
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
const thirds = (samples) => {
  const third = Math.max(1, Math.floor(samples.length / 3))
  return `${mb(Math.max(...samples.slice(0, third)))} → ${mb(Math.max(...samples.slice(-third)))}`
}
emit({
  metric: `server RSS over a ${SECONDS} s upload soak, last third vs first third (max MB)`,
  value: thirds(rssSamples),
  target: 'flat',
  peak_mb: mb(Math.max(...rssSamples)),
  with_upload_workers: thirds(allSamples),
})
emit({ metric: 'machine load (uptime 1-min average) at the end', value: loadavg()[0].toFixed(2) })
