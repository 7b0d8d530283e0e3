import { foldAttempts, type Repeatable } from '../../fold-attempts.js'
import type { Attempt, Result, RunMeta } from '../../model.js'
import { isoToMs, statusCode, statusFromCode } from '../codes.js'
import { attemptLimit, checkAttempts, Seen, SeenTests, type RunState } from '../report-state.js'
import { attemptsToStore, attemptSummary, storedPosition } from '../rows.js'
import type { IngestOptions, ReportStream, RunBatch, RunOutcome } from '../store.js'
import type { SqliteStore } from './sqlite-store.js'

type Parts = ReturnType<SqliteStore['ingestParts']>

interface StoredResult {
  status: number
  flaky: number
  duration_ms: number | null
  error_type: string | null
  message: number | null
  healing: number
  position: number | null
}

interface StoredAttempt {
  retry: number
  status: number
  duration_ms: number | null
  message: number | null
  stack: number | null
}

/**
 * Writes one streamed report into an open SQLite transaction, chunk by chunk. Synchronous: each chunk is written
 * between two awaits of the stream. Keeps per run only integer state and one byte per test (see {@link SeenTests}).
 */
export class SqliteReportWriter {
  private readonly parts: Parts
  private readonly runs = new Map<string, RunState>()
  private readonly now = Date.now()
  private readonly nowIso = new Date(this.now).toISOString()
  private readonly maxAttempts: number

  constructor(
    store: SqliteStore,
    private readonly stream: ReportStream,
    private readonly opts: IngestOptions,
  ) {
    this.parts = store.ingestParts()
    this.maxAttempts = attemptLimit(opts)
  }

  write(chunk: RunBatch[]): void {
    for (const { run, results } of chunk) {
      const state = this.runs.get(run.runId) ?? this.claim(run)
      if (state.duplicate) continue
      for (const r of results) this.writeResult(state, r)
    }
  }

  /** Finds or creates the run the first time the report names it; a report already stored is a duplicate. */
  private claim(run: RunMeta): RunState {
    const { stmts, runParams } = this.parts
    const existing = stmts.runByKey.get(run.runId) as { id: number; at: number } | undefined
    const state: RunState = {
      runId: run.runId,
      key: existing?.id ?? 0,
      at: existing?.at ?? 0,
      created: !existing,
      replacing: Boolean(existing && this.opts.replace),
      duplicate: false,
      claimedWith: run,
      seen: new SeenTests(),
      tests: 0,
      results: 0,
      attempts: 0,
    }
    this.runs.set(run.runId, state)
    const params = runParams(run, this.nowIso)
    if (!existing) {
      state.at = isoToMs(run.startedAt, this.now)
      state.key = Number(stmts.insertRun.run({ ...params, at: state.at }).lastInsertRowid)
    } else if (stmts.reportSeen.get(existing.id, this.stream.contentHash) && !this.opts.replace) {
      state.duplicate = true
    } else if (state.replacing) {
      stmts.replaceRun.run({ ...params, id: existing.id })
    } else {
      this.mergeRun(run, existing.id)
    }
    return state
  }

  private mergeRun(run: RunMeta, id: number): void {
    const { uploadedAt: _kept, runId: _same, suite: _suite, ...merge } = this.parts.runParams(run, this.nowIso)
    this.parts.stmts.mergeRun.run({ ...merge, id })
  }

  private writeResult(state: RunState, r: Result): void {
    const { stmts, testKey } = this.parts
    if (r.attempts.length > this.maxAttempts) {
      checkAttempts(this.stream.file, r.test.testId, r.attempts.length, this.maxAttempts)
    }
    const test = testKey(r.test)
    const seen = state.seen.get(test)
    if (seen === Seen.Written) return this.fold(state, test, r)
    if (seen === Seen.Skipped) return
    state.tests++
    if (state.replacing) {
      stmts.deleteResult.run(test, state.at, state.key)
      stmts.deleteAttempts.run(state.key, test)
    }
    if (!this.insert(state, test, r)) {
      state.seen.set(test, Seen.Skipped)
      return
    }
    state.seen.set(test, Seen.Written)
    state.results++
  }

