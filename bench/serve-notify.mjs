// What `flakewatch serve` pays for webhooks: a look for state changes is a whole-store analysis every
// `notifications.intervalSeconds`. It runs in the analysis worker thread, so the request thread should not notice.
// On one SQLite store (BENCH_TESTS × BENCH_RUNS results, default 2,000 × 100), the same serve process is run twice,
// each for BENCH_SECONDS (default 30) while a client asks GET /healthz every 20 ms: without webhooks (the baseline),
// then with a webhook and a look every second (back to back, far more often than the default 60 s). Reported:
// /healthz p50/p99/max in both runs and their ratio, looks finished, and, for comparison, how long one look's
// analysis holds an event loop when it runs on it (what serve did before the look moved to the worker), measured
// here with `monitorEventLoopDelay` while this process runs the same analysis.
// Run against the build: npm run build && node bench/serve-notify.mjs
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { benchStore, percentiles } from './lib/server-data.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 2000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const dist = join(import.meta.dirname, '..', 'dist')
const log = (s) => process.stderr.write(`${s}\n`)
const emit = (row) => process.stdout.write(`${JSON.stringify({ bench: 'serve-notify', ...row })}\n`)
const load = () => loadavg()[0].toFixed(1)

const { store, file } = await benchStore({ dist, name: 'serve-notify', tests: TESTS, runs: RUNS, log })
const results = (await store.stats()).results
await store.close()

// A receiver that takes every message.
let received = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    received++
    res.end('ok')
  })
})
await new Promise((r) => receiver.listen(0, '127.0.0.1', r))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

async function run(withWebhooks) {
  const dir = mkdtempSync(join(tmpdir(), 'fw-serve-notify-'))
  const notifications = withWebhooks
    ? { webhooks: [{ name: 'bench', url: hook }], intervalSeconds: 1, backoffSeconds: 0 }
    : { webhooks: [] }
  writeFileSync(join(dir, 'flakewatch.config.json'), JSON.stringify({ codeowners: { enabled: false }, notifications }))
  const server = spawn(
    process.execPath,
    [join(dist, 'cli/main.js'), 'serve', '--db', file, '--port', '0', '--config', join(dir, 'flakewatch.config.json')],
    { env: { ...process.env, FLAKEWATCH_LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const base = await new Promise((resolve, reject) => {
    server.stdout.on('data', (d) => {
      const url = /http:\/\/[^\s]+/.exec(String(d))?.[0]
      if (url) resolve(url.replace(/\/$/, ''))
    })
    server.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
  const ms = []
  let looks = 0
  const end = Date.now() + SECONDS * 1000
  while (Date.now() < end) {
    const t = performance.now()
    const body = await (await fetch(`${base}/healthz`)).json()
    ms.push(performance.now() - t)
    looks = body.notifications?.looks ?? 0
    await new Promise((r) => setTimeout(r, 20))
  }
  server.kill('SIGTERM')
  await new Promise((r) => server.once('exit', r))
  rmSync(dir, { recursive: true, force: true })
  return { ...percentiles(ms), looks }
}

log(`serve-notify: ${results} results, ${SECONDS} s per run, load ${load()}`)
const without = await run(false)
const loadWithout = load()
const withHooks = await run(true)
const loadWith = load()
receiver.close()

// The old way, for comparison: one look's analysis on this process's event loop.
const { openSqliteStore } = await import(join(dist, 'store/sqlite/sqlite-store.js'))
const { analyzeStore } = await import(join(dist, 'pipeline/analyze-store.js'))
const inline = await openSqliteStore(file, { readOnly: true })
const delay = monitorEventLoopDelay({ resolution: 5 })
delay.enable()
const t = performance.now()
await analyzeStore(inline)
const analysisMs = performance.now() - t
delay.disable()
await inline.close()

emit({
  metric: '/healthz p99 ms, webhooks off (baseline)',
  value: without.p99,
  p50: without.p50,
  max: without.max,
  n: without.n,
  results,
  load: loadWithout,
})
emit({
  metric: '/healthz p99 ms, a look every second in the analysis worker',
  value: withHooks.p99,
  p50: withHooks.p50,
  max: withHooks.max,
  n: withHooks.n,
  looks: withHooks.looks,
  messages_received: received,
  ratio_p99_to_baseline: Math.round((withHooks.p99 / without.p99) * 100) / 100,
  load: loadWith,
})
emit({
  metric: 'one look’s analysis on an event loop (before: serve’s own thread), longest stall ms',
  value: Math.round(delay.max / 1e6),
  analysis_ms: Math.round(analysisMs),
  results,
  load: load(),
})
