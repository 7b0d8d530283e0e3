// bench/server-load-10m.mjs on PostgreSQL: the same 100,000 tests × 100 runs in the schema fw_bench_server_load_10m of
// FLAKEWATCH_TEST_PG, the same readers and uploaders (see lib/load-run.mjs), for BENCH_SECONDS (default 120). A script
// of its own so that its rows and the SQLite run's are recorded separately.
import { measure } from './lib/load-run.mjs'

const pg = process.env.FLAKEWATCH_TEST_PG
if (!pg) throw new Error('bench/server-load-10m-pg.mjs needs FLAKEWATCH_TEST_PG (a PostgreSQL URL)')

await measure({
  bench: 'server-load-10m-pg',
  backend: 'postgres',
  pg,
  store: 'server-load-10m',
  tests: 100_000,
  runs: 100,
  seconds: Number(process.env.BENCH_SECONDS ?? 120),
})