  /** Inserts one result and its attempts; false when another report of the run already has this test. */
  private insert(state: RunState, test: number, r: Result): boolean {
    const { stmts, messageId } = this.parts
    const sum = attemptSummary(r)
    const inserted = stmts.insertResult.run(
      test,
      state.at,
      state.key,
      statusCode(r.status),
      r.flakyOnRetry ? 1 : 0,
      r.durationMs,
      sum.attempts,
      sum.failed,
      sum.failedMs,
      r.errorType,
      messageId(r.message),
      r.healingOccurred ? 1 : 0,
      storedPosition(r),
    ).changes
    if (!inserted) return false
    state.attempts += sum.attempts
    for (const a of attemptsToStore(r)) {
      stmts.insertAttempt.run(
        state.key,
        test,
        a.retry,
        statusCode(a.status),
        a.durationMs,
        messageId(a.message),
        messageId(a.stack),
      )
    }
    return true
  }

  /**
   * A test this report already wrote for this run, again (a rerun, a repeat, a second attempt reported as its
   * own case): what was written is read back and replaced by the fold of both. Rare, so reading back is cheaper
   * than keeping every written result in memory in case it repeats.
   */
  private fold(state: RunState, test: number, r: Result): void {
    const { stmts } = this.parts
    const earlier = this.readBack(state, test)
    const folded = foldAttempts([earlier, r])
    checkAttempts(this.stream.file, r.test.testId, folded.attempts.length, this.maxAttempts)
    stmts.deleteResult.run(test, state.at, state.key)
    stmts.deleteAttempts.run(state.key, test)
    state.attempts -= earlier.attempts.length
    // The test's place in the run is where it first ran.
    this.insert(state, test, { ...folded, test: r.test, position: earlier.position })
  }

  private readBack(state: RunState, test: number): Repeatable & { position: number | null } {
    const { stmts, messageText } = this.parts
    const row = stmts.resultByKey.get(test, state.at, state.key) as StoredResult
    const rows = stmts.attemptsByKey.all(state.key, test) as StoredAttempt[]
    const result: Repeatable & { position: number | null } = {
      position: row.position,
      status: statusFromCode(row.status),
      flakyOnRetry: row.flaky === 1,
      durationMs: row.duration_ms,
      errorType: row.error_type,
      message: messageText(row.message),
      stack: null,
      healingOccurred: row.healing === 1,
      attempts: rows.map((a): Attempt => ({
        retry: a.retry,
        status: statusFromCode(a.status),
        durationMs: a.duration_ms,
        message: messageText(a.message),
        stack: messageText(a.stack),
      })),
    }
    // A single attempt that was implied by its result row (a plain pass) is spelled out again.
    if (result.attempts.length === 0) {
      result.attempts = [
        { retry: 0, status: result.status, durationMs: result.durationMs, message: result.message, stack: null },
      ]
    }
    return result
  }

  /** After the last chunk: final metadata, runs without results, report provenance and counts. */
  finish(): RunOutcome[] {
    const finals = this.stream.runs()
    // A run that chunks named but the final list forgot still gets its provenance and counts.
    const listed = new Set(finals.map((r) => r.runId))
    for (const state of this.runs.values()) if (!listed.has(state.runId)) finals.push(state.claimedWith)
    return finals.map((run) => this.finishRun(run))
  }

  private finishRun(run: RunMeta): RunOutcome {
    const { stmts, runParams } = this.parts
    const state = this.runs.get(run.runId) ?? this.claim(run)
    if (state.duplicate) return { runId: run.runId, outcome: 'duplicate', tests: 0, results: 0, attempts: 0 }
    if (run !== state.claimedWith) {
      if (state.created || state.replacing) {
        stmts.replaceRun.run({ ...runParams(run, this.nowIso), id: state.key })
      } else {
        this.mergeRun(run, state.key)
      }
    }
    if (state.created) {
      const at = isoToMs(run.startedAt, this.now)
      if (at !== state.at) {
        stmts.moveRunAt.run(at, state.key)
        stmts.moveResultsAt.run(at, state.key)
      }
    }
    stmts.insertReport.run(state.key, this.stream.contentHash, this.stream.file, this.nowIso)
    stmts.recount.run({ run: state.key })
    return {
      runId: run.runId,
      outcome: state.replacing ? 'replaced' : 'ingested',
      tests: state.tests,
      results: state.results,
      attempts: state.attempts,
    }
  }
}
