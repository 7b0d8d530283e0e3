// Scale on PostgreSQL (issue 32): a store filled to 10^6, 10^7 and 5×10^7 results (10^8 if disk and time allow), and
// at each size, with real `flakewatch serve` processes (dist/cli/main.js) and GET /healthz as the baseline in the
// same run: the time from an instance's spawn to its first leaderboard answer; its RSS; read p95 with 20 readers
// while 10 clients upload 2,000-test reports (lib/load-run.mjs); how long after its 201 an upload is visible; ingest
// results/s through those uploads; and `prune` of the oldest 30 days. Targets at every size: first answer ≤ 5 s,
// RSS ≤ 500 MB, read p95 ≤ 50 ms or within 1.2× of /healthz, visible ≤ 2 s, pruning a month ≤ 10 s, each flat
// from 10^6 upwards.
//
// The store is filled in SQL (generate_series, INSERT … SELECT a day at a time into the real schema that the
// migrations made, the keys and the scan index dropped during the fill and rebuilt once, as a restore would), in
// the shapes uploads leave: 20,000 tests in 4 suites of 5,000 (10 tests a file), each run one suite, runs spread
// over 60 days (more at over 10^6 a day: ~1M results a day at 5×10^7), 3% of tests flaky (failing 20%, some passing
// on retry, with their attempts), 1% broken in the last 3 days, the rest failing 0.1%, 30 distinct messages; then
// `analyses` is filled by the real sweep (refreshAnalyses), as a deployment has it. Only the measurement runs
// under `flock /tmp/flakewatch-bench.lock`, not the fill.
//
// It wants a PostgreSQL cluster of its own, so that the bulk data neither slows other tests on 5432 nor streams to
// a replica (docs/development.md, "Scale bench"):
//   pg_createcluster 15 scale -p 5434 -- --auth=trust
//   printf '%s\n' "listen_addresses = '127.0.0.1'" 'shared_buffers = 1GB' 'max_wal_size = 6GB' \
//     'maintenance_work_mem = 1GB' 'wal_level = minimal' 'max_wal_senders = 0' 'synchronous_commit = off' \
//     > /etc/postgresql/15/scale/conf.d/bench.conf
//   pg_ctlcluster 15 scale start && psql -h 127.0.0.1 -p 5434 -U postgres -c 'CREATE DATABASE scale'
//   FLAKEWATCH_BENCH_PG=postgres://postgres@127.0.0.1:5434/scale node bench/pg-scale.mjs --sizes 1e6,1e7,5e7
//   pg_dropcluster --stop 15 scale        # when done: 5×10^7 results take ~15 GB
// Options: --sizes (default 1e6,1e7), --seconds of load per size (default 60), --tests (default 20,000), --keep
// (leave each size's schema fw_scale_<size>), --reuse (serve a schema kept by --keep instead of filling it again),
// --no-lock (no flock around the measurement), --prefix (schema names, default fw_scale), --upload-tests (tests per
// uploaded report, default 2,000), --no-prune (with --keep, to serve the whole history again with --reuse),
// --reanalyse (every row of another configuration before the load: the instance re-analyses the store as it serves).
import { execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { measure } from './lib/load-run.mjs'
import { timed, withClient } from './lib/pg-admin.mjs'

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1e6,1e7' },
    seconds: { type: 'string', default: '60' },
    tests: { type: 'string', default: '20000' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    'no-lock': { type: 'boolean', default: false },
    // Schemas are <prefix>_<size>: the CI test (test/bench/pg-scale.test.ts) uses its own.
    prefix: { type: 'string', default: 'fw_scale' },
    'upload-tests': { type: 'string', default: '2000' },
    // With --keep: leave the history whole for a later --reuse run (prune takes half of it).
    'no-prune': { type: 'boolean', default: false },
    // Fill and keep the schema, measure nothing (with --keep); or, with --reuse, only prune it.
    'fill-only': { type: 'boolean', default: false },
    'prune-only': { type: 'boolean', default: false },
    // Every row made with another configuration before the load, as after an upgrade or a changed threshold: the
    // instance re-analyses the whole store while it serves (the worst case for its memory).
    reanalyse: { type: 'boolean', default: false },
  },
})
const BASE = process.env.FLAKEWATCH_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5434/scale'
const DAY = 86_400_000
const SUITES = ['web', 'api', 'unit', 'e2e']
const TESTS = Number(args.tests)
const PER_SUITE = Math.ceil(TESTS / SUITES.length)
/** Days of history: 60, or more where that would be over a million results a day. */
const daysFor = (size) => Math.max(60, Math.ceil(size / 1e6))
const LOCK = '/tmp/flakewatch-bench.lock'
const dist = join(import.meta.dirname, '..', 'dist')

