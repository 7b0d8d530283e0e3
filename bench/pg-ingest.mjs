// PostgreSQL store benchmark: aggregate ingest from concurrent writer processes against raw COPY into the same
// table (the bare-insert baseline), then the analysis scan over the result against a bare cursor read, then disk.
// Prints one JSON line per figure. Uses the built store: run `npm run build` (or `npx tsc -p tsconfig.build.json`).
//
//   FLAKEWATCH_TEST_PG=postgres://postgres@127.0.0.1:5432/test node bench/pg-ingest.mjs [--writers 20] [--reports 10]
//     [--tests 5000] [--rounds 3] [--keep]
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pg from 'pg'
import copyStreams from 'pg-copy-streams'

const root = new URL('..', import.meta.url)
const entry = new URL('dist/store/postgres/postgres-store.js', root)
const source = new URL('src/store/postgres/postgres-store.ts', root)

const { values: args } = parseArgs({
  options: {
    writers: { type: 'string', default: '20' },
    reports: { type: 'string', default: '10' },
    tests: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
    worker: { type: 'string' },
  },
})
const WRITERS = Number(args.writers)
const REPORTS = Number(args.reports)
const TESTS = Number(args.tests)
const BASE_URL = process.env.FLAKEWATCH_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'

const MESSAGES = Array.from(
  { length: 40 },
  (_, i) => `AssertionError: expected ${i} to equal ${i + 1}\n    at step ${i}`,
)

/**
 * Report `k` of writer `w`: one run of the shared suite, ~5% failing with a pooled message, ~2% flaky. `refs`, when
 * given, supplies shared test objects, so that a process holding every report stays small.
 */
function report(w, k, refs) {
  const seq = k * WRITERS + w
  const run = {
    runId: `bench-${w}-${k}`,
    suite: 'bench',
    branch: seq % 5 ? 'main' : `feature-${seq % 7}`,
    revision: `rev-${Math.floor(seq / 3)}`,
    pipelineId: String(seq),
    pipelineUrl: `https://ci.example/p/${seq}`,
    jobId: String(seq * 10),
    jobUrl: `https://ci.example/j/${seq * 10}`,
    artifactsUrl: null,
    jobStatus: 'success',
    pipelineStatus: 'success',
    runnerId: `runner-${seq % 8}`,
    env: { os: 'linux', browser: seq % 2 ? 'chromium' : 'firefox' },
    startedAt: new Date(Date.UTC(2026, 0, 1) + seq * 600_000).toISOString(),
    finishedAt: null,
    durationMs: 600_000,
    status: 'complete',
  }
  const results = []
  for (let t = 0; t < TESTS; t++) {
    const h = (t * 2654435761 + seq * 40503) >>> 0
    const failing = h % 100 < 5
    const flaky = !failing && h % 100 < 7
    const module = `src/module-${t % 97}.test.ts`
    results.push({
      test: refs?.[t] ?? {
        testId: `bench::${module}::case ${t}`,
        suite: 'bench',
        module,
        name: `case ${t}`,
        file: module,
      },
      status: failing ? 'failed' : 'passed',
      flakyOnRetry: flaky,
      durationMs: (h % 2000) / 10,
      errorType: failing ? 'AssertionError' : null,
      message: failing ? MESSAGES[h % MESSAGES.length] : null,
      healingOccurred: false,
      attempts: flaky
        ? [
            {
              retry: 0,
              status: 'failed',
              durationMs: 12,
              message: 'Timeout 5000ms exceeded',
              stack: `at case ${t % 20}`,
            },
            { retry: 1, status: 'passed', durationMs: 9, message: null, stack: null },
          ]
        : [],
    })
  }
  return { file: `${run.runId}.xml`, contentHash: `hash-${w}-${k}`, runs: [{ run, results }] }
}

// ---------------------------------------------------------------------------------------------------- worker

