import { foldAttempts, type Repeatable } from '../../fold-attempts.js'
import type { Attempt, Result, RunMeta } from '../../model.js'
import { isFailureCode, isoToMs, statusCode, statusFromCode } from '../codes.js'
import { attemptLimit, checkAttempts, Seen, SeenTests, type RunState } from '../report-state.js'
import { attemptsToStore, attemptSummary, storedPosition } from '../rows.js'
import { isPacked, packedResult, packedRow, type AnyRunBatch, type PackedRunBatch } from '../packed-results.js'
import type { IngestOptions, ReportStream, RunOutcome } from '../store.js'
import type { SqliteIngest } from './ingest.js'

type Parts = ReturnType<SqliteIngest['ingestParts']>

interface StoredResult {
  status: number
  flaky: number
  duration_ms: number | null
  error_type: string | null
  message: number | null
  healing: number
  position: number | null
}

interface SqliteRunState extends RunState {
  /**
   * The rows this report holds in the run, by status code: in a run it created these are the run's counts, which
   * finishRun stores without counting the rows again.
   */
  counts: { total: number; byStatus: number[]; flaky: number }
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
  private readonly runs = new Map<string, SqliteRunState>()
  private readonly now = Date.now()
  private readonly nowIso = new Date(this.now).toISOString()
  private readonly maxAttempts: number

  constructor(
    store: SqliteIngest,
    private readonly stream: ReportStream,
    private readonly opts: IngestOptions,
  ) {
    this.parts = store.ingestParts()
    this.maxAttempts = attemptLimit(opts)
  }

  write(chunk: AnyRunBatch[]): void {
    for (const batch of chunk) {
      const state = this.runs.get(batch.run.runId) ?? this.claim(batch.run)
      if (state.duplicate) continue
      if (isPacked(batch)) this.writePacked(state, batch)
      else for (const r of batch.results) this.writeResult(state, r)
    }
  }

  /** Results in report order: the plain ones bound straight from their columns, the others as objects. */
  private writePacked(state: SqliteRunState, p: PackedRunBatch): void {
    let w = 0
    let n = 0
    for (let i = 0; i < p.count; i++) {
      if (p.wholeAt[w] === i) this.writeResult(state, p.whole[w++]!)
      else this.writePlain(state, p, n++)
    }
  }

  /** A result without attempts, message or error type: one row, and one attempt implied by it. */
  private writePlain(state: SqliteRunState, p: PackedRunBatch, n: number): void {
    const test = this.parts.slotKey(p, n)
    if (!this.admit(state, test)) {
      if (state.seen.get(test) === Seen.Written) this.fold(state, test, packedResult(p, n))
      return
    }
    const { status, flaky, durationMs, healing, position } = packedRow(p, n)
    const failed = isFailureCode(status) ? 1 : 0
    const failedMs = failed ? (durationMs ?? 0) : 0
    const { changes } = this.parts.stmts.insertResult.run(
      test,
      state.at,
      state.key,
      status,
      flaky,
      durationMs,
      1,
      failed,
      failedMs,
      null,
      null,
      healing,
      position,
    )
    if (changes) {
      this.count(state, status, flaky, 1)
      state.attempts++
      // A failure is kept as its attempt too (see attemptsToStore).
      if (failed) this.parts.stmts.insertAttempt.run(state.key, test, 0, status, durationMs, null, null)
    }
    this.admitted(state, test, changes > 0)
  }

