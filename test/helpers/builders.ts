import { createHash } from 'node:crypto'
import { makeTestId, type Attempt, type Result, type ResultStatus, type RunMeta } from '../../src/model.js'
import { toRunMeta } from '../../src/pipeline/run-context.js'
import type { ReportBatch } from '../../src/store/store.js'

/** A run with every field null but the id, suite and start time. */
export function runMeta(runId: string, startedAt: string, extra: Partial<RunMeta> = {}): RunMeta {
  return { ...toRunMeta(runId, 'unit', { branch: 'main', startedAt }), ...extra }
}

export function result(name: string, status: ResultStatus, extra: Partial<Result> = {}, suite = 'unit'): Result {
  return {
    test: { testId: makeTestId(suite, 'mod', name), suite, module: 'mod', name, file: null },
    status,
    flakyOnRetry: false,
    durationMs: 10,
    errorType: status === 'failed' ? 'AssertionError' : null,
    message: status === 'failed' ? `expected 1 to be 2 in ${name}` : null,
    healingOccurred: false,
    attempts: [],
    ...extra,
  }
}

export function flakyResult(name: string, suite = 'unit'): Result {
  const attempts: Attempt[] = [
    { retry: 0, status: 'failed', durationMs: 12, message: 'timeout after 5000ms', stack: 'at x.ts:1' },
    { retry: 1, status: 'passed', durationMs: 9, message: null, stack: null },
  ]
  return { ...result(name, 'passed', {}, suite), flakyOnRetry: true, attempts }
}

/** A one-run report batch; the content hash is derived from the run and results unless given. */
export function batch(run: RunMeta, results: Result[], contentHash?: string): ReportBatch {
  const hash =
    contentHash ??
    createHash('sha256')
      .update(JSON.stringify([run, results]))
      .digest('hex')
  return { file: `${run.runId}.xml`, contentHash: hash, runs: [{ run, results }] }
}

/**
 * History builder: `history().run('r1').pass('a').fail('a').build()` gives one batch per run, a day apart.
 */
export function history(start = Date.UTC(2026, 0, 1)) {
  const runs: { run: RunMeta; results: Result[] }[] = []
  const api = {
    run(id: string, extra: Partial<RunMeta> = {}) {
      runs.push({ run: runMeta(id, new Date(start + runs.length * 86_400_000).toISOString(), extra), results: [] })
      return api
    },
    pass(name: string) {
      runs.at(-1)!.results.push(result(name, 'passed'))
      return api
    },
    fail(name: string) {
      runs.at(-1)!.results.push(result(name, 'failed'))
      return api
    },
    flaky(name: string) {
      runs.at(-1)!.results.push(flakyResult(name))
      return api
    },
    build(): ReportBatch[] {
      return runs.map((r) => batch(r.run, r.results))
    },
  }
  return api
}
