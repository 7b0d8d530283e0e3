// The server-load run as a 10-minute soak (BENCH_SECONDS, default 600) on SQLite at 1M results: does the server's
// RSS stay flat, and do the read percentiles hold, when uploads go on for longer than a few minutes? Same readers,
// uploaders and store as bench/server-load.mjs (see lib/load-run.mjs).
import { measure } from './lib/load-run.mjs'

await measure({
  bench: 'server-soak',
  backend: 'sqlite',
  tests: 10_000,
  runs: 100,
  seconds: Number(process.env.BENCH_SECONDS ?? 600),
})
