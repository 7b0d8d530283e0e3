// The load run behind bench/server-load.mjs (and its soak and 10M variants): one backend's store of `tests` ×
// `runs` results, `flakewatch serve` on it as its own process, 20 concurrent readers (leaderboard, test detail,
// default heatmap) and the baseline GET /healthz beside 10 clients uploading 2,000-test JUnit reports back to back
// for `seconds`. The upload clients stand for remote CI machines: a process of their own at a lower OS priority
// (upload-clients.mjs), so that generating their reports does not take the CPU the server is measured on.
// Prints JSON metric lines named `<backend>: …` for bench/run.mjs. BENCH_CPU_PROF=<dir> writes the server's CPU
// profiles there, to find what its threads spend their time on. With `second`, a second `serve` runs on the same
// store, as behind a load balancer: readers alternate between the two, uploads go to the first, and each upload's
// visibility is polled on the second, which finds it only through its probe for other instances' writes.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg, setPriority } from 'node:os'
import { join } from 'node:path'
import { benchStore, percentiles } from './server-data.mjs'

const READERS = 20
const UPLOADERS = 10
const UPLOAD_TESTS = 2000
const TOKEN = 'bench-write-token-0123456789'
/** The upload clients' niceness (0 normal, 19 lowest): remote CI machines, not this machine's work. */
const CLIENT_NICE = 10
const dist = join(import.meta.dirname, '..', '..', 'dist')
const log = (s) => process.stderr.write(`${s}\n`)

