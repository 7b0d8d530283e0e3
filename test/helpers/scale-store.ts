import type { Result, RunMeta } from '../../src/model.js'
import type { RunBatch, Store } from '../../src/store/store.js'

export interface ScaleStoreOptions {
  tests: number
  runs: number
  /** Runs per stored report (one transaction each). */
  runsPerReport?: number
  /** Results per chunk of the stream. */
  chunk?: number
  /** Epoch ms of the first run; runs are an hour apart. */
  start?: number
}

const HOUR = 3_600_000

/** The test id the scale store gives test number `i`. */
export function scaleTestId(i: number): string {
  return `scale::src/m${i % 1000}.test.ts::case ${i}`
}

/**
 * Fills a store with `tests` × `runs` results through the store API, streamed in chunks, so that building a
 * store of a million tests (or a million runs) never holds it in memory. Every 50th test fails in every third
 * run with a message (flaky), every 97th fails from the second run on (broken); the rest pass.
 * @example await buildScaleStore(store, { tests: 150_000, runs: 2 })
 */
export async function buildScaleStore(store: Store, opts: ScaleStoreOptions): Promise<void> {
  const runsPerReport = opts.runsPerReport ?? Math.max(1, Math.floor(50_000 / Math.max(1, opts.tests)))
  const chunk = opts.chunk ?? 20_000
  const start = opts.start ?? Date.UTC(2026, 0, 1)
  for (let first = 0; first < opts.runs; first += runsPerReport) {
    const last = Math.min(opts.runs, first + runsPerReport)
    const metas: RunMeta[] = []
    for (let r = first; r < last; r++) metas.push(runMeta(r, start + r * HOUR))
    async function* chunks(): AsyncGenerator<RunBatch[]> {
      let batches: RunBatch[] = []
      let size = 0
      for (let r = first; r < last; r++) {
        let results: Result[] = []
        batches.push({ run: metas[r - first]!, results })
        for (let t = 0; t < opts.tests; t++) {
          results.push(result(t, r))
          if (++size >= chunk) {
            yield batches
            results = []
            batches = [{ run: metas[r - first]!, results }]
            size = 0
            // Let the writer's transaction make progress between chunks, as a parser would.
            await Promise.resolve()
          }
        }
      }
      if (size > 0) yield batches
    }
    await store.ingestStream({
      file: `scale-${first}.json`,
      contentHash: `scale-${first}`,
      chunks: chunks(),
      runs: () => metas,
    })
  }
}

function runMeta(r: number, at: number): RunMeta {
  return {
    runId: `scale-run-${r}`,
    suite: 'scale',
    branch: 'main',
    revision: `rev${r}`,
    pipelineId: null,
    pipelineUrl: null,
    jobId: null,
    jobUrl: null,
    artifactsUrl: null,
    jobStatus: null,
    pipelineStatus: null,
    runnerId: `runner-${r % 4}`,
    env: {},
    startedAt: new Date(at).toISOString(),
    finishedAt: null,
    durationMs: null,
    status: 'complete',
  }
}

function result(t: number, r: number): Result {
  const failed = (t % 50 === 0 && r % 3 === 1) || (t % 97 === 0 && r >= 1)
  return {
    test: { testId: scaleTestId(t), suite: 'scale', module: `src/m${t % 1000}.test.ts`, name: `case ${t}`, file: null },
    status: failed ? 'failed' : 'passed',
    flakyOnRetry: false,
    durationMs: 10 + (t % 7),
    errorType: failed ? 'AssertionError' : null,
    message: failed ? `expected ${t % 5} to be 0` : null,
    healingOccurred: false,
    attempts: [],
    position: t,
  }
}