async function worker(url, w) {
  const { openPostgresStore } = await import(entry.href)
  const store = await openPostgresStore(url, { poolSize: 2 })
  const reports = Array.from({ length: REPORTS }, (_, k) => report(w, k))
  process.send({ ready: true })
  await new Promise((resolve) => process.once('message', resolve))
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  let results = 0
  for (const r of reports) for (const o of await store.ingestReport(r)) results += o.results
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  await store.close()
  process.send({ results, ms, cpuMs: (cpu.user + cpu.system) / 1000 })
}

if (args.worker !== undefined) {
  await worker(process.env.FW_BENCH_URL, Number(args.worker))
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------------- main

if (!existsSync(entry) || statSync(entry).mtimeMs < statSync(source).mtimeMs) {
  console.error('dist/ is missing or older than src/store/postgres: run `npx tsc -p tsconfig.build.json` first')
  process.exit(2)
}

const emit = (o) => console.log(JSON.stringify({ bench: 'pg', ...o }))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const { openPostgresStore } = await import(entry.href)
const ROUNDS = Number(args.rounds)
const total = WRITERS * REPORTS * TESTS

let schema = ''
let url = ''
let admin = null
let store = null
const made = []
const one = async (sql, params) => (await admin.query(sql, params)).rows[0]

/** A fresh schema with the store's tables, and an admin connection into it. */
async function freshSchema() {
  if (store) await store.close()
  if (admin) await admin.end()
  schema = `fw_bench_${randomBytes(4).toString('hex')}`
  made.push(schema)
  const u = new URL(BASE_URL)
  u.searchParams.set('schema', schema)
  url = u.toString()
  store = await openPostgresStore(url)
  admin = new pg.Client({ connectionString: BASE_URL, options: `-c search_path=${schema}` })
  await admin.connect()
}

try {
  // The machine is shared and noisy, so the baselines and the store alternate, round after round, each round on a
  // fresh schema: raw COPY of the same number of rows by as many connections straight into `results` (same
  // indexes), first in one transaction per connection, then in one per report; each emptied again; then the
  // store's ingest from WRITERS processes; emptied; then WRITERS concurrent ingests in this one process. The
  // ratio per round is what holds. The last round's data stays for the disk and scan figures.
  const ratios = []
  const reportRatios = []
  const rates = []
  const serverRates = []
  const copyRates = []
  for (let round = 1; round <= ROUNDS; round++) {
    await freshSchema()
    const bulk = await measured(() => rawCopy(total, false))
    await admin.query('TRUNCATE results')
    await admin.query('CHECKPOINT')
    const perReport = await measured(() => rawCopy(total, true))
    await admin.query('TRUNCATE results')
    await admin.query('CHECKPOINT')
    const ingest = await measured(() => ingestProcesses())
    await admin.query('TRUNCATE results, attempts, runs, reports, tests, messages')
    await admin.query('CHECKPOINT')
    const server = await measured(() => ingestInProcess())
    const copyRate = total / bulk.s
    const reportCopyRate = total / perReport.s
    const rate = ingest.results / ingest.s
    rates.push(rate)
    serverRates.push(server.results / server.s)
    copyRates.push(copyRate)
    ratios.push(rate / copyRate)
    reportRatios.push(rate / reportCopyRate)
    emit({
      phase: 'ingest',
      round,
      writers: WRITERS,
      reports: WRITERS * REPORTS,
      resultsPerReport: TESTS,
      results: ingest.results,
      seconds: round2(ingest.s),
      resultsPerSec: Math.round(rate),
      rawCopyRowsPerSec: Math.round(copyRate),
      ratioToRawCopy: round2(rate / copyRate),
      rawCopyPerReportTxRowsPerSec: Math.round(reportCopyRate),
      ratioToRawCopyPerReportTx: round2(rate / reportCopyRate),
      writerCpuSecPer100kResults: round2((ingest.cpuMs / 1000) * (1e5 / ingest.results)),
      oneProcessResultsPerSec: Math.round(server.results / server.s),
      oneProcessRatioToRawCopy: round2(server.results / server.s / copyRate),
      oneProcessCpuSecPer100kResults: round2((server.cpuMs / 1000) * (1e5 / server.results)),
      postgresCpuSecPer100kResults: ingest.pgCpuS === null ? null : round2(ingest.pgCpuS * (1e5 / ingest.results)),
      postgresCpuSecPer100kRawCopy: bulk.pgCpuS === null ? null : round2(bulk.pgCpuS * (1e5 / total)),
      postgresCpuSecPer100kRawCopyPerReportTx:
        perReport.pgCpuS === null ? null : round2(perReport.pgCpuS * (1e5 / total)),
    })
  }
  emit({
    phase: 'ingest-summary',
    rounds: ROUNDS,
    medianResultsPerSec: Math.round(median(rates)),
    medianOneProcessResultsPerSec: Math.round(median(serverRates)),
    medianRawCopyRowsPerSec: Math.round(median(copyRates)),
    medianRatioToRawCopy: round2(median(ratios)),
    medianRatioToRawCopyPerReportTx: round2(median(reportRatios)),
  })
  const line = (o) => console.log(JSON.stringify({ bench: 'pg-ingest', ...o }))
  line({
    metric: `results/s, ${WRITERS} writer processes (median of ${ROUNDS})`,
    value: Math.round(median(rates)),
    target: '>= 100000',
  })
  line({ metric: `baseline: raw COPY rows/s, ${WRITERS} connections`, value: Math.round(median(copyRates)) })
  line({ metric: 'ratio ingest / raw COPY', value: round2(median(ratios)) })
  line({ metric: `results/s, ${WRITERS} uploads through one process (serve)`, value: Math.round(median(serverRates)) })

  // Disk, measured on the last round before maintenance, so that it is what a live server carries.
  const sizes = await admin.query(
    `SELECT c.relname AS table, pg_total_relation_size(c.oid)::bigint AS bytes FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 2 DESC`,
    [schema],
  )
  const bytes = sizes.rows.reduce((n, r) => n + Number(r.bytes), 0)
  const counted = await one(
    'SELECT count(*)::int AS results, (SELECT count(*)::int FROM attempts) AS attempts FROM results',
  )
  const indexes = await admin.query(
    `SELECT c.relname AS index, pg_relation_size(c.oid)::bigint AS bytes FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'i' AND c.relname LIKE 'results%'`,
    [schema],
  )
  emit({
    phase: 'disk',
    results: counted.results,
    attemptRows: counted.attempts,
    totalMB: round2(bytes / 2 ** 20),
    bytesPerResult: Math.round(bytes / counted.results),
    gbPer10M: round2(((bytes / counted.results) * 1e7) / 2 ** 30),
    tablesMB: Object.fromEntries(
      sizes.rows.filter((r) => r.bytes > 65536).map((r) => [r.table, round2(Number(r.bytes) / 2 ** 20)]),
    ),
    resultsHeapMB: round2(Number((await one("SELECT pg_relation_size('results')::bigint AS b")).b) / 2 ** 20),
    resultsIndexesMB: Object.fromEntries(indexes.rows.map((r) => [r.index, round2(Number(r.bytes) / 2 ** 20)])),
  })
  console.log(
    JSON.stringify({
      bench: 'pg-ingest',
      metric: 'disk bytes per stored result (all tables and indexes)',
      value: Math.round(bytes / counted.results),
      gbPer10M: round2(((bytes / counted.results) * 1e7) / 2 ** 30),
    }),
  )

  // Autovacuum gets here on its own (insert-driven vacuum since PG 13); the scan is measured on the state it
  // leaves, with the visibility map set so that the covering index serves an index-only scan. Store and bare
  // cursor alternate, for the same reason as above.
  await admin.query('VACUUM ANALYZE')
  const scans = []
  for (let pass = 1; pass <= 3; pass++) {
    const bare = await bareScan()
    const scan = await storeScan()
    scans.push({ rate: scan.rows / scan.s, ratio: bare.s / scan.s })
    emit({
      phase: 'scan',
      pass,
      results: scan.rows,
      tests: scan.tests,
      seconds: round2(scan.s),
      rowsPerSec: Math.round(scan.rows / scan.s),
      bareCursorRowsPerSec: Math.round(bare.rows / bare.s),
      ratioToBareCursor: round2(bare.s / scan.s),
      heapGrowthMB: round2(scan.heapGrowth / 2 ** 20),
    })
  }
  emit({
    phase: 'scan-summary',
    medianRowsPerSec: Math.round(median(scans.map((s) => s.rate))),
    medianRatioToBareCursor: round2(median(scans.map((s) => s.ratio))),
  })
  console.log(
    JSON.stringify({
      bench: 'pg-ingest',
      metric: 'analysis scan rows/s at 1M results (median of 3)',
      value: Math.round(median(scans.map((s) => s.rate))),
    }),
  )
  console.log(
    JSON.stringify({
      bench: 'pg-ingest',
      metric: 'ratio scan / bare server-side cursor',
      value: round2(median(scans.map((s) => s.ratio))),
    }),
  )
  // Figures on a shared 2-core machine move with its load: every row is read beside this one.
  console.log(
    JSON.stringify({
      bench: 'pg-ingest',
      metric: 'machine load (uptime 1-min average) at the end',
      value: loadavg()[0].toFixed(2),
    }),
  )
} finally {
  if (store) await store.close()
  if (admin) {
    if (!args.keep) await admin.query(made.map((s) => `DROP SCHEMA IF EXISTS ${s} CASCADE`).join(';'))
    else console.error(`kept schemas ${made.join(' ')}`)
    await admin.end()
  }
}

/**
 * The serve case: WRITERS concurrent ingests through one store (one process, one pool), as one `flakewatch serve`
 * instance receiving that many uploads at once. Reports are built before the clock starts.
 */
async function ingestInProcess() {
  const writerStore = await openPostgresStore(url, { poolSize: WRITERS })
  const refs = report(0, 0).runs[0].results.map((r) => r.test)
  const reports = Array.from({ length: WRITERS }, (_, w) =>
    Array.from({ length: REPORTS }, (_, k) => report(w, k, refs)),
  )
  global.gc?.()
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const counts = await Promise.all(
    reports.map(async (mine) => {
      let n = 0
      for (const r of mine) for (const o of await writerStore.ingestReport(r)) n += o.results
      return n
    }),
  )
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  await writerStore.close()
  return { s, results: counts.reduce((a, b) => a + b, 0), cpuMs: (cpu.user + cpu.system) / 1000 }
}

/** The CI case: WRITERS processes (cold, as CLI uploads are), each with its own store, all starting together. */
async function ingestProcesses() {
  const children = Array.from({ length: WRITERS }, (_, w) =>
    fork(
      new URL(import.meta.url),
      ['--worker', String(w), '--writers', String(WRITERS), '--reports', String(REPORTS), '--tests', String(TESTS)],
      {
        env: { ...process.env, FW_BENCH_URL: url },
      },
    ),
  )
  const next = (child) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => code && reject(new Error(`writer exited with ${code}`)))
    })
  await Promise.all(children.map(next))
  const t0 = performance.now()
  const done = children.map(next)
  for (const c of children) c.send('go')
  const outs = await Promise.all(done)
  const s = (performance.now() - t0) / 1000
  return { s, results: outs.reduce((n, o) => n + o.results, 0), cpuMs: outs.reduce((n, o) => n + o.cpuMs, 0) }
}

