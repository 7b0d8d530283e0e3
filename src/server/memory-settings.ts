import { setFlagsFromString } from 'node:v8'

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
 * SQLite page cache of an upload worker's connection, in MB, half the CLI's: a large report fills any cache
 * (each of its pages is new), so the cache is what that report costs in memory. 16 MB less brought the worker to
 * about 100 MB on both 100 MB files; a 100 MB upload of 1.37M cases took no longer (24-31 s beside 31-32 s).
 */
export const UPLOAD_WORKER_CACHE_MB = 16

/**
 * Keeps this process's young generation at its initial size (1 MB semi-spaces) instead of letting it grow to
 * 16 MB. For `flakewatch serve`, whose main thread only moves bytes: the default let it grow during start-up,
 * and a large upload's body chunks (memory outside the heap, freed only when their young objects are collected)
 * piled up between the rarer collections of a larger young generation. Idle RSS 88 → 80 MB, peak during a 100 MB
 * upload 126 → 95 MB. Set at run time (V8 reads this flag each time it would grow), so it also applies to the
 * worker threads started later in this process. Called before the server's modules are loaded.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1')
}