const { openPostgresStore } = await import(join(dist, 'store/postgres/postgres-store.js'))
const { PARTITIONED_INDEXES } = await import(join(dist, 'store/postgres/partitions.js'))
const { refreshAnalyses } = await import(join(dist, 'pipeline/persisted-analyses.js'))
const { analysisOptions, loadConfig } = await import(join(dist, 'config/load.js'))
const { resolveAnalysisConfig } = await import(join(dist, 'analysis/index.js'))

const emit = (o) => console.log(JSON.stringify({ bench: 'pg-scale', ...o }))
const log = (m) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`)
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const sizeName = (size) => (size >= 1e6 ? `${size / 1e6}m` : `${size / 1e3}k`).replace('.', '_')
const urlFor = (schema) => {
  const u = new URL(BASE)
  u.searchParams.set('schema', schema)
  return u.toString()
}

const sql = (schema, fn) => withClient(BASE, fn, schema)

/** The analysis configuration `serve` uses when started here (it inherits this process's directory). */
const analysisConfig = () => resolveAnalysisConfig(analysisOptions(loadConfig({ cwd: process.cwd(), env: {} })))

/** Reports ingested by one writer at each size, after the load. */
const PROBE_REPORTS = 10
const probeSession = Date.now().toString(36)

/** Probe report `k`: one run of the suite `web` (its 5,000 tests, named as the fill names them), started at `at`. */
function probeReport(k, at) {
  const results = Array.from({ length: PER_SUITE }, (_, j) => {
    const module = `src/web/area_${j % 40}/feature_${Math.floor(j / 10)}.test.ts`
    const name = `test-${String(j).padStart(5, '0')} case ${j % 11}`
    const fails = (j * 7 + k) % 100 === 0
    return {
      test: { testId: `web::${module}::${name}`, suite: 'web', module, name, file: module },
      status: fails ? 'failed' : 'passed',
      flakyOnRetry: false,
      durationMs: 20 + (j % 500),
      errorType: fails ? 'AssertionError' : null,
      message: fails ? 'Error: expected element to be visible (timeout 100 ms)' : null,
      healingOccurred: false,
      attempts: [],
    }
  })
  const run = {
    runId: `probe-${probeSession}-${k}`,
    suite: 'web',
    branch: 'main',
    revision: `probe-${k}`,
    pipelineId: null,
    pipelineUrl: null,
    jobId: null,
    jobUrl: null,
    artifactsUrl: null,
    jobStatus: 'success',
    pipelineStatus: 'success',
    runnerId: 'runner-probe',
    env: { os: 'linux' },
    startedAt: new Date(at).toISOString(),
    finishedAt: null,
    durationMs: null,
    status: 'complete',
  }
  return { file: `probe-${k}.xml`, contentHash: `probe-${probeSession}-${k}`, runs: [{ run, results }] }
}

/**
 * A deterministic hash of (test, run) in [0, 1000), in SQL: which results fail is the same in every run of the bench.
 * `t` and `r` are the integer keys.
 */
const H = `(((t.id::bigint * 2654435761 + r.id::bigint * 40503) # (r.id::bigint * 97)) % 1000)`

/** Fills `schema` with `size` results (see the header), returning what it holds and how long each step took. */
async function fill(schema, size, now) {
  await sql(null, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
  const days = daysFor(size)
  const first = (Math.floor(now / DAY) - days + 1) * DAY
  const runs = Math.max(SUITES.length, Math.round(size / PER_SUITE))
  const store = await openPostgresStore(urlFor(schema))
  // Each day's partitions, made ahead as a daily `serve` makes them (today and the seven days after `at`).
  for (let d = 0; d < days + 7; d += 7) await store.maintain(first + d * DAY)
  await store.close()
  const steps = {}
  const step = async (name, fn) => {
    const t = await timed(fn)
    steps[name] = round(t.ms / 1000, 1)
    log(`  ${schema}: ${name} ${steps[name]} s`)
    return t.value
  }
  await sql(schema, async (c) => {
    await step('tests, runs, reports', async () => {
      await c.query(
        `INSERT INTO tests (test_id, suite, module, name, file)
         SELECT s || '::' || m || '::' || n, s, m, n, m FROM (
           SELECT i, s, 'src/' || s || '/area_' || (j % 40) || '/feature_' || (j / 10) || '.test.ts' AS m,
             'test-' || lpad(j::text, 5, '0') || ' case ' || (j % 11) AS n
           FROM (SELECT i, ($1::text[])[i / $2 + 1] AS s, i % $2 AS j FROM generate_series(0, $3 - 1) i) x
         ) y ORDER BY i`,
        [SUITES, PER_SUITE, TESTS],
      )
      await c.query(`INSERT INTO analyses (test) SELECT id FROM tests ON CONFLICT DO NOTHING`)
      await c.query(
        `INSERT INTO messages (key, text) SELECT 'bench-' || i,
           CASE WHEN i = 0 THEN 'Error: timeout' ELSE 'Error: expected element to be visible (timeout ' || (i * 100) || ' ms)' END
         FROM generate_series(0, 29) i`,
      )
      await c.query(
        `INSERT INTO runs (run_id, suite, branch, revision, pipeline_id, job_id, runner_id, env, started_at, status,
           uploaded_at, at, written_at)
         SELECT 'scale-' || k, ($1::text[])[k % 4 + 1], CASE WHEN k % 5 = 0 THEN 'feature/x' ELSE 'main' END,
           'rev-' || (k / 8), (k / 4)::text, k::text, 'runner-' || (k % 6), '{"os":"linux"}',
           to_char(to_timestamp(at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           CASE WHEN k % 37 = 36 THEN 'interrupted' ELSE 'complete' END,
           to_char(to_timestamp(at / 1000.0 + 600) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), at, at + 600000
         FROM (SELECT k, $2::bigint + (k::numeric * $3 / $4)::bigint + 1000 AS at FROM generate_series(0, $4 - 1) k) x
         ORDER BY k`,
        [SUITES, first, days * DAY, runs],
      )
      await c.query(
        `INSERT INTO reports (run, content_hash, file, ingested_at)
         SELECT id, 'scale-' || id, 'junit-' || id || '.xml', uploaded_at FROM runs`,
      )
    })
    // The keys and the scan index are built once after the rows are in, as migration 0017 does.
    await c.query(`ALTER TABLE results DROP CONSTRAINT results_pkey; DROP INDEX results_scan;
                   ALTER TABLE attempts DROP CONSTRAINT attempts_pkey`)
    const { rows: msg } = await c.query(`SELECT min(id) AS timeout, min(id) + 1 AS first FROM messages`)
    await step('results and attempts', async () => {
      for (let d = 0; d < days; d++) {
        const lo = first + d * DAY
        // Kinds by test: 3% flaky (fail 20%; a tenth of their passes needed a retry), 1% broken in the last 3
        // days, the rest failing 0.1%.
        await c.query(
          `INSERT INTO results (at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status,
             flaky, healing, error_type, position)
           SELECT r.at, 20 + h % 500, CASE WHEN fails THEN 20 + h % 500 WHEN retried THEN 80 ELSE 0 END, t.id, r.id,
             CASE WHEN retried THEN 2 ELSE 1 END, CASE WHEN fails OR retried THEN 1 ELSE 0 END,
             CASE WHEN fails THEN $4::integer + h % 29 END, CASE WHEN fails THEN 1 ELSE 0 END, retried, false,
             CASE WHEN fails THEN 'AssertionError' END, t.id % $5
           FROM runs r JOIN tests t ON t.suite = r.suite,
             LATERAL (SELECT ${H} AS h) x,
             LATERAL (SELECT CASE WHEN t.id % 100 < 3 THEN h < 200 WHEN t.id % 100 = 3 THEN r.at > $3::bigint - 3 * ${DAY}
                      ELSE h = 0 END AS fails) f,
             LATERAL (SELECT t.id % 100 < 3 AND NOT fails AND h % 10 = 1 AS retried) q
           WHERE r.at >= $1 AND r.at < $2`,
          [lo, lo + DAY, now, msg[0].first, PER_SUITE],
        )
        await c.query(
          `INSERT INTO attempts (at, duration_ms, run, test, retry, message, stack, status)
           SELECT at, CASE WHEN a = 0 THEN 80 ELSE 60 END, run, test, a, CASE WHEN a = 0 THEN $3::integer END, NULL,
             CASE WHEN a = 0 THEN 1 ELSE 0 END
           FROM results, generate_series(0, 1) a WHERE flaky AND at >= $1 AND at < $2`,
          [lo, lo + DAY, msg[0].timeout],
        )
        if (d % 10 === 9) log(`  ${schema}: ${d + 1}/${days} days`)
      }
    })
    await step('keys and scan index', () => c.query(PARTITIONED_INDEXES))
    await step('run counts', () =>
      c.query(`UPDATE runs SET total = s.total, passed = s.passed, failed = s.failed, flaky = s.flaky
               FROM (SELECT run, count(*)::integer AS total, count(*) FILTER (WHERE status = 0)::integer AS passed,
                       count(*) FILTER (WHERE status IN (1, 2))::integer AS failed,
                       count(*) FILTER (WHERE flaky)::integer AS flaky FROM results GROUP BY run) s
               WHERE runs.id = s.run`),
    )
    // What autovacuum brings a store to: the visibility map set (index-only scans) and planner statistics.
    await step('vacuum', async () => {
      for (const t of ['results', 'attempts', 'runs', 'tests', 'reports', 'messages', 'analyses']) {
        await c.query(`VACUUM (ANALYZE) ${t}`)
      }
    })
  })
  const live = await openPostgresStore(urlFor(schema))
  const swept = await step('sweep (analyses rows)', () => refreshAnalyses(live, analysisConfig()))
  await sql(schema, (c) => c.query('VACUUM (ANALYZE) analyses'))
  const stats = await live.stats()
  await live.close()
  const bytes = await sql(null, async (c) => {
    const { rows } = await c.query(
      `SELECT sum(pg_total_relation_size(c.oid))::bigint AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'm', 't')`,
      [schema],
    )
    return Number(rows[0].b)
  })
  return { results: stats.results, runs, days, first, steps, swept, gb: round(bytes / 2 ** 30, 2) }
}

/** Runs `fn` holding the bench lock (flock on a file descriptor of this process's own child), so timings are alone. */
async function locked(fn) {
  if (args['no-lock']) return fn()
  // flock(1) holds the lock while its child runs; the child waits for this process to close its stdin.
  const { spawn } = await import('node:child_process')
  const holder = spawn('flock', [LOCK, 'sh', '-c', 'echo locked; cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  await new Promise((resolve, reject) => {
    holder.stdout.once('data', resolve)
    holder.on('exit', (code) => reject(new Error(`flock exited with ${code}`)))
  })
  try {
    return await fn()
  } finally {
    holder.removeAllListeners('exit')
    holder.stdin.end()
  }
}

/** The configuration `--reanalyse` gives every row: one no build has. */
const OLD_CONFIG = 'before-the-upgrade'

/** The name of a size's rows. */
const labelFor = (size) =>
  `PostgreSQL ${size.toLocaleString('en')}${args.reanalyse ? ', every row re-analysed under the load' : ''}`

async function measureSize(size) {
  const schema = `${args.prefix}_${sizeName(size)}`
  const now = Date.now()
  log(`pg-scale: ${size.toLocaleString('en')} results in ${schema}`)
  let filled
  if (args.reuse) {
    const { rows } = await sql(schema, (c) =>
      c.query("SELECT min(at)::bigint AS lo, count(*)::integer AS runs FROM runs WHERE run_id LIKE 'scale-%'"),
    )
    const first = Math.floor(Number(rows[0].lo) / DAY) * DAY
    filled = { results: null, runs: rows[0].runs, days: daysFor(size), first, steps: {}, reused: true }
    // A kept store opened by a newer build is migrated first, and the sweep redoes the rows it left due, as after
    // an upgrade: the measurement starts from swept rows.
    const swept = await timed(async () => {
      const live = await openPostgresStore(urlFor(schema))
      try {
        return await refreshAnalyses(live, analysisConfig())
      } finally {
        await live.close()
      }
    })
    emit({
      metric: `reuse of ${size.toLocaleString('en')} results: migration and sweep of due rows, s`,
      value: round(swept.ms / 1000, 1),
      swept_rows: swept.value.written,
    })
  } else {
    const t = await timed(() => fill(schema, size, now))
    filled = t.value
    emit({
      metric: `fill to ${size.toLocaleString('en')} results (SQL, then the sweep), s`,
      value: round(t.ms / 1000, 0),
      rate_results_per_s: Math.round(filled.results / (t.ms / 1000)),
      ...filled.steps,
      swept_rows: filled.swept.written,
      days: filled.days,
      runs: filled.runs,
      tests: TESTS,
      schema_gb: filled.gb,
      disk_free: execFileSync('df', ['-h', '--output=avail', '/'], { encoding: 'utf8' }).split('\n')[1].trim(),
    })
  }
  const label = labelFor(size)
  if (args['fill-only']) return null
  const rows = await locked(async () => {
    if (args['prune-only']) return [await prune(schema, filled, label)]
    const before = args.reanalyse
      ? (await sql(schema, (c) => c.query('UPDATE analyses SET config = $1', [OLD_CONFIG]))).rowCount
      : 0
    const loadRows = await measure({
      bench: 'pg-scale',
      backend: 'postgres',
      db: urlFor(schema),
      label,
      seconds: Number(args.seconds),
      uploadTests: Number(args['upload-tests']),
    })
    const store = await openPostgresStore(urlFor(schema))
    // Ingest at this size through the store's write path alone, one writer (as `flakewatch ingest` in CI): the
    // figure above is an upload's, sharing two cores with the server's 20 readers.
    const probe = await timed(async () => {
      for (let i = 0; i < PROBE_REPORTS; i++) await store.ingestReport(probeReport(i, Date.now() - 60_000 + i))
    })
    const probeRow = {
      metric: `${label}: ingest by one writer (store.ingestReport, ${PER_SUITE.toLocaleString('en')}-result reports), results/s`,
      value: Math.round((PROBE_REPORTS * PER_SUITE) / (probe.ms / 1000)),
      reports: PROBE_REPORTS,
      load: loadavg()[0].toFixed(2),
    }
    emit(probeRow)
    if (args.reanalyse) {
      const { rows: left } = await sql(schema, (c) =>
        c.query('SELECT count(*)::integer AS n FROM analyses WHERE config = $1', [OLD_CONFIG]),
      )
      const row = {
        metric: `${label}: rows of another configuration, before → after the load`,
        value: `${before} → ${left[0].n}`,
      }
      emit(row)
      loadRows.push(row)
    }
    if (args['no-prune']) {
      await store.close()
      return [...loadRows, probeRow]
    }
    await store.close()
    return [...loadRows, probeRow, await prune(schema, filled, label)]
  })
  if (!args.keep) await sql(null, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`))
  return args['prune-only'] ? null : summarize(size, rows)
}

/** Prunes the oldest 30 days of `schema` (filled from `filled.first`), checks what went, and prints the time. */
async function prune(schema, filled, label) {
  const store = await openPostgresStore(urlFor(schema))
  // Prune the oldest 30 days: whole day partitions dropped, row by row only in the day the cutoff straddles.
  const cutoff = filled.first + 30 * DAY + DAY / 2
  const expected = (await store.rawQuery('SELECT count(*)::bigint AS n FROM results WHERE at < $1', cutoff))[0].n
  const before = (await store.stats()).results
  const pruned = await timed(() => store.prune(cutoff))
  const after = (await store.stats()).results
  await store.close()
  if (pruned.value.results !== expected || before - after !== expected) {
    throw new Error(`prune removed ${pruned.value.results} (${before - after} by count), expected ${expected}`)
  }
  const row = {
    metric: `${label}: prune of the oldest 30 days, s`,
    value: round(pruned.ms / 1000, 2),
    target: '≤ 10',
    results_pruned: pruned.value.results,
    runs_pruned: pruned.value.runs,
    load: loadavg()[0].toFixed(2),
  }
  emit(row)
  return row
}

/** The figures the targets name, from the rows of one size. */
function summarize(size, rows) {
  const find = (part) => rows.find((r) => r.metric.includes(part))
  const cold = find('cold analysis')
  const healthz = find('GET /healthz').value
  const reads = rows.filter((r) => / GET \/api/.test(r.metric))
  const worst = reads.reduce((a, b) => (b.value > a.value ? b : a))
  const rss = find('server RSS')
  const visible = find('visible')
  const ingest = find('ingest through POST')
  const writer = find('ingest by one writer')
  const prune = find('prune of the oldest') ?? { value: NaN }
  const failed = find('failed requests')
  const figures = {
    size,
    first_answer_s: round(cold.since_spawn_ms / 1000, 2),
    rss_peak_mb: rss.peak_mb,
    rss_with_workers: rss.with_upload_workers,
    read_p95_ms: worst.value,
    read_p95_of: worst.metric.replace(/^.*?: /, '').replace(/ p95.*$/, ''),
    healthz_p95_ms: healthz,
    read_vs_healthz: round(worst.value / healthz, 2),
    visible_p95_ms: visible.value,
    ingest_results_per_s: ingest.value,
    ingest_one_writer_results_per_s: writer.value,
    prune_s: prune.value,
    failed_requests: failed.value,
  }
  const meets = {
    first_answer: figures.first_answer_s <= 5,
    rss: figures.rss_peak_mb <= 500,
    read: figures.read_p95_ms <= 50 || figures.read_vs_healthz <= 1.2,
    visible: figures.visible_p95_ms <= 2000,
    ...(args['no-prune'] ? {} : { prune: figures.prune_s <= 10 }),
  }
  emit({
    metric: `${labelFor(size)}: targets met`,
    value: Object.values(meets).every(Boolean)
      ? 'all'
      : `missed: ${Object.keys(meets)
          .filter((k) => !meets[k])
          .join(', ')}`,
    ...figures,
  })
  return figures
}

const sizes = args.sizes.split(',').map(Number)
const all = []
for (const size of sizes) {
  const figures = await measureSize(size)
  if (figures) all.push(figures)
}
if (all.length > 1) {
  // Flat: the largest size's figure over the smallest's (1.0 is flat; first answer, RSS, p95, visible and prune
  // should stay near it; ingest should not fall).
  const [a, b] = [all[0], all.at(-1)]
  const ratio = (k) => round(b[k] / Math.max(a[k], 1e-9), 2)
  emit({
    metric: `growth from ${a.size.toLocaleString('en')} to ${b.size.toLocaleString('en')} results (largest ÷ smallest)`,
    value: ratio('read_p95_ms'),
    first_answer: ratio('first_answer_s'),
    rss: ratio('rss_peak_mb'),
    read_p95: ratio('read_p95_ms'),
    healthz_p95: ratio('healthz_p95_ms'),
    visible: ratio('visible_p95_ms'),
    ingest: ratio('ingest_results_per_s'),
    ingest_one_writer: ratio('ingest_one_writer_results_per_s'),
    prune: ratio('prune_s'),
  })
}
emit({ metric: 'machine load (uptime 1-min average) at the end', value: loadavg()[0].toFixed(2) })