  /** Finds or creates the run the first time the report names it; a report already stored is a duplicate. */
  private claim(run: RunMeta): SqliteRunState {
    const { stmts, runParams } = this.parts
    const existing = stmts.runByKey.get(run.runId) as { id: number; at: number } | undefined
    const state: SqliteRunState = {
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
      counts: { total: 0, byStatus: [0, 0, 0, 0], flaky: 0 },
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

  private writeResult(state: SqliteRunState, r: Result): void {
    const { testKey } = this.parts
    if (r.attempts.length > this.maxAttempts) {
      checkAttempts(this.stream.file, r.test.testId, r.attempts.length, this.maxAttempts)
    }
    const test = testKey(r.test)
    if (!this.admit(state, test)) {
      if (state.seen.get(test) === Seen.Written) this.fold(state, test, r)
      return
    }
    this.admitted(state, test, this.insert(state, test, r))
  }

  /**
   * Whether a test's result is to be inserted: not when this report already wrote the test for this run (a
   * repeat, folded by the caller) or another report of the run has it. Counts the test and, on --replace, clears
   * the run's stored row for it.
   */
  private admit(state: SqliteRunState, test: number): boolean {
    if (state.seen.get(test) !== Seen.No) return false
    state.tests++
    if (state.replacing) {
      this.parts.stmts.deleteResult.run(test, state.at, state.key)
      this.parts.stmts.deleteAttempts.run(state.key, test)
    }
    return true
  }

  /** After an admitted insert: false when the run already had the test from another report. */
  private admitted(state: SqliteRunState, test: number, inserted: boolean): void {
    if (!inserted) return state.seen.set(test, Seen.Skipped)
    state.seen.set(test, Seen.Written)
    state.results++
  }

  /** Inserts one result and its attempts; false when another report of the run already has this test. */
  private insert(state: SqliteRunState, test: number, r: Result): boolean {
    const { stmts, messageId } = this.parts
    const sum = attemptSummary(r)
    const status = statusCode(r.status)
    const flaky = r.flakyOnRetry ? 1 : 0
    const inserted = stmts.insertResult.run(
      test,
      state.at,
      state.key,
      status,
      flaky,
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
    this.count(state, status, flaky, 1)
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

  /** Keeps the counts of a run this report created as rows go in (1) and out (-1), for finishRun. */
  private count(state: SqliteRunState, status: number, flaky: number, sign: 1 | -1): void {
    const c = state.counts
    c.total += sign
    c.byStatus[status]! += sign
    c.flaky += flaky * sign
  }

  /**
   * A test this report already wrote for this run, again (a rerun, a repeat, a second attempt reported as its
   * own case): what was written is read back and replaced by the fold of both. Rare, so reading back is cheaper
   * than keeping every written result in memory in case it repeats.
   */
  private fold(state: SqliteRunState, test: number, r: Result): void {
    const { stmts } = this.parts
    const earlier = this.readBack(state, test)
    const folded = foldAttempts([earlier, r])
    checkAttempts(this.stream.file, r.test.testId, folded.attempts.length, this.maxAttempts)
    stmts.deleteResult.run(test, state.at, state.key)
    stmts.deleteAttempts.run(state.key, test)
    this.count(state, statusCode(earlier.status), earlier.flakyOnRetry ? 1 : 0, -1)
    state.attempts -= earlier.attempts.length
    // The test's place in the run is where it first ran.
    this.insert(state, test, { ...folded, test: r.test, position: earlier.position })
  }

  private readBack(state: SqliteRunState, test: number): Repeatable & { position: number | null } {
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
    const outcomes = finals.map((run) => this.finishRun(run))
    // In this transaction: a reader never sees these results beside an analysis that predates them.
    const written = [...this.runs.values()].filter((state) => !state.duplicate).map((state) => state.key)
    this.parts.markRunsStale(written)
    return outcomes
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
    if (state.replacing) stmts.deleteTimings.run(state.key)
    for (const t of run.timings ?? []) stmts.upsertTiming.run(state.key, t.name, t.durationMs, t.status)
    if (state.created) {
      const { total, byStatus, flaky } = state.counts
      const [passed, failed, error, skipped] = byStatus as [number, number, number, number]
      stmts.setCounts.run(total, passed, failed + error, skipped, flaky, state.key)
    } else {
      // Counted where the rows are: a merged run holds rows from several reports.
      stmts.recount.run({ run: state.key })
    }
    // Read at the end, just before the commit: other server instances look for runs written since a time, and a
    // time taken at the start would fall behind writes that committed first. One machine, so the writer's clock.
    stmts.setWrittenAt.run(Date.now(), state.key)
    return {
      runId: run.runId,
      outcome: state.replacing ? 'replaced' : 'ingested',
      tests: state.tests,
      results: state.results,
      attempts: state.attempts,
    }
  }
}
