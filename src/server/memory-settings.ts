import { getHeapStatistics, setFlagsFromString } from 'node:v8'

/*
 * What `flakewatch serve` costs in memory is the server process plus its upload worker process: both show in `ps`.
 * The figures below are peak RSS during a 100 MB JUnit upload on SQLite (bench/ingest-memory.mjs), each measured
 * beside the setting it replaced.
 */

/**
 * V8 heap settings of an upload worker process. Ingest streams: it keeps a bounded state (a test-key cache, the
 * store's page cache) and makes short-lived garbage per chunk, so V8's defaults size the heap for a program it is
 * not. The worker's peak went from 148 to 112 MB (captured output) and from 179 to 130 MB (1.37M bare test
 * cases), in the same time:
 * - a 1 MB semi-space (the default grows to 16 MB): the young generation collects the per-chunk garbage as well;
 * - the old generation grows by 30% over what survived the last full collection before the next one (by default
 *   by up to 4×, since the heap limit is large). Not a heap limit: a 256 MB JSON report, parsed whole, still fits.
 */
export const UPLOAD_WORKER_V8_FLAGS = ['--max-semi-space-size=1', '--heap-growing-percent=30'] as const

/**
 * Environment of an upload worker process: glibc gives each thread that allocates an arena of its own, and V8's
 * background threads (compilers, the collector) keep theirs full of freed memory. Two arenas: 4-5 MB less at the
 * peak, in the same time. Ignored by other C libraries; a value the server was started with is kept.
 */
export function uploadWorkerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2' }
}

/**
 * SQLite page caches of the server's connections, in MB. The operating system already caches the store's file,
 * so SQLite's cache on top of it saves only a copy per page read; a server runs for weeks, and each of its
 * connections fills its cache to the limit as the store grows under it. In a 300 s upload soak at 1M results the
 * server's memory outside the V8 heaps grew from about 45 to 110 MB with the CLI's caches (32 MB per connection
 * that writes, 64 MB per reader).
 * - `serving`: the serving thread's connections, which read by key (a test's name, its quarantine, the newest run);
 * - `analysis`: the analysis thread's, which reads the histories of the tests each upload touched;
 * - `upload`: an upload worker's, half the CLI's: a large report fills any cache (each of its pages is new), so the
 *   cache is what that report costs in memory. 16 MB less brought the worker to about 100 MB on both 100 MB files;
 *   a 100 MB upload of 1.37M cases took no longer (24-31 s beside 31-32 s).
 */
export const SERVER_CACHE_MB = { serving: 8, analysis: 16, upload: 16 } as const

/**
 * Heap size (MB) of the serving thread up to which the heap is kept small (see `keepHeapSmall`). A store of ~1M
 * results stays under it; past it the heap holds a large analysis, and a 1 MB young generation then promotes each
 * upload's and each read's short-lived garbage into an old generation of gigabytes: at 10M results on SQLite, RSS
 * climbed from 1.8 to 4.2 GB before a full collection that stalled reads for 3 s (bench/server-load-10m.mjs),
 * against a 2.4 GB peak and a 270 ms worst read with V8's default growth. The 30 MB saved matter at 80 MB, not at
 * gigabytes.
 */
export const SMALL_HEAP_UP_TO_MB = 256

/** V8's own `--semi-space-growth-factor`. */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2

/**
 * How much V8 lets the old generation grow over what survived the last full collection while the serving
 * thread's heap is small, in percent (V8 chooses 10% to 300% by itself, by how fast it collects). On the server
 * each upload replaces the analysis of the tests it touched, so the old generation fills with the analyses it
 * replaced: at 1M results in a 300 s upload soak, the serving thread's heap swung between 60 and 225 MB and the
 * analysis thread's between 55 and 218 MB, where each held 60-80 MB alive. Process-wide, so it also applies to
 * the analysis and bundle threads.
 */
export const SMALL_HEAP_GROWING_PERCENT = 30

/**
 * Keeps this process's heap small while the serving thread's heap is small, for `flakewatch serve`:
 * - the young generation stays at its initial size (1 MB semi-spaces) instead of growing to 16 MB. The main
 *   thread only moves bytes: the default let it grow during start-up, and a large upload's body chunks (memory
 *   outside the heap, freed only when their young objects are collected) piled up between the rarer collections
 *   of a larger young generation. Idle RSS 88 → 80 MB, peak during a 100 MB upload 126 → 95 MB.
 * - the old generation grows by {@link SMALL_HEAP_GROWING_PERCENT} before the next full collection.
 * Both are set at run time (V8 reads these flags each time it sizes a space), so they also apply to the worker
 * threads started later in this process. Called before the server's modules are loaded.
 *
 * Once the heap passes `upToHeapMb` both go back to V8's defaults, for good (see
 * {@link SMALL_HEAP_UP_TO_MB}). Returns the check, which also runs every 2 s; it answers whether
 * the heap is still kept small.
 */
export function keepHeapSmall(upToHeapMb = SMALL_HEAP_UP_TO_MB): () => boolean {
  setFlagsFromString('--semi-space-growth-factor=1')
  setFlagsFromString(`--heap-growing-percent=${SMALL_HEAP_GROWING_PERCENT}`)
  let small = true
  const check = (): boolean => {
    if (small && getHeapStatistics().used_heap_size >= upToHeapMb * 1048576) {
      setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`)
      // 0 is V8's own default: no fixed percentage, its dynamic factor.
      setFlagsFromString('--heap-growing-percent=0')
      small = false
      clearInterval(timer)
    }
    return small
  }
  const timer = setInterval(check, 2000).unref()
  return check
}
