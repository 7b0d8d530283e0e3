// PostgreSQL analysis scan at scale: fills a fresh schema with N generated results server-side (generate_series,
// so that filling 10M rows takes a minute, not an ingest benchmark's worth), then streams it through
// `scanHistory` and reports rows/s, the peak heap and RSS while scanning, and what the heap kept afterwards.
// Memory must not grow with N. Uses the built store (`npx tsc -p tsconfig.build.json`).
//
//   FLAKEWATCH_TEST_PG=postgres://postgres@127.0.0.1:5432/test node --expose-gc bench/pg-scan.mjs [--results 10000000]
//     [--tests 5000] [--keep]
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'

const { values: args } = parseArgs({
  options: {
    results: { type: 'string', default: '10000000' },
    tests: { type: 'string', default: '5000' },
    keep: { type: 'boolean', default: false },
  },
})
const TESTS = Number(args.tests)
const RUNS = Math.ceil(Number(args.results) / TESTS)
const BASE_URL = process.env.FLAKEWATCH_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const emit = (o) => console.log(JSON.stringify({ bench: 'pg-scan', ...o }))
const mb = (n) => Math.round((n / 2 ** 20) * 10) / 10

const { openPostgresStore } = await import(new URL('../dist/store/postgres/postgres-store.js', import.meta.url).href)
const schema = `fw_bench_${randomBytes(4).toString('hex')}`
const u = new URL(BASE_URL)
u.searchParams.set('schema', schema)
const store = await openPostgresStore(u.toString())
const admin = new pg.Client({ connectionString: BASE_URL, options: `-c search_path=${schema}` })
await admin.connect()

try {
  const t0 = performance.now()
  await admin.query(
    `INSERT INTO tests (test_id, suite, module, name, file)
     SELECT 'bench::m' || (t % 97) || '::case ' || t, 'bench', 'm' || (t % 97), 'case ' || t, NULL
     FROM generate_series(1, $1) t`,
    [TESTS],
  )
  await admin.query(
    `INSERT INTO messages (key, text) SELECT 'k' || i, 'AssertionError: ' || i FROM generate_series(1, 40) i`,
  )
  await admin.query(
    `INSERT INTO runs (run_id, suite, branch, env, status, uploaded_at, at)
     SELECT 'run-' || r, 'bench', 'main', '{}', 'complete', '2026-01-01T00:00:00Z', 1767225600000 + r * 600000
     FROM generate_series(1, $1) r`,
    [RUNS],
  )
  // Inserted a run at a time, as ingest does, so that the scan index has the shape live data gives it.
  await admin.query(
    `INSERT INTO results (at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky,
       healing, error_type)
     SELECT 1767225600000 + r * 600000, (t * 7 % 2000) / 10.0, 0, t, r, 1, 0,
       CASE WHEN (t + r) % 20 = 0 THEN 1 + (t % 40) END, CASE WHEN (t + r) % 20 = 0 THEN 1 ELSE 0 END,
       (t + r) % 50 = 0, false, CASE WHEN (t + r) % 20 = 0 THEN 'AssertionError' END
     FROM generate_series(1, $1) r, generate_series(1, $2) t ORDER BY r, t`,
    [RUNS, TESTS],
  )
  await admin.query('VACUUM ANALYZE')
  const size = await admin.query(
    `SELECT count(*)::bigint AS n, pg_total_relation_size('results')::bigint AS bytes FROM results`,
  )
  const rows = Number(size.rows[0].n)
  emit({
    phase: 'fill',
    results: rows,
    seconds: Math.round((performance.now() - t0) / 100) / 10,
    resultsMB: mb(Number(size.rows[0].bytes)),
  })

  global.gc?.()
  const heap0 = process.memoryUsage().heapUsed
  let heapPeak = heap0
  let rssPeak = process.memoryUsage().rss
  let seen = 0
  let tests = 0
  const s0 = performance.now()
  for await (const h of store.scanHistory()) {
    tests++
    seen += h.entries.length
    if (tests % 100 === 0) {
      const m = process.memoryUsage()
      heapPeak = Math.max(heapPeak, m.heapUsed)
      rssPeak = Math.max(rssPeak, m.rss)
    }
  }
  const s = (performance.now() - s0) / 1000
  global.gc?.()
  emit({
    phase: 'scan',
    results: seen,
    tests,
    seconds: Math.round(s * 10) / 10,
    rowsPerSec: Math.round(seen / s),
    heapPeakAboveStartMB: mb(heapPeak - heap0),
    heapKeptAfterMB: mb(process.memoryUsage().heapUsed - heap0),
    rssPeakMB: mb(rssPeak),
  })
  console.log(
    JSON.stringify({
      bench: 'pg-scan',
      metric: `analysis scan rows/s at ${seen} results`,
      value: Math.round(seen / s),
    }),
  )
  console.log(
    JSON.stringify({
      bench: 'pg-scan',
      metric: 'scan heap peak above start, MB',
      value: mb(heapPeak - heap0),
      rssPeakMB: mb(rssPeak),
    }),
  )
} finally {
  await store.close()
  if (!args.keep) await admin.query(`DROP SCHEMA ${schema} CASCADE`)
  else console.error(`kept schema ${schema}`)
  await admin.end()
}