/**
 * The bare-insert baseline: `total` rows COPYed by WRITERS connections straight into `results`. `perReport` splits
 * each connection's rows into one transaction per report, as the store must; otherwise one transaction each.
 */
async function rawCopy(total, perReport) {
  const per = Math.ceil(total / WRITERS)
  // Rows are rendered before the clock starts: the baseline is the database's insert path, not string building.
  const payloads = Array.from({ length: WRITERS }, (_, w) => {
    const txs = []
    let chunks = []
    let chunk = ''
    for (let i = 0; i < per; i++) {
      const t = i % TESTS
      const run = 1_000_000 + w * 1000 + Math.floor(i / TESTS)
      const failing = (t + run) % 20 === 0
      chunk += `${1767225600000 + run * 1000}\t${t % 200}\t0\t${t + 1}\t${run}\t1\t0\t${failing ? 1 : '\\N'}\t${failing ? 1 : 0}\tf\tf\t${failing ? 'AssertionError' : '\\N'}\n`
      if (chunk.length > 65536) (chunks.push(chunk), (chunk = ''))
      if (perReport && (i + 1) % TESTS === 0) (chunks.push(chunk), (chunk = ''), txs.push(chunks), (chunks = []))
    }
    if (chunk) chunks.push(chunk)
    if (chunks.length) txs.push(chunks)
    return txs
  })
  const clients = await Promise.all(
    payloads.map(async () => {
      const c = new pg.Client({ connectionString: BASE_URL, options: `-c search_path=${schema}` })
      await c.connect()
      return c
    }),
  )
  const t0 = performance.now()
  await Promise.all(
    clients.map(async (c, w) => {
      for (const tx of payloads[w]) {
        await c.query('BEGIN')
        const stream = c.query(
          copyStreams.from(
            'COPY results (at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky, healing, error_type) FROM STDIN',
          ),
        )
        for (const chunk of tx) if (!stream.write(chunk)) await new Promise((r) => stream.once('drain', r))
        stream.end()
        await new Promise((resolve, reject) => (stream.on('finish', resolve), stream.on('error', reject)))
        await c.query('COMMIT')
      }
    }),
  )
  const s = (performance.now() - t0) / 1000
  await Promise.all(clients.map((c) => c.end()))
  return { s }
}

