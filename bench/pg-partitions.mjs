// Time partitions on PostgreSQL (issue 32): a store holding 60 days of history, one partition per day made ahead as a
// daily `serve` makes them, filled through store.ingestReport (2,000 results a run) to each size; then ingest
// results/s at that size, and `prune` of the oldest 30 days, beside baselines measured in the same run: a bare COPY of
// the same rows into an unpartitioned table with the same indexes, and deleting the same 30 days row by row (in
// batches of 50 runs, as prune did before partitions) from an unpartitioned copy of the same rows.
// Uses the built store (`npx tsc -p tsconfig.build.json`). Schemas fw_bench_partitions_<size>, dropped at the end.
//
//   FLAKEWATCH_TEST_PG=postgres://postgres@127.0.0.1:5432/test node bench/pg-partitions.mjs [--sizes 1e6,1e7]
//     [--no-baseline] [--keep]
import { loadavg } from 'node:os'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import copyStreams from 'pg-copy-streams'
import { timed, withClient } from './lib/pg-admin.mjs'

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1e6,1e7' },
    // full: the whole month deleted row by row from an unpartitioned copy; day: one day deleted row by row after the
    // prune (for sizes where copying the store would take longer than the rest of the run).
    baseline: { type: 'string', default: 'full' },
    keep: { type: 'boolean', default: false },
  },
})
const BASE = process.env.FLAKEWATCH_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const DAY = 86_400_000
const DAYS = 60
const TESTS = 2000
/** Reports written at once while filling: the server's upload workers and a few CI jobs. */
const WRITERS = 3
/** Reports timed at the filled size, for the ingest rate there. */
const PROBE_REPORTS = 30

const { openPostgresStore } = await import(new URL('../dist/store/postgres/postgres-store.js', import.meta.url).href)
const emit = (o) => console.log(JSON.stringify({ bench: 'pg-partitions', ...o }))
const log = (m) => process.stderr.write(`${m}\n`)
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d

const refs = Array.from({ length: TESTS }, (_, i) => {
  const module = `src/area_${i % 40}/feature_${i % 300}.test.ts`
  const name = `test-${String(i).padStart(5, '0')} case ${i % 11}`
  return { testId: `web::${module}::${name}`, suite: 'web', module, name, file: module }
})

/** A flaky test's attempts: a timeout, then a pass. */
const RETRIED = [
  ['failed', 80, 'Error: timeout'],
  ['passed', 60, null],
].map(([status, durationMs, message], retry) => ({ retry, status, durationMs, message, stack: null }))

/** Report `k` of `runs`, started at `at`: ~1% failing with a pooled message, ~1% flaky on retry. */
function report(k, at) {
  const results = refs.map((test, i) => {
    const h = (i * 2654435761 + k * 40503) >>> 0
    const fails = h % 100 === 0
    const flaky = !fails && h % 100 === 1
    return {
      test,
      status: fails ? 'failed' : 'passed',
      flakyOnRetry: flaky,
      durationMs: 20 + (h % 500),
      errorType: fails ? 'AssertionError' : null,
      message: fails ? `Error: expected ${h % 30} to equal ${(h % 30) + 1}` : null,
      healingOccurred: false,
      attempts: flaky ? RETRIED : [],
    }
  })
  const run = {
    runId: `bench-${k}`,
    suite: 'web',
    branch: k % 5 ? 'main' : 'feature/x',
    revision: `rev-${k >> 1}`,
    pipelineId: String(k >> 1),
    pipelineUrl: null,
    jobId: String(k),
    jobUrl: null,
    artifactsUrl: null,
    jobStatus: 'success',
    pipelineStatus: 'success',
    runnerId: `runner-${k % 4}`,
    env: { os: 'linux' },
    startedAt: new Date(at).toISOString(),
    finishedAt: null,
    durationMs: null,
    status: 'complete',
  }
  return { file: `junit-${k}.xml`, contentHash: `bench-partitions-${k}`, runs: [{ run, results }] }
}

const admin = (fn) => withClient(BASE, fn)

