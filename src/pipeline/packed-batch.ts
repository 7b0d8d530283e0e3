import type { Result, ResultStatus, RunMeta } from '../model.js'
import type { RunBatch } from '../store/store.js'

/**
 * A run batch as columns, for the trip between the parse worker and the store's thread. Copying a message between
 * threads costs per object far more than per string or number, and a plain result is three objects; as columns a
 * chunk of 2,000 results is a dozen. Results that carry attempts, a message or an error type (few, and varied)
 * travel whole.
 */
export interface PackedRunBatch {
  run: RunMeta
  count: number
  testId: string[]
  suite: string[]
  module: string[]
  name: string[]
  file: (string | null)[]
  status: ResultStatus[]
  /** Per plain result: duration (NaN for none), position (NaN for none), flags (1 flaky on retry, 2 healing). */
  numbers: Float64Array
  whole: Result[]
  /** Where each of `whole` goes among all the batch's results. */
  wholeAt: number[]
}

const FIELDS = 3

function isPlain(r: Result): boolean {
  return r.attempts.length === 0 && r.message === null && r.errorType === null
}

export function packRunBatch({ run, results }: RunBatch): PackedRunBatch {
  const packed: PackedRunBatch = {
    run,
    count: results.length,
    ...{ testId: [], suite: [], module: [], name: [], file: [], status: [] },
    numbers: new Float64Array(results.length * FIELDS),
    whole: [],
    wholeAt: [],
  }
  let n = 0
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!
    if (!isPlain(r)) {
      packed.whole.push(r)
      packed.wholeAt.push(i)
      continue
    }
    packed.testId.push(r.test.testId)
    packed.suite.push(r.test.suite)
    packed.module.push(r.test.module)
    packed.name.push(r.test.name)
    packed.file.push(r.test.file)
    packed.status.push(r.status)
    packed.numbers[n * FIELDS] = r.durationMs ?? NaN
    packed.numbers[n * FIELDS + 1] = r.position ?? NaN
    packed.numbers[n * FIELDS + 2] = (r.flakyOnRetry ? 1 : 0) | (r.healingOccurred ? 2 : 0)
    n++
  }
  return packed
}

const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x)

export function unpackRunBatch(p: PackedRunBatch): RunBatch {
  const results: Result[] = new Array<Result>(p.count)
  for (let w = 0; w < p.whole.length; w++) results[p.wholeAt[w]!] = p.whole[w]!
  let n = 0
  for (let i = 0; i < p.count; i++) {
    if (results[i] !== undefined) continue
    const flags = p.numbers[n * FIELDS + 2]!
    results[i] = {
      test: { testId: p.testId[n]!, suite: p.suite[n]!, module: p.module[n]!, name: p.name[n]!, file: p.file[n]! },
      status: p.status[n]!,
      flakyOnRetry: (flags & 1) !== 0,
      durationMs: orNull(p.numbers[n * FIELDS]!),
      errorType: null,
      message: null,
      healingOccurred: (flags & 2) !== 0,
      attempts: [],
      position: orNull(p.numbers[n * FIELDS + 1]!),
    }
    n++
  }
  return { run: p.run, results }
}
