import type { RunMeta, TestRef } from '../../model.js'
import { clip, messageKey } from '../codes.js'
import { packedRef, type PackedRunBatch } from '../packed-results.js'
import type { IngestOptions, ReportBatch, ReportStream, ResultStore, RunOutcome } from '../store.js'
import { streamOfBatch } from '../store.js'
import { markRunsStaleSqlite } from './analyses.js'
import type { SqliteConnection } from './connection.js'
import { SqliteReportWriter } from './report-writer.js'

/** Test keys cached per store; beyond this the cache starts again (a lookup by the unique index is cheap). */
const TEST_KEY_CACHE = 100_000

/** Storing reports in a SQLite store: the write statements, test and message keys, one transaction per report. */
export class SqliteIngest implements ResultStore {
  private readonly testIds = new Map<string, number>()
  private readonly stmts: ReturnType<SqliteIngest['prepareAll']>

  constructor(private readonly conn: SqliteConnection) {
    this.stmts = this.prepareAll()
  }

  private prepareAll() {
    const db = this.conn.db
    return {
      testByKey: db.prepare('SELECT id FROM tests WHERE test_id = ?').pluck(),
      insertTest: db.prepare('INSERT INTO tests (test_id, suite, module, name, file) VALUES (?, ?, ?, ?, ?)'),
      runByKey: db.prepare('SELECT id, at FROM runs WHERE run_id = ?'),
      // Named parameters: the three run statements bind the same object from runParams().
      insertRun: db.prepare(
        `INSERT INTO runs (run_id, suite, branch, revision, pipeline_id, pipeline_url, job_id, job_url, artifacts_url,
          job_status, pipeline_status, runner_id, env, started_at, finished_at, duration_ms, status, uploaded_at, at)
         VALUES (@runId, @suite, @branch, @revision, @pipelineId, @pipelineUrl, @jobId, @jobUrl, @artifactsUrl,
          @jobStatus, @pipelineStatus, @runnerId, @env, @startedAt, @finishedAt, @durationMs, @status, @uploadedAt, @at)`,
      ),
      // A later report of the same run fills what earlier ones left unknown; it never erases.
      mergeRun: db.prepare(
        `UPDATE runs SET branch = coalesce(branch, @branch), revision = coalesce(revision, @revision),
          pipeline_id = coalesce(pipeline_id, @pipelineId), pipeline_url = coalesce(pipeline_url, @pipelineUrl),
          job_id = coalesce(job_id, @jobId), job_url = coalesce(job_url, @jobUrl),
          artifacts_url = coalesce(artifacts_url, @artifactsUrl), job_status = coalesce(@jobStatus, job_status),
          pipeline_status = coalesce(@pipelineStatus, pipeline_status), runner_id = coalesce(runner_id, @runnerId),
          env = json_patch(@env, env), started_at = coalesce(started_at, @startedAt),
          finished_at = coalesce(@finishedAt, finished_at), duration_ms = coalesce(@durationMs, duration_ms),
          status = CASE WHEN @status = 'interrupted' THEN 'interrupted' ELSE status END
         WHERE id = @id`,
      ),
      replaceRun: db.prepare(
        `UPDATE runs SET suite = @suite, branch = @branch, revision = @revision, pipeline_id = @pipelineId,
          pipeline_url = @pipelineUrl, job_id = @jobId, job_url = @jobUrl, artifacts_url = @artifactsUrl,
          job_status = @jobStatus, pipeline_status = @pipelineStatus, runner_id = @runnerId, env = @env,
          started_at = @startedAt, finished_at = @finishedAt, duration_ms = @durationMs, status = @status,
          uploaded_at = @uploadedAt WHERE id = @id`,
      ),
      reportSeen: db.prepare('SELECT 1 FROM reports WHERE run = ? AND content_hash = ?').pluck(),
      insertReport: db.prepare(
        'INSERT OR REPLACE INTO reports (run, content_hash, file, ingested_at) VALUES (?, ?, ?, ?)',
      ),
      messageByKey: db.prepare('SELECT id FROM messages WHERE key = ?').pluck(),
      insertMessage: db.prepare('INSERT INTO messages (key, text) VALUES (?, ?)'),
      insertResult: db.prepare(
        // ON CONFLICT, not OR IGNORE: only a duplicate key is skipped; NOT NULL and CHECK violations still abort.
        `INSERT INTO results (test, at, run, status, flaky, duration_ms, attempts, failed_attempts, failed_ms,
          error_type, message, healing, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      deleteResult: db.prepare('DELETE FROM results WHERE test = ? AND at = ? AND run = ?'),
      deleteAttempts: db.prepare('DELETE FROM attempts WHERE run = ? AND test = ?'),
      // A repeat of a test already written by this report is folded into it: read back what was written.
      resultByKey: db.prepare(
        `SELECT status, flaky, duration_ms, error_type, message, healing, position FROM results
         WHERE test = ? AND at = ? AND run = ?`,
      ),
      attemptsByKey: db.prepare(
        'SELECT retry, status, duration_ms, message, stack FROM attempts WHERE run = ? AND test = ? ORDER BY retry',
      ),
      // The run's start time became known (or earlier) after its first results were written.
      moveRunAt: db.prepare('UPDATE runs SET at = ? WHERE id = ?'),
      moveResultsAt: db.prepare('UPDATE results SET at = ? WHERE run = ?'),
      recount: db.prepare(
        `UPDATE runs SET (total, passed, failed, skipped, flaky) = (
           SELECT count(*), coalesce(sum(status = 0), 0), coalesce(sum(status IN (1, 2)), 0),
                  coalesce(sum(status = 3), 0), coalesce(sum(flaky), 0)
           FROM results WHERE run = @run) WHERE id = @run`,
      ),
      setCounts: db.prepare('UPDATE runs SET total = ?, passed = ?, failed = ?, skipped = ?, flaky = ? WHERE id = ?'),
      // Never behind a write already stamped: a write is then always newer than every one before it, even within
      // one millisecond or after the clock stepped back.
      setWrittenAt: db.prepare(
        'UPDATE runs SET written_at = max(?, (SELECT coalesce(max(written_at), 0) + 1 FROM runs)) WHERE id = ?',
      ),
      // A later report of the same run gives a package again: its newer time stands.
      upsertTiming: db.prepare(
        `INSERT INTO run_timings (run, name, duration_ms, status) VALUES (?, ?, ?, ?)
         ON CONFLICT (run, name) DO UPDATE SET duration_ms = excluded.duration_ms, status = excluded.status`,
      ),
      deleteTimings: db.prepare('DELETE FROM run_timings WHERE run = ?'),
      insertAttempt: db.prepare(
        `INSERT INTO attempts (run, test, retry, status, duration_ms, message, stack)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
    }
  }

  /**
   * The integer key of a test, inserting it when new. Known keys are cached, up to a bound: a report of a million
   * new tests must not keep a million test ids in memory.
   */
  private testKey(ref: TestRef): number {
    const cached = this.testIds.get(ref.testId)
    if (cached !== undefined) return cached
    let id = this.stmts.testByKey.get(ref.testId) as number | undefined
    if (id === undefined) {
      id = Number(this.stmts.insertTest.run(ref.testId, ref.suite, ref.module, ref.name, ref.file).lastInsertRowid)
    }
    if (this.testIds.size >= TEST_KEY_CACHE) this.testIds.clear()
    this.testIds.set(ref.testId, id)
    return id
  }

  /** The numbering that `slotKeys` follows, and per slot the test's key (0: not known yet). */
  private slotNumbering = ''
  private slotKeys = new Int32Array(0)

  /** The key of the `n`th plain result's test: by its slot when known, else by its id (and remembered). */
  private slotKey(batch: PackedRunBatch, n: number): number {
    const slot = batch.slots[n]!
    if (batch.numbering !== this.slotNumbering) {
      this.slotNumbering = batch.numbering
      this.slotKeys = new Int32Array(1024)
    }
    let keys = this.slotKeys
    if (slot >= keys.length) {
      let size = keys.length * 2
      while (size <= slot) size *= 2
      keys = new Int32Array(size)
      keys.set(this.slotKeys)
      this.slotKeys = keys
    }
    return (keys[slot] ||= this.testKey(packedRef(batch, n)))
  }

  private messageId(text: string | null | undefined): number | null {
    const clipped = clip(text)
    if (clipped === null) return null
    const key = messageKey(clipped)
    const found = this.stmts.messageByKey.get(key) as number | undefined
    if (found !== undefined) return found
    return Number(this.stmts.insertMessage.run(key, clipped).lastInsertRowid)
  }

  private runParams(run: RunMeta, uploadedAt: string) {
    const { runId, suite, branch, revision, pipelineId, pipelineUrl, jobId, jobUrl, artifactsUrl } = run
    const { jobStatus, pipelineStatus, runnerId, startedAt, finishedAt, durationMs, status } = run
    return {
      ...{ runId, suite, branch, revision, pipelineId, pipelineUrl, jobId, jobUrl, artifactsUrl },
      ...{ jobStatus, pipelineStatus, runnerId, startedAt, finishedAt, durationMs, status, uploadedAt },
      env: JSON.stringify(run.env),
    }
  }

  ingestReport(batch: ReportBatch, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    return this.ingestStream(streamOfBatch(batch), opts)
  }

  /**
   * One report in one transaction, written chunk by chunk as the stream yields. The transaction is opened with
   * BEGIN IMMEDIATE (the write lock, waiting up to the busy timeout for other processes) and spans the awaits
   * between chunks; writes of this process queue behind it. Reads on this connection meanwhile see the report
   * as written so far; other processes see none of it until COMMIT, and a crash leaves none of it.
   */
  ingestStream(stream: ReportStream, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    return this.conn.serial(async () => {
      const writer = new SqliteReportWriter(this, stream, opts)
      await this.beginImmediate()
      try {
        for await (const chunk of stream.chunks) writer.write(chunk)
        const outcomes = writer.finish()
        this.conn.db.exec('COMMIT')
        return outcomes
      } catch (error) {
        if (this.conn.db.inTransaction) this.conn.db.exec('ROLLBACK')
        // Keys cached during the transaction may name tests that no longer exist.
        this.testIds.clear()
        this.slotKeys.fill(0)
        throw this.conn.wrap('ingest', error)
      }
    })
  }

  /**
   * BEGIN IMMEDIATE without blocking the event loop: SQLite's own busy wait is synchronous, and the transaction
   * holding the lock may belong to this very thread (another connection awaiting its next chunk). So the wait is
   * done here, polling, up to the connection's busy timeout.
   */
  private async beginImmediate(): Promise<void> {
    // Read once: only this method changes it, and puts it back. (Setting it cannot be prepared once: SQLite applies
    // this pragma when the statement is prepared, not when it runs.)
    const timeout = (this.busyTimeout ??= this.conn.db.pragma('busy_timeout', { simple: true }) as number)
    const deadline = Date.now() + timeout
    this.conn.db.pragma('busy_timeout = 0')
    try {
      for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
        try {
          this.conn.db.exec('BEGIN IMMEDIATE')
          return
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error
        }
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    } finally {
      this.conn.db.pragma(`busy_timeout = ${timeout}`)
    }
  }

  private busyTimeout: number | null = null

  /** @internal The statements and helpers the report writer uses. */
  ingestParts() {
    return {
      stmts: this.stmts,
      testKey: (ref: TestRef) => this.testKey(ref),
      slotKey: (batch: PackedRunBatch, n: number) => this.slotKey(batch, n),
      messageId: (text: string | null | undefined) => this.messageId(text),
      messageText: (id: number | null) => this.conn.messageById(id),
      runParams: (run: RunMeta, uploadedAt: string) => this.runParams(run, uploadedAt),
      markRunsStale: (runKeys: number[]) => markRunsStaleSqlite(this.conn.db, runKeys),
    }
  }
}