async function measureSize(size) {
  const schema = `fw_bench_partitions_${size >= 1e6 ? `${size / 1e6}m` : size}`
  const url = (() => {
    const u = new URL(BASE)
    u.searchParams.set('schema', schema)
    return u.toString()
  })()
  await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
  const store = await openPostgresStore(url)
  const runs = Math.round(size / TESTS)
  const now = Date.now()
  const first = (Math.floor(now / DAY) - DAYS + 1) * DAY
  // Runs spread evenly over the 60 days, oldest first; each day's partitions made ahead, as by a daily `serve`.
  const atOf = (k) => first + Math.floor((k * DAYS * DAY) / runs) + 1000
  for (let d = 0; d < DAYS; d += 7) await store.maintain(first + d * DAY)
  const tenth = Math.max(1, Math.floor(runs / 10))
  const rates = []
  let next = 0
  let windowStart = performance.now()
  let windowDone = 0
  const fill = async () => {
    for (;;) {
      const k = next++
      if (k >= runs) return
      await store.ingestReport(report(k, atOf(k)))
      if (++windowDone === tenth) {
        rates.push((tenth * TESTS) / ((performance.now() - windowStart) / 1000))
        windowStart = performance.now()
        windowDone = 0
        log(`  ${schema}: ${k + 1}/${runs} runs`)
      }
    }
  }
  const filled = await timed(() => Promise.all(Array.from({ length: WRITERS }, fill)))
  const stats = await store.stats()
  await admin(async (c) => {
    for (const t of ['results', 'attempts']) await c.query(`VACUUM (ANALYZE) ${schema}.${t}`)
  })
  const partitions = await store.rawQuery(
    `SELECT count(*)::integer AS n FROM pg_inherits WHERE inhparent = to_regclass('results')`,
  )
  const label = `${(stats.results / 1e6).toLocaleString('en')}M results`
  emit({
    metric: `ingest while filling to ${label}, results/s (${WRITERS} writers, 2,000-result reports)`,
    value: Math.round(stats.results / (filled.ms / 1000)),
    first_tenth: Math.round(rates[0] ?? 0),
    last_tenth: Math.round(rates.at(-1) ?? 0),
    partitions: partitions[0].n,
  })

  // Ingest at this size, one writer, the reports of today: the rate a CI upload sees once the store is full.
  const probe = await timed(async () => {
    for (let i = 0; i < PROBE_REPORTS; i++) await store.ingestReport(report(runs + i, now - 60_000 + i))
  })
  const probeRate = (PROBE_REPORTS * TESTS) / (probe.ms / 1000)
  // Baseline: the same rows COPYed bare into an unpartitioned table with the same indexes.
  const bare = await admin(async (c) => {
    await c.query(`SET search_path = ${schema}`)
    await c.query(`CREATE TABLE bare_results (LIKE results_default INCLUDING INDEXES)`)
    const rows = (await c.query(`SELECT * FROM results WHERE at >= $1 LIMIT ${PROBE_REPORTS * TESTS}`, [now - 120_000]))
      .rows
    const lines = rows.map(
      (r) =>
        `${Object.values(r)
          .map((v) => (v === null ? '\\N' : String(v)))
          .join('\t')}\n`,
    )
    await c.query(`TRUNCATE bare_results`)
    const t = await timed(async () => {
      for (let i = 0; i < PROBE_REPORTS; i++) {
        const chunk = lines.slice(i * TESTS, (i + 1) * TESTS).map((l) => l.replace(/^\d+\t/, `${i}\t`))
        await c.query('BEGIN')
        await pipeline(Readable.from(chunk), c.query(copyStreams.from('COPY bare_results FROM STDIN')))
        await c.query('COMMIT')
      }
    })
    await c.query('DROP TABLE bare_results')
    return (rows.length / (t.ms / 1000)) * 1
  })
  emit({
    metric: `ingest at ${label}, results/s (one writer, ${PROBE_REPORTS} reports)`,
    value: Math.round(probeRate),
    baseline_bare_copy: Math.round(bare),
    vs_bare_copy: round(probeRate / bare, 2),
  })

  // Prune the oldest 30 days: each of their partitions dropped; row by row only in the day the cutoff straddles.
  const cutoff = first + 30 * DAY + DAY / 2
  let baseline = null
  if (args.baseline === 'full') baseline = await rowByRowBaseline(schema, cutoff)
  const before = (await store.stats()).results
  const expected = (await store.rawQuery('SELECT count(*)::bigint AS n FROM results WHERE at < $1', cutoff))[0].n
  const pruned = await timed(() => store.prune(cutoff))
  const after = (await store.stats()).results
  const newerKept = (await store.rawQuery('SELECT count(*)::bigint AS n FROM results WHERE at >= $1', cutoff))[0].n
  if (pruned.value.results !== expected || before - after !== expected || newerKept !== after) {
    throw new Error(`prune removed ${pruned.value.results} (${before - after} by count), expected ${expected}`)
  }
  emit({
    metric: `prune of the oldest 30 days at ${label}, s`,
    value: round(pruned.ms / 1000, 2),
    target: '≤ 10',
    results_pruned: pruned.value.results,
    runs_pruned: pruned.value.runs,
    ...(baseline && {
      baseline_row_by_row_s: round(baseline.ms / 1000, 1),
      vs_row_by_row: round(pruned.ms / baseline.ms, 3),
    }),
  })
  if (args.baseline === 'day') {
    // The next day, deleted as prune deleted before partitions (batches of 50 runs by run key), in its partition.
    const day = await store.rawQuery(
      'SELECT count(*)::integer AS runs, coalesce(sum(total), 0)::bigint AS results FROM runs WHERE at >= $1 AND at < $2',
      first + 31 * DAY,
      first + 32 * DAY,
    )
    const t = await timed(() =>
      admin(async (c) => {
        await c.query(`SET search_path = ${schema}`)
        for (;;) {
          await c.query('BEGIN')
          const { rows } = await c.query(
            'SELECT id, at FROM runs WHERE at >= $1 AND at < $2 ORDER BY at LIMIT 50 FOR UPDATE',
            [first + 31 * DAY, first + 32 * DAY],
          )
          const ids = rows.map((r) => r.id)
          const ats = rows.map((r) => r.at)
          if (ids.length) {
            await c.query('DELETE FROM results WHERE run = ANY($1::integer[]) AND at = ANY($2::bigint[])', [ids, ats])
            await c.query('DELETE FROM attempts WHERE run = ANY($1::integer[]) AND at = ANY($2::bigint[])', [ids, ats])
            await c.query('DELETE FROM reports WHERE run = ANY($1::integer[])', [ids])
            await c.query('DELETE FROM runs WHERE id = ANY($1::integer[])', [ids])
          }
          await c.query('COMMIT')
          if (ids.length === 0) return
        }
      }),
    )
    emit({
      metric: `baseline at ${label}: one day deleted row by row (batches of 50 runs), s`,
      value: round(t.ms / 1000, 2),
      results: Number(day[0].results),
      runs: day[0].runs,
      month_of_such_days_s: round((t.ms * 30) / 1000, 1),
      prune_vs_month_row_by_row: round(pruned.ms / (t.ms * 30), 3),
    })
  }
  await store.close()
  if (!args.keep) await admin((c) => c.query(`DROP SCHEMA ${schema} CASCADE`))
}

