// The first answers of a `serve` instance that just started, on a large store: GET /api/v1/impact and the MCP
// tool list_tests (POST /mcp), each from a fresh process, with the time from the request to its answer and the
// process's peak RSS (VmHWM) by then. The baseline is the same process's first GET /healthz, just before. Issue 32:
// both used to build the default selection's snapshot from the whole history on first use; they now read the
// persisted analyses. `--before <dist>` measures another build beside this one (the commit before the change), in
// the same run, alternating, so that the ratio holds on a loaded machine.
//   node bench/first-answers.mjs --db 'postgres://postgres@127.0.0.1:5434/scale?schema=fw_snap_1m' \
//     --before /work/wt/snapshot-before/dist --rounds 2
// The store is one bench/pg-scale.mjs filled and kept (`--sizes 1e6 --prefix fw_snap --keep --fill-only`). Without
// --db (bench/run.mjs), it prints nothing: filling 10^6 results takes minutes and a PostgreSQL cluster.
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer } from './lib/load-run.mjs'

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    before: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    label: { type: 'string', default: 'PostgreSQL 1,000,000' },
  },
})
const log = (s) => process.stderr.write(`${s}\n`)
if (!args.db) {
  log('first-answers: no --db given (a store of 10^6 results filled by bench/pg-scale.mjs): nothing measured')
  process.exit(0)
}
const builds = [
  ...(args.before ? [{ name: 'before', dist: args.before }] : []),
  { name: 'after', dist: join(import.meta.dirname, '..', 'dist') },
]
const peakRss = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

async function timed(fn) {
  const t = performance.now()
  const value = await fn()
  return { ms: performance.now() - t, value }
}

const ASKS = {
  impact: async (base) => {
    const res = await fetch(`${base}/api/v1/impact`)
    const body = await res.json()
    if (!res.ok) throw new Error(`impact: ${res.status} ${JSON.stringify(body).slice(0, 200)}`)
    return `${body.totals.tests} tests, ${body.totals.flaky} flaky, ${body.weeks.length} weeks`
  },
  'MCP list_tests': async (base) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_tests', arguments: {} },
      }),
    })
    const body = await res.json()
    if (!res.ok || body.error) throw new Error(`mcp: ${res.status} ${JSON.stringify(body).slice(0, 200)}`)
    return `${JSON.parse(body.result.content[0].text).total} tests listed`
  },
}

const results = new Map()
for (let round = 0; round < Number(args.rounds); round++) {
  for (const [ask, run] of Object.entries(ASKS)) {
    for (const build of builds) {
      const { server, base, spawned } = await startServer(args.db, build.dist)
      try {
        const health = await timed(() => fetch(`${base}/healthz`).then((r) => r.arrayBuffer()))
        const first = await timed(() => run(base))
        const row = {
          ms: first.ms,
          sinceSpawn: performance.now() - spawned,
          rss: peakRss(server.pid),
          health: health.ms,
          load: loadavg()[0],
        }
        log(`${ask} ${build.name}: ${Math.round(row.ms)} ms, peak RSS ${Math.round(row.rss)} MB (${first.value})`)
        const key = `${ask}\u0000${build.name}`
        results.set(key, [...(results.get(key) ?? []), row])
      } finally {
        server.kill('SIGTERM')
        await new Promise((resolve) => server.once('exit', resolve))
      }
    }
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const ask of Object.keys(ASKS)) {
  const after = results.get(`${ask}\u0000after`)
  const before = results.get(`${ask}\u0000before`)
  const ms = median(after.map((r) => r.ms))
  const rss = median(after.map((r) => r.rss))
  const row = {
    bench: 'first-answers',
    metric: `${args.label}: first ${ask} answer of a fresh serve, ms`,
    value: Math.round(ms),
    first_healthz_ms: Math.round(median(after.map((r) => r.health))),
    peak_rss_mb: Math.round(rss),
    rounds: after.length,
    load: median(after.map((r) => r.load)).toFixed(2),
  }
  if (before) {
    const bms = median(before.map((r) => r.ms))
    const brss = median(before.map((r) => r.rss))
    Object.assign(row, {
      before_ms: Math.round(bms),
      before_peak_rss_mb: Math.round(brss),
      speedup: `${(bms / ms).toFixed(1)}x`,
      rss_ratio: `${(rss / brss).toFixed(2)}x`,
    })
  }
  process.stdout.write(`${JSON.stringify(row)}\n`)
}
