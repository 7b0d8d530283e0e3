import type { Result, RunMeta, TestRef } from '../../model.js'
import { clip, messageKey, STATUS_CODE, statusCode } from '../codes.js'
import { attemptsToStore, attemptSummary, storedPosition } from '../rows.js'
import { copyField, copyRow } from './copy-text.js'

/** An attempt row to store; `result`, `message` and `stack` index into the run's results and the batch's messages. */
export interface PreparedAttempt {
  result: number
  retry: number
  status: number
  durationMs: number | null
  message: number
  stack: number
}

export interface PreparedRun {
  /** Position in the report, so that outcomes come back in report order. */
  index: number
  run: RunMeta
  /** Distinct tests the run names. */
  tests: number
  /** The first result of each test (a later one for the same test is dropped, as SQLite's ON CONFLICT does). */
  results: Result[]
  /** Per result: index into `PreparedBatch.tests`. */
  test: Int32Array
  /** Per result: index into `PreparedBatch.messages`, or -1. */
  message: Int32Array
  attempts: PreparedAttempt[]
  /** The run's counts from these results, as `runs` keeps them. */
  counts: RunCounts
}

export interface RunCounts {
  total: number
  passed: number
  /** Failed or errored. */
  failed: number
  skipped: number
  /** Passed only on retry. */
  flaky: number
}

/**
 * A report reduced to what the PostgreSQL store writes: distinct tests and messages once per batch, and per-result
 * indexes into them, so that the transaction resolves each key once and renders rows without further lookups.
 */
export interface PreparedBatch {
  runs: PreparedRun[]
  tests: TestRef[]
  messages: { key: string; text: string }[]
}

/**
 * Everything that can reject bad input, done before a connection is taken: status codes are checked here, so that
 * a bad value fails the report without touching the database.
 * @example prepareBatch(batch).runs[0].results.length // results to store for the first run
 */
export function prepareBatch(batch: { runs: { run: RunMeta; results: Result[] }[] }): PreparedBatch {
  const tests: TestRef[] = []
  const testIndex = new Map<string, number>()
  const messages: { key: string; text: string }[] = []
  const messageIndex = new Map<string, number>()
  const byText = new Map<string, number>()
  const messageOf = (text: string | null | undefined): number => {
    if (text == null || text === '') return -1
    let i = byText.get(text)
    if (i !== undefined) return i
    // Failure output may carry NUL bytes, which PostgreSQL text cannot hold; the rest of the message is kept.
    const clipped = clip(text.includes('\0') ? text.replace(/\0/g, '\uFFFD') : text)!
    const key = messageKey(clipped)
    i = messageIndex.get(key)
    if (i === undefined) {
      i = messages.length
      messages.push({ key, text: clipped })
      messageIndex.set(key, i)
    }
    byText.set(text, i)
    return i
  }
  // Which run last used each test: a repeat within one run is found without another hash lookup.
  const lastRun: number[] = []
  const runs = batch.runs.map(({ run, results }, index): PreparedRun => {
    const kept: Result[] = []
    const test: number[] = []
    const message: number[] = []
    const attempts: PreparedAttempt[] = []
    const counts: RunCounts = { total: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 }
    let distinct = 0
    for (const r of results) {
      statusCode(r.status)
      let ti = testIndex.get(r.test.testId)
      if (ti === undefined) {
        ti = tests.length
        tests.push(r.test)
        testIndex.set(r.test.testId, ti)
      } else if (lastRun[ti] === index) {
        continue
      }
      lastRun[ti] = index
      distinct++
      counts.total++
      if (r.status === 'passed') counts.passed++
      else if (r.status === 'skipped') counts.skipped++
      else counts.failed++
      if (r.flakyOnRetry) counts.flaky++
      const at = kept.length
      kept.push(r)
      test.push(ti)
      message.push(messageOf(r.message))
      const retries = new Set<number>()
      for (const a of attemptsToStore(r)) {
        // A retry number given twice is stored once, as SQLite's ON CONFLICT does: COPY would reject the report.
        if (retries.has(a.retry)) continue
        retries.add(a.retry)
        attempts.push({
          result: at,
          retry: a.retry,
          status: statusCode(a.status),
          durationMs: a.durationMs,
          message: messageOf(a.message),
          stack: messageOf(a.stack),
        })
      }
    }
    return {
      index,
      run,
      tests: distinct,
      results: kept,
      test: Int32Array.from(test),
      message: Int32Array.from(message),
      attempts,
      counts,
    }
  })
  return { runs, tests, messages }
}

/** The attempt count each result contributes to its run's outcome. */
export function attemptCount(run: PreparedRun): number {
  let n = 0
  for (const r of run.results) n += r.attempts.length || 1
  return n
}

/**
 * COPY rows for `results`, in `RESULT_INSERT_COLUMNS` order. Written out by hand rather than through `copyRow`:
 * this is the one loop that runs for every result, and most of its fields are numbers that need no escaping.
 */
export function* resultCopyRows(
  run: PreparedRun,
  at: number,
  runKey: number,
  testKeys: ArrayLike<number>,
  messageIds: ArrayLike<number>,
): Generator<string> {
  const { results, test, message } = run
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!
    const sum = attemptSummary(r)
    const m = message[i]!
    const head = `${at}\t${r.durationMs ?? '\\N'}\t${sum.failedMs}\t${testKeys[test[i]!]}\t${runKey}`
    const counts = `${sum.attempts}\t${sum.failed}\t${m < 0 ? '\\N' : messageIds[m]}\t${STATUS_CODE[r.status]}`
    const flags = `${r.flakyOnRetry ? 't' : 'f'}\t${r.healingOccurred ? 't' : 'f'}`
    const position = storedPosition(r)
    yield `${head}\t${counts}\t${flags}\t${copyField(r.errorType)}\t${position ?? '\\N'}\n`
  }
}

/** COPY rows for `attempts`, in `ATTEMPT_INSERT_COLUMNS` order, or `ATTEMPT_COLUMNS` when `at` is null (staging). */
export function* attemptCopyRows(
  run: PreparedRun,
  at: number | null,
  runKey: number,
  testKeys: ArrayLike<number>,
  messageIds: ArrayLike<number>,
): Generator<string> {
  for (const a of run.attempts) {
    const row = copyRow([
      runKey,
      testKeys[run.test[a.result]!]!,
      a.retry,
      a.status,
      a.durationMs,
      a.message < 0 ? null : messageIds[a.message]!,
      a.stack < 0 ? null : messageIds[a.stack]!,
    ])
    yield at === null ? row : `${at}\t${row}`
  }
}
