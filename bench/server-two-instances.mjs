// Two `flakewatch serve` instances on one store, as behind a load balancer, at 1M stored results (10,000 tests ×
// 100 runs), on SQLite and (when FLAKEWATCH_TEST_PG names a server) on PostgreSQL: the readers of
// bench/server-load.mjs split between the two, the same 10 clients uploading 2,000-test reports to the first, and
// how long after its 201 each upload shows on the second, which finds it by its probe for other instances' writes
// (at most every second) and applies it incrementally. The baseline, in the same run: the full scan a rebuild would cost
// (the cold analysis row). BENCH_BACKENDS=sqlite (or postgres) runs one; BENCH_SECONDS (default 120).
import { measureBackends } from './lib/load-run.mjs'

// A store of its own: its uploads grow it, and other load runs expect theirs as they left it.
await measureBackends({ bench: 'server-two-instances', second: true, store: 'server-two' })
