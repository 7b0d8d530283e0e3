// Shared by the server and heatmap benchmarks: a store of `tests` × `runs` results written straight through
// store.ingestReport (the real write path, one report per run), with a realistic mix: most tests pass, ~3% are
// flaky (random failures, some passing on retry), ~1% broke recently, with env facets, revisions and CI URLs.
// Not a benchmark itself: bench/run.mjs skips it because it prints no JSON lines.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const HOUR = 3_600_000

/** A small deterministic PRNG, so that every run of a benchmark sees the same data. */
function rng(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Opens (or reuses, when it already holds the expected results) a store of the given size: a SQLite file under
 * bench/lib/.tmp/<name>, or with `pg` (a PostgreSQL URL) the schema fw_bench_<name> there. Runs are spread over the
 * last `spanHours` before `now`, newest last, so that they fall inside the analysis lookback window. Returns the
 * store and where it is (`file`: the path or the URL to give `serve --db`).
 */
export async function benchStore({
  dist,
  name,
  tests,
  runs,
  now = Date.now(),
  spanHours = runs * 4,
  log = () => {},
  pg,
}) {
  const { openStore } = await import(join(dist, 'store/open.js'))
  const dir = join(import.meta.dirname, '.tmp', name)
  const schema = `fw_bench_${name.replace(/\W/g, '_')}`
  const file = pg ? withSchema(pg, schema) : join(dir, 'store.db')
  if (pg || existsSync(file)) {
    const store = await openStore({ db: file, env: {} })
    const stats = await store.stats()
    // Other benchmarks may have added a run or two (another instance's write); that is still the same store. With
    // BENCH_KEEP, so is one that earlier load runs' uploads grew (by 2,001 results an upload): at 10M results a
    // rebuild takes longer than the run it is for, and the rows say how many results were stored.
    const grown = process.env.BENCH_KEEP ? Infinity : tests * runs + 100
    const sameSize = stats.results >= tests * runs && stats.results < grown
    if (sameSize && stats.newestRunAt > now - 7 * 24 * HOUR) {
      if (pg) await vacuum(pg, schema)
      return { store, file, reused: true }
    }
    await store.close()
  }
  if (pg) {
    const { default: pgClient } = await import('pg')
    const admin = new pgClient.Client({ connectionString: pg })
    await admin.connect()
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  } else {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
  }
  const store = await openStore({ db: file, env: {} })
  const random = rng(42)
  const kinds = Array.from({ length: tests }, (_, i) => (i % 100 < 3 ? 'flaky' : i % 100 === 3 ? 'broken' : 'stable'))
  const refs = Array.from({ length: tests }, (_, i) => {
    const module = `src/area_${i % 50}/feature_${i % 400}.test.ts`
    const name = `test-${String(i).padStart(5, '0')} renders case ${i % 13}`
    return { testId: `web::${module}::${name}`, suite: 'web', module, name, file: module }
  })
  const started = Date.now()
  for (let r = 0; r < runs; r++) {
    const at = now - (runs - r) * (spanHours / runs) * HOUR
    const revision = createHash('sha1')
      .update(`rev-${Math.floor(r / 2)}`)
      .digest('hex')
    const run = {
      runId: `gitlab-${9_000_000 + r}`,
      suite: 'web',
      branch: r % 5 === 0 ? 'feature/x' : 'main',
      revision,
      pipelineId: String(500_000 + Math.floor(r / 2)),
      pipelineUrl: `https://gitlab.example.com/group/app/-/pipelines/${500_000 + Math.floor(r / 2)}`,
      jobId: String(9_000_000 + r),
      jobUrl: `https://gitlab.example.com/group/app/-/jobs/${9_000_000 + r}`,
      artifactsUrl: `https://gitlab.example.com/group/app/-/jobs/${9_000_000 + r}/artifacts/browse`,
      jobStatus: 'success',
      pipelineStatus: 'success',
      runnerId: `runner-${r % 4}`,
      env: { browser: r % 2 ? 'chromium' : 'firefox', os: 'linux' },
      startedAt: new Date(at).toISOString(),
      finishedAt: new Date(at + 600_000).toISOString(),
      durationMs: 600_000,
      status: r % 37 === 36 ? 'interrupted' : 'complete',
    }
    const results = refs.map((test, i) => {
      const kind = kinds[i]
      const fails = kind === 'flaky' ? random() < 0.2 : kind === 'broken' ? r >= runs - 6 : random() < 0.002
      const retried = kind === 'flaky' && !fails && random() < 0.1
      const timeout = 1000 + (i % 5) * 1000
      const message = fails ? `Error: expected element to be visible (timeout ${timeout} ms) in ${test.name}` : null
      return {
        test,
        status: fails ? 'failed' : 'passed',
        flakyOnRetry: retried,
        durationMs: 50 + (i % 200),
        errorType: fails ? 'AssertionError' : null,
        message,
        healingOccurred: false,
        attempts: retried
          ? [
              { retry: 0, status: 'failed', durationMs: 80, message: 'Error: timeout', stack: null },
              { retry: 1, status: 'passed', durationMs: 60, message: null, stack: null },
            ]
          : [],
      }
    })
    const hash = createHash('sha256').update(`${name}-${r}`).digest('hex')
    await store.ingestReport({ file: `junit-${r}.xml`, contentHash: hash, runs: [{ run, results }] })
    if (r % 10 === 9) log(`  generated ${r + 1}/${runs} runs (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }
  if (pg) await vacuum(pg, schema)
  return { store, file, reused: false }
}

/**
 * Brings a PostgreSQL store to the state autovacuum keeps it in (insert-driven since PG 13): visibility map set, so
 * that the analysis scan is index-only, and fresh planner statistics. A store built a moment ago has neither, and
 * the bench server runs with autovacuum off: unvacuumed, every row of a 10M scan is also fetched from the heap
 * (75 s instead of 40, profiled).
 */
async function vacuum(pg, schema) {
  const { default: pgClient } = await import('pg')
  const admin = new pgClient.Client({ connectionString: pg })
  await admin.connect()
  try {
    const { rows } = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema])
    for (const { tablename } of rows) await admin.query(`VACUUM (ANALYZE) ${schema}."${tablename}"`)
  } finally {
    await admin.end()
  }
}

function withSchema(url, schema) {
  const u = new URL(url)
  u.searchParams.set('schema', schema)
  return u.toString()
}

/** Percentiles of a list of durations (ms), rounded to 0.01 ms. */
export function percentiles(samples) {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
  const r = (x) => Math.round(x * 100) / 100
  return { n: s.length, p50: r(at(0.5)), p95: r(at(0.95)), p99: r(at(0.99)), max: r(s[s.length - 1]) }
}
