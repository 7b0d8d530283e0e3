// The team server under continuous load, at 1M stored results (10,000 tests × 100 runs), on SQLite and (when
// FLAKEWATCH_TEST_PG names a server) on PostgreSQL: 20 concurrent readers and the baseline GET /healthz beside 10
// clients uploading 2,000-test JUnit reports back to back (see lib/load-run.mjs; the upload clients run as a niced
// process of their own, standing for remote CI machines). Reported per backend: p95 per endpoint with its ratio to
// /healthz p95 in the same run, failed requests, how long after its 201 each upload shows in the leaderboard, and
// the server's RSS over the run (a soak of BENCH_SECONDS, default 120), its own and with its upload workers.
// BENCH_BACKENDS=sqlite (or postgres) runs one. Run against the build: npm run build && node bench/server-load.mjs
import { measureBackends } from './lib/load-run.mjs'

await measureBackends({ bench: 'server-load' })
