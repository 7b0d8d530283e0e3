// Ingest throughput (2,000 tests × 200 runs of JUnit files) beside raw baselines measured in the same run: a bare
// saxes parse and bare prepared INSERTs into the same schema. Peak memory on big files: ingest-memory.mjs.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { SaxesParser } from 'saxes'
import Database from 'better-sqlite3'
import { junitXml } from './lib/junit-gen.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 2000)
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const dir = join(import.meta.dirname, '.tmp', 'ingest')
rmSync(dir, { recursive: true, force: true })
mkdirSync(join(dir, 'reports'), { recursive: true })

const { openSqliteStore } = await import('../dist/store/sqlite/sqlite-store.js')
const { ingestFiles } = await import('../dist/pipeline/ingest-files.js')

for (let r = 0; r < RUNS; r++)
  writeFileSync(join(dir, 'reports', `run-${String(r).padStart(4, '0')}.xml`), junitXml(r, TESTS))
const total = TESTS * RUNS

// Baseline 1: a bare saxes parse of every file, counting testcases.
let t0 = performance.now()
let seen = 0
for (let r = 0; r < RUNS; r++) {
  const p = new SaxesParser()
  p.on('opentag', (n) => {
    if (n.name === 'testcase') seen++
  })
  p.write(readFileSync(join(dir, 'reports', `run-${String(r).padStart(4, '0')}.xml`), 'utf8')).close()
}
const saxesS = (performance.now() - t0) / 1000

// Baseline 2: bare prepared INSERTs of the same number of result rows into the same schema.
const rawStore = await openSqliteStore(join(dir, 'raw.db'))
await rawStore.close()
const db = new Database(join(dir, 'raw.db'))
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('cache_size = -65536')
db.pragma('wal_autocheckpoint = 20000')
const ins = db.prepare(
  'INSERT INTO results (test, at, run, status, flaky, duration_ms, attempts, failed_attempts, failed_ms, error_type, message, healing) VALUES (?, ?, ?, 0, 0, 10, 1, 0, 0, NULL, NULL, 0)',
)
t0 = performance.now()
for (let r = 0; r < RUNS; r++)
  db.transaction(() => {
    for (let t = 0; t < TESTS; t++) ins.run(t + 1, r * 1000, r + 1)
  })()
const insertS = (performance.now() - t0) / 1000
db.close()

// End to end: files → detect → parse → normalise → one transaction per report.
const store = await openSqliteStore(join(dir, 'e2e.db'))
t0 = performance.now()
const summary = await ingestFiles({ store, inputs: [join(dir, 'reports')], context: { suite: 'bench' } })
const e2eS = (performance.now() - t0) / 1000
const stored = (await store.stats()).results
await store.close()
if (summary.failed.length || stored !== total)
  throw new Error(`ingest bench stored ${stored} of ${total}: ${JSON.stringify(summary.failed[0])}`)

const line = (o) => console.log(JSON.stringify(o))
line({
  bench: 'ingest',
  metric: 'results/s end to end',
  value: Math.round(total / e2eS),
  target: '>= 150000',
  results: total,
})
line({ bench: 'ingest', metric: 'baseline: bare saxes parse, testcases/s', value: Math.round(seen / saxesS) })
line({ bench: 'ingest', metric: 'baseline: bare prepared INSERT, rows/s', value: Math.round(total / insertS) })
line({ bench: 'ingest', metric: 'ratio end to end / bare INSERT', value: +(insertS / e2eS).toFixed(2) })
line({ bench: 'ingest', metric: 'ratio end to end / bare saxes', value: +(saxesS / e2eS).toFixed(2) })

line({ bench: 'ingest', metric: 'machine load (uptime 1-min average) at the end', value: loadavg()[0].toFixed(2) })

rmSync(dir, { recursive: true, force: true })