async function storeScan() {
  global.gc?.()
  const heap0 = process.memoryUsage().heapUsed
  let peak = heap0
  let rows = 0
  let tests = 0
  const t0 = performance.now()
  for await (const h of store.scanHistory()) {
    tests++
    rows += h.entries.length
    if (tests % 500 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed)
  }
  return { s: (performance.now() - t0) / 1000, rows, tests, heapGrowth: peak - heap0 }
}

/** The same query, cursor and pages as the store's scan, without building history objects. */
async function bareScan() {
  const t0 = performance.now()
  await admin.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
  await admin.query(
    `DECLARE bare NO SCROLL CURSOR FOR SELECT test, run, status | (flaky::integer << 2) | (healing::integer << 3),
     duration_ms, attempts, failed_attempts, failed_ms, error_type, message FROM results ORDER BY test, at, run`,
  )
  let rows = 0
  for (;;) {
    const page = await admin.query({ text: 'FETCH 20000 FROM bare', rowMode: 'array' })
    rows += page.rows.length
    if (page.rows.length < 20000) break
  }
  await admin.query('COMMIT')
  return { s: (performance.now() - t0) / 1000, rows }
}

/**
 * CPU seconds used so far by every local `postgres` process (Linux /proc; null elsewhere). Sampled around each
 * phase, it splits the cost between the database and its clients independently of how busy the machine is.
 */
function postgresCpuSeconds() {
  try {
    const tick = 100 // USER_HZ on Linux
    let total = 0
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      let stat
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      } catch {
        continue
      }
      const close = stat.lastIndexOf(')')
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue
      const f = stat.slice(close + 2).split(' ')
      // utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the command
      total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / tick
    }
    return total
  } catch {
    return null
  }
}

async function measured(fn) {
  const pg0 = postgresCpuSeconds()
  const out = await fn()
  const pg1 = postgresCpuSeconds()
  return { ...out, pgCpuS: pg0 === null || pg1 === null ? null : pg1 - pg0 }
}

function round2(n) {
  return Math.round(n * 100) / 100
}
