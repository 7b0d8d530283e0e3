import { randomUUID } from 'node:crypto'
import type { Result, RunMeta, TestRef } from '../model.js'
import { STATUS_CODE, statusFromCode } from './codes.js'
import { storedPosition } from './rows.js'
import type { RunBatch } from './store.js'

/**
 * A run batch as columns, for the trip between the parse worker and the store's thread, and for the store to bind
 * without building objects. Copying a message between threads costs per object and per string far more than per
 * byte: a plain result is three objects and five strings, and here a chunk of 2,000 results is a handful of
 * objects and one string. Results that carry attempts, a message or an error type (few, and varied) travel whole.
 */
export interface PackedRunBatch {
  packed: true
  run: RunMeta
  count: number
  /** The {@link TestSlots} numbering that `slots` belong to. */
  numbering: string
  /** Per plain result: its test's slot, the same number for the same test id throughout a numbering. */
  slots: Int32Array
  /** Per plain result: test id, suite, module, name and file, one after another (read with {@link packedRef}). */
  text: string
  /** Per plain result and field: where the field ends in `text`. */
  ends: Int32Array
  /** Per plain result: duration (NaN for none), position (NaN for none), flags (see FLAG_*, status code << 3). */
  numbers: Float64Array
  whole: Result[]
  /** Where each of `whole` goes among all the batch's results. */
  wholeAt: number[]
}

/** Either shape of one run's results in a report chunk; stores take both. */
export type AnyRunBatch = RunBatch | PackedRunBatch

const FIELDS = 3
const TEXT_FIELDS = 5
const FLAKY = 1
const HEALING = 2
const NO_FILE = 4
const MODULE_IS_LABEL = 8
const STATUS_SHIFT = 4

/**
 * Tests numbered, and characters of their ids kept, before a numbering starts afresh: the worker's map and the
 * store's slot keys stay this small even when names are long (a test id may be 48K characters).
 */
const MAX_SLOTS = 100_000
const MAX_SLOT_CHARS = 16 * 1024 * 1024

/**
 * Numbers test ids for the store's thread, so that it finds a test's key by index instead of hashing its id:
 * the parse worker does the hashing. A numbering is bounded; past it a new numbering (a new id) starts.
 */
export class TestSlots {
  id = randomUUID()
  private readonly slots = new Map<string, number>()
  private chars = 0

  /** Makes room for `count` more tests of `chars` characters in the current numbering, or starts a new one. */
  reserve(count: number, chars: number): void {
    if (this.slots.size + count <= MAX_SLOTS && this.chars + chars <= MAX_SLOT_CHARS) return
    this.slots.clear()
    this.chars = 0
    this.id = randomUUID()
  }

  slot(testId: string): number {
    let slot = this.slots.get(testId)
    if (slot === undefined) {
      this.slots.set(testId, (slot = this.slots.size))
      this.chars += testId.length
    }
    return slot
  }
}

function isPlain(r: Result): boolean {
  return r.attempts.length === 0 && r.message === null && r.errorType === null && STATUS_CODE[r.status] !== undefined
}

export function packRunBatch({ run, results }: RunBatch, numbering: TestSlots): PackedRunBatch {
  let chars = 0
  for (const r of results) chars += r.test.testId.length
  numbering.reserve(results.length, chars)
  const numbers = new Float64Array(results.length * FIELDS)
  const slots = new Int32Array(results.length)
  const ends = new Int32Array(results.length * TEXT_FIELDS)
  const text: string[] = []
  const whole: Result[] = []
  const wholeAt: number[] = []
  let n = 0
  let end = 0
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!
    if (!isPlain(r)) {
      whole.push(r)
      wholeAt.push(i)
      continue
    }
    const { testId, suite, module, name, file, moduleIsLabel } = r.test
    slots[n] = numbering.slot(testId)
    text.push(testId, suite, module, name, file ?? '')
    ends[n * TEXT_FIELDS] = end += testId.length
    ends[n * TEXT_FIELDS + 1] = end += suite.length
    ends[n * TEXT_FIELDS + 2] = end += module.length
    ends[n * TEXT_FIELDS + 3] = end += name.length
    ends[n * TEXT_FIELDS + 4] = end += file?.length ?? 0
    const flags = (r.flakyOnRetry ? FLAKY : 0) | (r.healingOccurred ? HEALING : 0) | (file === null ? NO_FILE : 0)
    const label = moduleIsLabel ? MODULE_IS_LABEL : 0
    numbers[n * FIELDS] = r.durationMs ?? NaN
    numbers[n * FIELDS + 1] = storedPosition(r) ?? NaN
    numbers[n * FIELDS + 2] = flags | label | (STATUS_CODE[r.status] << STATUS_SHIFT)
    n++
  }
  return {
    packed: true,
    run,
    count: results.length,
    numbering: numbering.id,
    slots: slots.subarray(0, n),
    text: text.join(''),
    ends: ends.subarray(0, n * TEXT_FIELDS),
    numbers: numbers.subarray(0, n * FIELDS),
    whole,
    wholeAt,
  }
}

export function isPacked(batch: AnyRunBatch): batch is PackedRunBatch {
  return (batch as Partial<PackedRunBatch>).packed === true
}

const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x)

/** The test of the `n`th plain result. */
export function packedRef(p: PackedRunBatch, n: number): TestRef {
  const at = n * TEXT_FIELDS
  const start = n === 0 ? 0 : p.ends[at - 1]!
  const field = (k: number) => p.text.slice(k === 0 ? start : p.ends[at + k - 1]!, p.ends[at + k])
  const flags = p.numbers[n * FIELDS + 2]!
  const ref: TestRef = {
    testId: field(0),
    suite: field(1),
    module: field(2),
    name: field(3),
    file: (flags & NO_FILE) !== 0 ? null : field(4),
  }
  if ((flags & MODULE_IS_LABEL) !== 0) ref.moduleIsLabel = true
  return ref
}

/** The stored columns of the `n`th plain result: what a store binds without building the result. */
export function packedRow(p: PackedRunBatch, n: number) {
  const flags = p.numbers[n * FIELDS + 2]!
  return {
    status: flags >> STATUS_SHIFT,
    flaky: flags & FLAKY ? 1 : 0,
    healing: flags & HEALING ? 1 : 0,
    durationMs: orNull(p.numbers[n * FIELDS]!),
    position: orNull(p.numbers[n * FIELDS + 1]!),
  }
}

/** The `n`th plain result, whole. */
export function packedResult(p: PackedRunBatch, n: number): Result {
  const row = packedRow(p, n)
  return {
    test: packedRef(p, n),
    status: statusFromCode(row.status),
    flakyOnRetry: row.flaky === 1,
    durationMs: row.durationMs,
    errorType: null,
    message: null,
    healingOccurred: row.healing === 1,
    attempts: [],
    position: row.position,
  }
}

/** Plain objects again, for a store that writes results as objects. */
export function unpackRunBatch(batch: AnyRunBatch): RunBatch {
  if (!isPacked(batch)) return batch
  const results: Result[] = new Array<Result>(batch.count)
  for (let w = 0; w < batch.whole.length; w++) results[batch.wholeAt[w]!] = batch.whole[w]!
  let n = 0
  for (let i = 0; i < batch.count; i++) if (results[i] === undefined) results[i] = packedResult(batch, n++)
  return { run: batch.run, results }
}
