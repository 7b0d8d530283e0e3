// bench/server-soak.mjs on PostgreSQL: the same 10-minute soak (BENCH_SECONDS, default 600) at 1M results, in the
// schema fw_bench_server_api of FLAKEWATCH_TEST_PG, with the same readers and uploaders (see lib/load-run.mjs). A
// script of its own so that its rows and the SQLite soak's are recorded separately.
import { measure } from './lib/load-run.mjs'

const pg = process.env.FLAKEWATCH_TEST_PG
if (!pg) throw new Error('bench/server-soak-pg.mjs needs FLAKEWATCH_TEST_PG (a PostgreSQL URL)')

await measure({
  bench: 'server-soak-pg',
  backend: 'postgres',
  pg,
  tests: 10_000,
  runs: 100,
  seconds: Number(process.env.BENCH_SECONDS ?? 600),
})