const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
/** A process and the processes it started (the server's upload workers), as `ps` would sum them. */
function rssWithChildren(pid) {
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

/** A `flakewatch serve` process on `db` from the build in `build` (this checkout's by default), once it listens. */
export async function startServer(db, build = dist) {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const server = spawn(process.execPath, [...profile, join(build, 'cli/main.js'), 'serve', '--db', db, '--port', '0'], {
    env: { ...process.env, FLAKEWATCH_WRITE_TOKEN: TOKEN, FLAKEWATCH_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const spawned = performance.now()
  const base = await new Promise((resolve, reject) => {
    server.stdout.on('data', (d) => {
      const url = /http:\/\/[^\s]+/.exec(String(d))?.[0]
      if (url) resolve(url.replace(/\/$/, ''))
    })
    server.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
  return { server, base, spawned }
}

function uploadClients(base, seconds, visibleOn, uploadTests) {
  const script = join(import.meta.dirname, 'upload-clients.mjs')
  const args = [script, base, TOKEN, String(seconds), String(UPLOADERS), String(uploadTests), visibleOn]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
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

/**
 * One backend under load: `backend` is 'sqlite' or 'postgres' (then `pg` is the server's URL). With `db`, a store
 * filled beforehand (bench/pg-scale.mjs) is served as it is, and `label` names it in the metrics; `uploadTests`: tests
 * per uploaded report (default 2,000). Returns the rows it printed.
 */
export async function measure({
  bench,
  backend,
  pg,
  tests,
  runs,
  seconds,
  store: storeName = 'server-api',
  second,
  db,
  uploadTests = UPLOAD_TESTS,
  label = backend === 'postgres' ? 'PostgreSQL' : 'SQLite',
}) {
  const printed = []
  const emit = (row) => {
    const line = { bench, ...row, metric: `${label}: ${row.metric}` }
    printed.push(line)
    process.stdout.write(`${JSON.stringify(line)}\n`)
  }
  const { store, file } = db
    ? { store: await (await import(join(dist, 'store/open.js'))).openStore({ db, env: {} }), file: db }
    : await benchStore({ dist, name: storeName, tests, runs, log, pg: backend === 'postgres' ? pg : undefined })
  const results = (await store.stats()).results
  await store.close()
  log(`${bench} (${label}): ${results} results, ${READERS} readers, ${UPLOADERS} uploaders, ${seconds} s`)
  const { server, base, spawned } = await startServer(file)
  const other = second ? await startServer(file) : null

  // The first analysis (one full scan) happens before the clock starts: it is the cold start, not the load.
  const coldStart = performance.now()
  let coldPeak = rssOf(server.pid)
  const coldSampler = setInterval(() => (coldPeak = Math.max(coldPeak, rssOf(server.pid))), 250)
  const top = (await (await fetch(`${base}/api/v1/leaderboard?limit=1`)).json()).rows[0].test_id
  clearInterval(coldSampler)
  emit({
    metric: 'cold analysis before the load (full scan) ms',
    value: Math.round(performance.now() - coldStart),
    results,
    // From the process's spawn: what an instance that just started (a deploy, a restart) makes readers wait.
    since_spawn_ms: Math.round(performance.now() - spawned),
    peak_rss_mb: Math.round(coldPeak / 1048576),
  })
  if (other) await (await fetch(`${other.base}/api/v1/leaderboard?limit=1`)).arrayBuffer()

  const samples = new Map()
  let failed = 0
  const failures = []
  const end = Date.now() + seconds * 1000
  async function timed(name, path, on = base) {
    const t = performance.now()
    try {
      const res = await fetch(`${on}${path}`)
      const body = await res.arrayBuffer()
      const ms = performance.now() - t
      if (!res.ok) {
        failed++
        if (failures.length < 5) failures.push(`${name} ${res.status} ${Buffer.from(body).toString().slice(0, 120)}`)
      }
      if (!samples.has(name)) samples.set(name, { ms: [], bytes: 0 })
      const s = samples.get(name)
      s.ms.push(ms)
      s.bytes = body.byteLength
    } catch (error) {
      failed++
      if (failures.length < 5) failures.push(`${name}: ${error.message}`)
    }
  }
  const reads = [
    ['GET /api/v1/leaderboard?limit=50', '/api/v1/leaderboard?limit=50'],
    ['GET /api/v1/tests/:id', `/api/v1/tests/${encodeURIComponent(top)}`],
    ['GET /api/v1/heatmap (default)', '/api/v1/heatmap'],
    ['GET /healthz (baseline)', '/healthz'],
  ]
  async function reader(i) {
    // Behind a balancer, half the readers land on each instance.
    const on = other && i % 2 ? other.base : base
    for (let k = i; Date.now() < end; k++) {
      const [name, path] = reads[k % reads.length]
      await timed(name, path, on)
    }
  }

  const rssSamples = []
  const allSamples = []
  const otherSamples = []
  const sampler = setInterval(() => {
    rssSamples.push(rssOf(server.pid))
    allSamples.push(rssWithChildren(server.pid))
    if (other) otherSamples.push(rssWithChildren(other.server.pid))
  }, 1000)
  const [uploadRows] = await Promise.all([
    uploadClients(base, seconds, other?.base ?? base, uploadTests),
    ...Array.from({ length: READERS }, (_, i) => reader(i)),
  ])
  clearInterval(sampler)
  for (const s of [server, other?.server]) {
    if (!s) continue
    const exited = new Promise((resolve) => s.on('exit', resolve))
    s.kill('SIGTERM')
    await exited
  }

  const baseline = percentiles(samples.get('GET /healthz (baseline)').ms).p95
  const vsHealthz = (p95) => Math.round((p95 / baseline) * 10) / 10
  for (const [name, s] of samples) {
    const r = percentiles(s.ms)
    log(`  ${label} ${name}: n ${r.n} p50 ${r.p50} p95 ${r.p95} max ${r.max} ms (${s.bytes} B)`)
    emit({
      metric: `${name} p95 under load ms`,
      value: r.p95,
      target: name.startsWith('GET /api') ? '≤ 50' : undefined,
      ...{ p50: r.p50, max: r.max, n: r.n, bytes: s.bytes, vs_healthz: vsHealthz(r.p95) },
    })
  }
  const posts = uploadRows.filter((r) => r.status !== undefined)
  const stored = posts.filter((r) => r.status === 201)
  const clients = uploadRows.find((r) => r.done)
  failed += clients.failed
  failures.push(...clients.failures)
  const up = percentiles(posts.map((r) => r.ms))
  emit({
    metric: 'ingest through POST /api/v1/reports under load, results/s',
    value: Math.round((stored.length * (uploadTests + 1)) / seconds),
    uploads: stored.length,
  })
  emit({
    metric: `POST /api/v1/reports (${uploadTests.toLocaleString('en')} tests) p95 under load ms`,
    value: up.p95,
    ...{ p50: up.p50, max: up.max, n: up.n, vs_healthz: vsHealthz(up.p95) },
  })
  const v = percentiles(stored.map((r) => r.visible_ms ?? 30_000))
  emit({
    metric: other
      ? 'upload visible on the other instance after its 201, p95 ms'
      : 'upload visible in leaderboard after its 201, p95 ms',
    // The other instance looks for others' writes at most every second (its probe), then applies them.
    value: v.p95,
    target: other ? '≤ 6000' : '≤ 2000',
    ...{ p50: v.p50, max: v.max, n: v.n },
  })
  emit({
    metric: 'failed requests',
    value: failed,
    target: '0',
    uploads: stored.length,
    refused_503: posts.filter((r) => r.status === 503).length,
    first: failures.join(' | '),
    clients: `${READERS} readers in the bench process; ${UPLOADERS} upload clients in a process of their own at nice ${CLIENT_NICE} (they stand for remote CI machines)`,
  })
  const mb = (b) => Math.round(b / 1048576)
  const median = (s) => [...s].sort((a, b) => a - b)[Math.floor(s.length / 2)]
  const thirds = (s, of = (part) => part.reduce((a, b) => Math.max(a, b))) => {
    const third = Math.max(1, Math.floor(s.length / 3))
    return `${mb(of(s.slice(0, third)))} → ${mb(of(s.slice(-third)))}`
  }
  emit({
    metric: `server RSS over a ${seconds} s upload soak, last third vs first third (max MB)`,
    value: thirds(rssSamples),
    target: 'flat',
    peak_mb: mb(rssSamples.reduce((a, b) => Math.max(a, b))),
    // The max of a third is one sample of a sawtooth; the median says where RSS sits.
    median_thirds: thirds(rssSamples, median),
    every_10s_mb: rssSamples
      .filter((_, i) => i % 10 === 9)
      .map(mb)
      .join(' '),
    with_upload_workers: thirds(allSamples),
    ...(other ? { other_instance: thirds(otherSamples) } : {}),
  })
  emit({ metric: 'machine load (uptime 1-min average) at the end', value: loadavg()[0].toFixed(2) })
  return printed
}

/**
 * `measure` on each backend BENCH_BACKENDS names (default: SQLite, and PostgreSQL when FLAKEWATCH_TEST_PG names a
 * server), at BENCH_TESTS × BENCH_RUNS (default 10,000 × 100) for BENCH_SECONDS (default 120); `settings` adds
 * the bench's name and its own options.
 */
export async function measureBackends(settings) {
  const pg = process.env.FLAKEWATCH_TEST_PG
  const backends = (process.env.BENCH_BACKENDS ?? (pg ? 'sqlite,postgres' : 'sqlite')).split(',')
  for (const backend of backends) {
    await measure({
      pg,
      tests: Number(process.env.BENCH_TESTS ?? 10_000),
      runs: Number(process.env.BENCH_RUNS ?? 100),
      seconds: Number(process.env.BENCH_SECONDS ?? 120),
      ...settings,
      backend,
    })
  }
}
