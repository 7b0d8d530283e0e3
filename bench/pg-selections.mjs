// Narrowed selections on a large PostgreSQL store (issue 32): for each of a few reads (`?suite=`, `?branch=`,
// `?env=`, `?last=`, `?rev=`), a fresh `flakewatch serve` process (dist/cli/main.js, or --build) on a schema that
// bench/pg-scale.mjs filled and kept (`--fill-only --keep`), the time from the request to its answer, the process's
// peak RSS (VmHWM) once it answered, and what the answer says it covers; GET /healthz on the same process first, as
// the baseline. Each read gets its own process, so that one's memory is not another's.
//   FLAKEWATCH_BENCH_PG=postgres://postgres@127.0.0.1:5434/scale node bench/pg-selections.mjs --schema fw_scale_10m
// Options: --schema (required), --build (a dist folder; default this checkout's), --label (names the build in the
// rows), --no-lock (no flock around the measurement), --reads (comma-separated API paths, default below).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer } from './lib/load-run.mjs'

const { values: args } = parseArgs({
  options: {
    schema: { type: 'string' },
    build: { type: 'string', default: join(import.meta.dirname, '..', 'dist') },
    label: { type: 'string', default: 'this build' },
    'no-lock': { type: 'boolean', default: false },
    reads: {
      type: 'string',
      default: [
        'leaderboard?suite=web',
        'heatmap?suite=web',
        'leaderboard?branch=main',
        'leaderboard?branch=feature/x',
        'heatmap?env=os=linux',
        'leaderboard?last=200',
        'leaderboard?rev=rev-240...rev-249',
      ].join(','),
    },
  },
})
if (!args.schema) throw new Error('--schema is required (a schema kept by bench/pg-scale.mjs --keep)')
const LOCK = '/tmp/flakewatch-bench.lock'
if (!args['no-lock'] && !process.env.FW_BENCH_LOCKED) {
  execFileSync('flock', [LOCK, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, FW_BENCH_LOCKED: '1' },
  })
  process.exit(0)
}
const url = new URL(process.env.FLAKEWATCH_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5434/scale')
url.searchParams.set('schema', args.schema)
const emit = (o) => console.log(JSON.stringify({ bench: 'pg-selections', build: args.label, ...o }))
const peakRss = (pid) => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : null
}

for (const read of args.reads.split(',')) {
  const { server, base } = await startServer(url.toString(), resolve(args.build))
  try {
    let t = performance.now()
    const health = await fetch(`${base}/healthz`)
    await health.arrayBuffer()
    const healthMs = performance.now() - t
    const rssBefore = peakRss(server.pid)
    t = performance.now()
    const res = await fetch(`${base}/api/v1/${read}`)
    const body = await res.json()
    const ms = performance.now() - t
    emit({
      metric: `GET /api/v1/${read}: first answer, ms`,
      value: Math.round(ms),
      status: res.status,
      healthz_ms: Math.round(healthMs),
      peak_rss_mb: peakRss(server.pid),
      rss_before_mb: rssBefore,
      runs: typeof body.runs === 'number' ? body.runs : (body.runs?.length ?? null),
      covers: body.covers ?? null,
      load: loadavg()[0].toFixed(2),
    })
  } finally {
    server.kill('SIGTERM')
    await new Promise((r) => server.once('exit', r))
  }
}