/**
 * The same rows deleted as prune deleted them before partitions: an unpartitioned copy of results and attempts (the
 * keys and the scan index of 0001), and batches of 50 runs, oldest first, each deleting by run key.
 */
async function rowByRowBaseline(schema, cutoff) {
  return admin(async (c) => {
    await c.query(`SET search_path = ${schema}`)
    log(`  ${schema}: copying to an unpartitioned baseline`)
    await c.query(`
      CREATE TABLE plain_results AS SELECT * FROM results;
      CREATE TABLE plain_attempts AS SELECT * FROM attempts;
      CREATE TABLE plain_runs AS SELECT id, at FROM runs;
      ALTER TABLE plain_results ADD PRIMARY KEY (run, test);
      CREATE INDEX plain_results_scan ON plain_results (test, at, run)
        INCLUDE (status, flaky, duration_ms, attempts, failed_attempts, failed_ms, error_type, message, healing, position);
      ALTER TABLE plain_attempts ADD PRIMARY KEY (run, test, retry);
      ALTER TABLE plain_runs ADD PRIMARY KEY (id);
      CREATE INDEX plain_runs_at ON plain_runs (at);
    `)
    for (const t of ['plain_results', 'plain_attempts', 'plain_runs']) await c.query(`VACUUM (ANALYZE) ${t}`)
    log(`  ${schema}: row-by-row baseline`)
    const t = await timed(async () => {
      for (;;) {
        await c.query('BEGIN')
        const { rows } = await c.query('SELECT id FROM plain_runs WHERE at < $1 ORDER BY at LIMIT 50 FOR UPDATE', [
          cutoff,
        ])
        const ids = rows.map((r) => r.id)
        if (ids.length) {
          await c.query('DELETE FROM plain_results WHERE run = ANY($1::integer[])', [ids])
          await c.query('DELETE FROM plain_attempts WHERE run = ANY($1::integer[])', [ids])
          await c.query('DELETE FROM plain_runs WHERE id = ANY($1::integer[])', [ids])
        }
        await c.query('COMMIT')
        if (ids.length === 0) return
      }
    })
    await c.query('DROP TABLE plain_results, plain_attempts, plain_runs')
    return t
  })
}

for (const size of args.sizes.split(',').map(Number)) {
  log(`pg-partitions: ${size.toLocaleString('en')} results`)
  await measureSize(size)
}
emit({ metric: 'machine load (uptime 1-min average) at the end', value: loadavg()[0].toFixed(2) })
