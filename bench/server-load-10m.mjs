// The server-load run at 10M stored results on SQLite: 100,000 tests × 100 runs (a large monorepo's suite), so that
// every snapshot, leaderboard page and heatmap page is drawn from ten times as many tests as in
// bench/server-load.mjs, with the same readers and uploaders (see lib/load-run.mjs), for BENCH_SECONDS (default 120).
import { measure } from './lib/load-run.mjs'

await measure({
  bench: 'server-load-10m',
  backend: 'sqlite',
  store: 'server-load-10m',
  tests: 100_000,
  runs: 100,
  seconds: Number(process.env.BENCH_SECONDS ?? 120),
})
