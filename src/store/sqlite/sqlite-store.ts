import { existsSync, mkdirSync } from 'node:fs'
import type { NotificationStore } from '../notifications.js'
import { SqliteNotificationStore } from './notifications.js'
import { dirname, resolve } from 'node:path'
import { FlakewatchError, StoreError } from '../../errors.js'
import type {
  Attempt,
  EnvFacets,
  HistoryEntry,
  Run,
  RunInfo,
  RunMeta,
  RunStatus,
  TestHistory,
  TestRef,
} from '../../model.js'
import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from '../audit-chain.js'
import { clip, messageKey, statusFromCode } from '../codes.js'
import {
  quarantineAuditFromEntry,
  quarantineAuditInput,
  quarantineFromRow,
  ruleAuditFromEntry,
  ruleAuditInput,
  ruleFromRow,
  ruleToRow,
  runFromRow,
  runInfoFromRow,
  type QuarantineRow,
  type RuleRow,
  type RunRow,
} from '../rows.js'
import type {
  AuditEntry,
  AuditInput,
  Fingerprint,
  HealFilter,
  HealRecord,
  HistoryFilter,
  IngestOptions,
  QuarantineRecord,
  QuarantineRule,
  RuleAuditEntry,
  RuleAuditInput,
  ReportBatch,
  RunFilter,
  RunOutcome,
  RunSummary,
  Store,
  StoreStats,
  TestFilter,
  WrittenRun,
} from '../store.js'
import { streamOfBatch, WRITTEN_RUNS_MAX, type ReportStream } from '../store.js'
import { packedRef, type PackedRunBatch } from '../packed-results.js'
import { loadSqlite, type SqliteConstructor, type SqliteDb, type SqliteStatement } from './driver.js'
import { SqliteReportWriter } from './report-writer.js'
import { appendSqliteAudit, listSqliteAudit, readSqliteAuditHead, sqliteAuditChainPage } from './audit-log.js'
import { migrateSqlite, pendingSqliteMigrations } from './migrations.js'

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's transaction before giving up (ms). */
  busyTimeoutMs?: number
  /**
   * Open for reading only (analyze, show, gate, export, the server's analysis): the connection can never write,
   * and the schema check takes no lock. A file that is missing or needs migrating is opened for writing once to
   * create or migrate it, then reopened read-only.
   */
  readOnly?: boolean
  /**
   * Page cache of this connection, in MB. Default {@link WRITE_CACHE_MB} for a connection that writes and
   * {@link READ_CACHE_MB} for one that only reads; a long-running process with several connections (the server)
   * chooses smaller ones.
   */
  cacheMb?: number
}

/** Test keys cached per store; beyond this the cache starts again (a lookup by the unique index is cheap). */
const TEST_KEY_CACHE = 100_000

/** Page cache of a connection that writes, in MB (see openSqliteStore). */
export const WRITE_CACHE_MB = 32

/** Page cache of a read-only connection, in MB: a one-off analysis reads every page of the store once. */
export const READ_CACHE_MB = 64

/** Tests fetched per page of the analysis scan: big enough to amortise the call, small enough to stay flat. */
const SCAN_PAGE_TESTS = 500

/** Run key and packed small integers share one number: run key × PACKED_SPAN + packed (see HISTORY_GROUPS). */
const PACKED_SPAN = 1 << 20

/**
 * One row per test for the analysis scan, its results as JSON arrays in index order (at, run). Every value that
 * crosses into JavaScript costs, and per-row arrays cost most: one row per test with JSON that V8 parses natively
 * measured about a third of the CPU of one row per result. The run key and the small integers of RESULT_COLUMNS
 * share one number (run key < 2^33 stays exact); whole durations are written as integers, which SQLite formats
 * faster than reals; failure details with their message text, present on few rows, come in a filtered array.
 */
const HISTORY_GROUPS = `SELECT test,
  json_group_array(run * ${1 << 20} + (status | (flaky << 2) | (healing << 3) | (min(attempts, 255) << 4) | (min(failed_attempts, 255) << 12))),
  json_group_array(CASE WHEN duration_ms = CAST(duration_ms AS INTEGER) THEN CAST(duration_ms AS INTEGER) ELSE duration_ms END),
  json_group_array(position),
  json_group_array(json_array(run, failed_ms, error_type, CASE WHEN message IS NULL THEN NULL ELSE ifnull((SELECT text FROM messages WHERE id = message), '') END))
    FILTER (WHERE failed_ms != 0 OR error_type IS NOT NULL OR message IS NOT NULL)
  FROM results`

type HistoryGroup = [test: number, keyed: string, durations: string, positions: string, details: string | null]
type RunInfoRow = [
  id: number,
  runId: string,
  suite: string,
  at: number,
  branch: string | null,
  revision: string | null,
  pipelineId: string | null,
  jobStatus: string | null,
  pipelineStatus: string | null,
  runnerId: string | null,
  env: string | null,
  status: RunStatus,
  pipelineUrl: string | null,
  artifactsUrl: string | null,
]
type TestRow = [id: number, testId: string, suite: string, module: string, name: string, file: string | null]

type ResultRow = [
  test: number,
  at: number,
  run: number,
  /** status | flaky << 2 | healing << 3 | attempts << 4 | failed attempts << 12: see RESULT_COLUMNS. */
  packed: number,
  durationMs: number | null,
  failedMs: number,
  errorType: string | null,
  message: number | null,
  position: number | null,
]

/**
 * The columns the history reads. The small integers are packed into one by SQLite itself: every value crossing
 * into JavaScript costs, and this scan moves a million rows (measured a third faster than 12 plain columns).
 */
const RESULT_COLUMNS = `test, at, run,
  status | (flaky << 2) | (healing << 3) | (min(attempts, 255) << 4) | (min(failed_attempts, 255) << 12),
  duration_ms, failed_ms, error_type, message, position`

/**
 * Opens (creating if needed) a SQLite store. WAL lets readers run beside one writer; the busy timeout makes
 * parallel CI jobs that share one file wait for each other instead of failing.
 * @example const store = await openSqliteStore('.flakewatch.db')
 */
export async function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
  const Database = await loadSqlite()
  const path = file === ':memory:' ? file : resolve(file)
  if (opts.readOnly && path !== ':memory:' && existsSync(path)) {
    const reader = openReadOnly(Database, path, opts)
    if (reader) return reader
  }
  let db: SqliteDb
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    db = new Database(path, { timeout: opts.busyTimeoutMs ?? 30_000 })
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = OFF')
    // Results are clustered by test, so each report writes all over the table: a larger page cache keeps those
    // pages in memory instead of re-reading them for every run (allocated only as used). A report of a million
    // new tests fills any cache, so the size is also what such a report costs in memory: 32 MB, not 64.
    db.pragma(cacheSize(opts.cacheMb ?? WRITE_CACHE_MB))
    // Each report dirties a page per test, so checkpointing every 1,000 pages (the default) copies the same pages
    // back over and over; checkpointing every 20,000 (80 MB of WAL) measured 1.7× faster bulk ingest.
    db.pragma('wal_autocheckpoint = 20000')
  } catch (error) {
    throw new StoreError(`cannot open SQLite database ${path}: ${(error as Error).message}`, { cause: error })
  }
  const migrated = migrateSqlite(db)
  if (migrated.error) {
    db.close()
    const locked = /locked|busy/i.test(migrated.error.message)
    const what = locked
      ? `cannot migrate ${path}: another process holds the write lock (${migrated.error.message}); ` +
        'the schema needs migrating, so this open has to wait for it'
      : `cannot migrate ${path}: ${migrated.error.message}`
    throw new StoreError(what, { cause: migrated.error })
  }
  if (opts.readOnly && path !== ':memory:') {
    db.close()
    return openSqliteStore(path, opts)
  }
  return new SqliteStore(db, path)
}

/** The pragma that sets a connection's page cache to `mb` (a negative cache_size counts KiB, not pages). */
function cacheSize(mb: number): string {
  return `cache_size = -${Math.round(mb * 1024)}`
}

/**
 * A read-only connection when the schema is current, else null (the caller migrates first). WAL lets it read the
 * last committed state while a writer holds the lock.
 */
function openReadOnly(Database: SqliteConstructor, path: string, opts: SqliteStoreOptions): SqliteStore | null {
  let db: SqliteDb
  try {
    db = new Database(path, { timeout: opts.busyTimeoutMs ?? 30_000, readonly: true, fileMustExist: true })
    db.pragma(cacheSize(opts.cacheMb ?? READ_CACHE_MB))
  } catch (error) {
    throw new StoreError(`cannot open SQLite database ${path} for reading: ${(error as Error).message}`, {
      cause: error,
    })
  }
  try {
    if (pendingSqliteMigrations(db).length > 0) {
      db.close()
      return null
    }
  } catch (error) {
    db.close()
    throw new StoreError(`cannot read the schema of ${path}: ${(error as Error).message}`, { cause: error })
  }
  return new SqliteStore(db, path, true)
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  private readonly testIds = new Map<string, number>()
  private readonly stmts: ReturnType<SqliteStore['prepareAll']>
  private writing: Promise<unknown> = Promise.resolve()
  /** The server's small reads, prepared once: preparing costs more than running them. */
  private readonly reads = new Map<string, SqliteStatement>()
  private notificationStore: SqliteNotificationStore | null = null

  constructor(
    private readonly db: SqliteDb,
    readonly location: string,
    /** Opened read-only: every write fails in the driver. */
    readonly readOnly = false,
  ) {
    this.stmts = this.prepareAll()
  }

  private prepareAll() {
    const db = this.db
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
      messageText: db.prepare('SELECT text FROM messages WHERE id = ?').pluck(),
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

  /** Write operations of this process, one after another: an open ingest transaction spans awaits. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.writing.then(fn, fn)
    this.writing = next.catch(() => undefined)
    return next
  }

  notifications(): NotificationStore {
    return (this.notificationStore ??= new SqliteNotificationStore(this.db, (fn) => this.serial(fn)))
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
    return this.serial(async () => {
      const writer = new SqliteReportWriter(this, stream, opts)
      await this.beginImmediate()
      try {
        for await (const chunk of stream.chunks) writer.write(chunk)
        const outcomes = writer.finish()
        this.db.exec('COMMIT')
        return outcomes
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK')
        // Keys cached during the transaction may name tests that no longer exist.
        this.testIds.clear()
        this.slotKeys.fill(0)
        throw this.wrap('ingest', error)
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
    const timeout = (this.busyTimeout ??= this.db.pragma('busy_timeout', { simple: true }) as number)
    const deadline = Date.now() + timeout
    this.db.pragma('busy_timeout = 0')
    try {
      for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
        try {
          this.db.exec('BEGIN IMMEDIATE')
          return
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error
        }
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`)
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
      messageText: (id: number | null) => this.messageById(id),
      runParams: (run: RunMeta, uploadedAt: string) => this.runParams(run, uploadedAt),
    }
  }

  private wrap(what: string, error: unknown): Error {
    // Parse and limit errors raised while the stream was read keep their code (exit 2, HTTP 422).
    if (error instanceof FlakewatchError) return error
    return new StoreError(`${what} failed on ${this.location}: ${(error as Error).message}`, { cause: error })
  }

  /**
   * The selected runs by key, for the scan. A store may hold a million runs, so rows are iterated rather than
   * all fetched, and the values that repeat from run to run (suite, branch, runner, statuses, the env facets) are
   * shared instead of copied once per run.
   */
  private runsFor(filter: HistoryFilter | RunFilter = {}, limit?: number): Map<number, RunInfo> {
    const { sql: where, params } = this.runWhere(filter)
    params.push(limit ?? -1)
    const rows = this.db
      .prepare(
        `SELECT id, run_id, suite, at, branch, revision, pipeline_id, job_status, pipeline_status, runner_id, env,
          status, pipeline_url, artifacts_url FROM runs ${where} ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .raw(true)
    const shared = new Map<string, string>()
    const one = <T extends string | null>(text: T): T => {
      if (text === null) return text
      let kept = shared.get(text)
      if (kept === undefined) shared.set(text, (kept = text))
      return kept as T
    }
    const envs = new Map<string, EnvFacets>()
    const map = new Map<number, RunInfo>()
    for (const row of rows.iterate(...params) as Iterable<RunInfoRow>) {
      const [id, runId, suite, at, branch, revision, pipelineId, jobStatus, pipelineStatus, runnerId, envText] = row
      let env = envs.get(envText ?? '')
      if (env === undefined) envs.set(envText ?? '', (env = envText ? (JSON.parse(envText) as EnvFacets) : {}))
      map.set(id, {
        runId,
        suite: one(suite),
        at: Number(at),
        branch: one(branch),
        revision,
        pipelineId,
        jobStatus: one(jobStatus),
        pipelineStatus: one(pipelineStatus),
        runnerId: one(runnerId),
        env,
        status: row[11],
        pipelineUrl: row[12],
        artifactsUrl: row[13],
      })
    }
    return map
  }

  private messageCache = new Map<number, string>()

  private messageById(id: number | null): string | null {
    if (id === null) return null
    let text = this.messageCache.get(id)
    if (text === undefined) {
      text = (this.stmts.messageText.get(id) as string | undefined) ?? ''
      if (this.messageCache.size > 50_000) this.messageCache.clear()
      this.messageCache.set(id, text)
    }
    return text
  }

  private entryFromRow(row: ResultRow, run: RunInfo): HistoryEntry {
    return {
      run,
      status: statusFromCode(row[3] & 3),
      flakyOnRetry: (row[3] & 4) !== 0,
      durationMs: row[4],
      attempts: (row[3] >> 4) & 255,
      failedAttempts: (row[3] >> 12) & 255,
      failedAttemptsMs: row[5],
      errorType: row[6],
      message: this.messageById(row[7]),
      healingOccurred: (row[3] & 8) !== 0,
      position: row[8],
    }
  }

  async *scanHistory(filter: HistoryFilter = {}): AsyncIterable<TestHistory> {
    const runs = this.runsFor(filter, filter.lastRuns)
    if (runs.size === 0) return
    if (filter.testIds) {
      yield* this.historiesOf(filter.testIds, runs)
      return
    }
    let minAt = Infinity
    for (const r of runs.values()) if (r.at < minAt) minAt = r.at
    // Keyset pagination by test instead of one long-lived cursor: consumers may await between tests.
    const page = this.db.prepare(
      `${HISTORY_GROUPS} WHERE test > ? AND at >= ? GROUP BY test ORDER BY test LIMIT ${SCAN_PAGE_TESTS}`,
    )
    page.raw(true)
    const refs = this.db.prepare(
      'SELECT id, test_id, suite, module, name, file FROM tests WHERE id IN (SELECT value FROM json_each(?))',
    )
    refs.raw(true)
    let cursor = -1
    for (;;) {
      const groups = page.all(cursor, minAt) as HistoryGroup[]
      if (groups.length === 0) break
      // Test names are read per page, so that a store of a million tests never holds them all.
      const tests = new Map<number, TestRef>()
      const keys = groups.map((g) => g[0])
      for (const [id, testId, suite, module, name, file] of refs.all(JSON.stringify(keys)) as TestRow[]) {
        tests.set(id, { testId, suite, module, name, file })
      }
      for (const group of groups) {
        const test = tests.get(group[0])
        if (test === undefined) continue
        const entries = this.entriesOfGroup(group, runs)
        if (entries.length > 0) yield { test, entries }
      }
      cursor = groups[groups.length - 1]![0]
      if (groups.length < SCAN_PAGE_TESTS) break
      // Between pages, let a server answer other requests.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /** One test's entries from its `HISTORY_GROUPS` row, runs outside `runs` left out, oldest first. */
  private entriesOfGroup(group: HistoryGroup, runs: Map<number, RunInfo>): HistoryEntry[] {
    const keyed = JSON.parse(group[1]) as number[]
    const durations = JSON.parse(group[2]) as (number | null)[]
    const positions = JSON.parse(group[3]) as (number | null)[]
    // Failure details are rare: a few rows per test, looked up by run.
    let details: Map<number, [number, string | null, string | null]> | null = null
    if (group[4] !== null && group[4] !== '[]') {
      details = new Map()
      for (const [run, failedMs, errorType, message] of JSON.parse(group[4]) as [
        number,
        number,
        string | null,
        string | null,
      ][]) {
        details.set(run, [failedMs, errorType, message])
      }
    }
    const entries: HistoryEntry[] = []
    let ordered = true
    let lastAt = -Infinity
    let lastKey = -1
    for (let i = 0; i < keyed.length; i++) {
      const runKey = Math.floor(keyed[i]! / PACKED_SPAN)
      const run = runs.get(runKey)
      if (run === undefined) continue
      const packed = keyed[i]! % PACKED_SPAN
      const detail = details?.get(runKey)
      entries.push({
        run,
        status: statusFromCode(packed & 3),
        flakyOnRetry: (packed & 4) !== 0,
        durationMs: durations[i]!,
        attempts: (packed >> 4) & 255,
        failedAttempts: (packed >> 12) & 255,
        failedAttemptsMs: detail === undefined ? 0 : detail[0],
        errorType: detail === undefined ? null : detail[1],
        message: detail === undefined ? null : detail[2],
        healingOccurred: (packed & 8) !== 0,
        position: positions[i]!,
      })
      if (run.at < lastAt || (run.at === lastAt && runKey < lastKey)) ordered = false
      lastAt = run.at
      lastKey = runKey
    }
    // SQLite aggregates in index order (test, at, run) in practice, but does not promise it: check, never trust.
    if (!ordered) {
      const keyOf = new Map<RunInfo, number>()
      for (const [key, run] of runs) keyOf.set(run, key)
      entries.sort((a, b) => a.run.at - b.run.at || keyOf.get(a.run)! - keyOf.get(b.run)!)
    }
    return entries
  }

  /**
   * The histories of a few named tests, each read by the primary key (test, at, run): the cost follows those
   * tests' results, never the store's size. This is what an incremental analysis reads after an upload.
   */
  private *historiesOf(testIds: string[], runs: Map<number, RunInfo>): Iterable<TestHistory> {
    let minAt = Infinity
    for (const r of runs.values()) minAt = Math.min(minAt, r.at)
    const byName = this.db.prepare('SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = ?').raw()
    const rowsOf = this.db
      .prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE test = ? AND at >= ? ORDER BY at, run`)
      .raw(true)
    for (const testId of new Set(testIds)) {
      const t = byName.get(testId) as [number, string, string, string, string, string | null] | undefined
      if (!t) continue
      const [id, , suite, module, name, file] = t
      const history: TestHistory = { test: { testId, suite, module, name, file }, entries: [] }
      for (const row of rowsOf.all(id, minAt) as ResultRow[]) {
        const run = runs.get(row[2])
        if (run) history.entries.push(this.entryFromRow(row, run))
      }
      if (history.entries.length) yield history
    }
  }

  testsInRuns(runIds: string[]): Promise<string[]> {
    const stmt = this.db.prepare(
      `SELECT DISTINCT t.test_id FROM runs r JOIN results s ON s.run = r.id JOIN tests t ON t.id = s.test
       WHERE r.run_id = ?`,
    )
    stmt.pluck(true)
    const out = new Set<string>()
    for (const runId of new Set(runIds)) for (const id of stmt.all(runId) as string[]) out.add(id)
    return Promise.resolve([...out])
  }

  getTestHistory(testId: string, opts: { limit?: number } = {}): Promise<TestHistory | null> {
    const test = this.db
      .prepare('SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = ?')
      .get(testId) as
      { id: number; test_id: string; suite: string; module: string; name: string; file: string | null } | undefined
    if (!test) return Promise.resolve(null)
    const rows = this.db
      .prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE test = ? ORDER BY at DESC, run DESC LIMIT ?`)
      .raw(true)
      .all(test.id, opts.limit ?? 1000) as ResultRow[]
    const runIds = [...new Set(rows.map((r) => r[2]))]
    const runs = new Map<number, RunInfo>()
    const runStmt = this.db.prepare('SELECT * FROM runs WHERE id = ?')
    for (const id of runIds) runs.set(id, runInfoFromRow(runStmt.get(id) as RunRow))
    const entries = rows.reverse().map((row) => this.entryFromRow(row, runs.get(row[2])!))
    return Promise.resolve({
      test: { testId: test.test_id, suite: test.suite, module: test.module, name: test.name, file: test.file },
      entries,
    })
  }

  getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    const rows = this.db
      .prepare(
        `SELECT a.retry, a.status, a.duration_ms, a.message, a.stack FROM attempts a
         JOIN tests t ON t.id = a.test JOIN runs r ON r.id = a.run
         WHERE t.test_id = ? AND r.run_id = ? ORDER BY a.retry`,
      )
      .all(testId, runId) as {
      retry: number
      status: number
      duration_ms: number | null
      message: number | null
      stack: number | null
    }[]
    if (rows.length > 0) {
      return Promise.resolve(
        rows.map((r) => ({
          retry: r.retry,
          status: statusFromCode(r.status),
          durationMs: r.duration_ms,
          message: this.messageById(r.message),
          stack: this.messageById(r.stack),
        })),
      )
    }
    // A single passing attempt is implied by its result row.
    const res = this.db
      .prepare(
        `SELECT s.status, s.duration_ms, s.message FROM results s JOIN tests t ON t.id = s.test JOIN runs r ON r.id = s.run
         WHERE t.test_id = ? AND r.run_id = ?`,
      )
      .get(testId, runId) as { status: number; duration_ms: number | null; message: number | null } | undefined
    if (!res) return Promise.resolve([])
    return Promise.resolve([
      {
        retry: 0,
        status: statusFromCode(res.status),
        durationMs: res.duration_ms,
        message: this.messageById(res.message),
        stack: null,
      },
    ])
  }

  private runWhere(filter: RunFilter): { sql: string; params: unknown[] } {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.suite) {
      where.push('suite = ?')
      params.push(filter.suite)
    }
    if (filter.branch) {
      where.push('branch = ?')
      params.push(filter.branch)
    }
    if (filter.since !== undefined) {
      where.push('at >= ?')
      params.push(filter.since)
    }
    if (filter.until !== undefined) {
      where.push('at <= ?')
      params.push(filter.until)
    }
    return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params }
  }

  /** A prepared statement kept for reuse; only for `get`/`all` (a statement being iterated cannot run again). */
  private read(sql: string): SqliteStatement {
    let stmt = this.reads.get(sql)
    if (!stmt) {
      stmt = this.db.prepare(sql)
      // Bounded: the SQL varies only with which filters are set.
      if (this.reads.size < 200) this.reads.set(sql, stmt)
    }
    return stmt
  }

  listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const { sql, params } = this.runWhere(filter)
    const rows = this.read(`SELECT * FROM runs ${sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`).all(
      ...params,
      filter.limit ?? -1,
      filter.offset ?? 0,
    ) as RunRow[]
    return Promise.resolve(rows.map(runFromRow))
  }

  getRun(runId: string): Promise<Run | null> {
    const row = this.read('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
    return Promise.resolve(row ? runFromRow(row) : null)
  }

  runSummaries(filter: RunFilter = {}): Promise<RunSummary[]> {
    const { sql, params } = this.runWhere(filter)
    const rows = this.read(
      `SELECT run_id AS runId, at, total, passed, failed, skipped, flaky FROM runs ${sql}
         ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
    ).all(...params, filter.limit ?? -1, filter.offset ?? 0) as RunSummary[]
    return Promise.resolve(rows)
  }

  runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    const rows = this.read(
      `SELECT run_id AS runId, written_at AS writtenAt FROM runs WHERE written_at >= ?
       ORDER BY written_at DESC, id DESC LIMIT ?`,
    ).all(sinceMs, Math.min(limit, WRITTEN_RUNS_MAX)) as WrittenRun[]
    return Promise.resolve(rows)
  }

  listTests(filter: TestFilter = {}): Promise<TestRef[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.suite) {
      where.push('suite = ?')
      params.push(filter.suite)
    }
    if (filter.modules) {
      where.push('module IN (SELECT value FROM json_each(?))')
      params.push(JSON.stringify(filter.modules))
    }
    if (filter.search) {
      where.push("lower(test_id) LIKE ? ESCAPE '\\'")
      params.push(`%${likeEscape(filter.search.toLowerCase())}%`)
    }
    const rows = this.db
      .prepare(
        `SELECT test_id AS testId, suite, module, name, file FROM tests ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY test_id LIMIT ? OFFSET ?`,
      )
      .all(...params, filter.limit ?? -1, filter.offset ?? 0) as TestRef[]
    return Promise.resolve(rows)
  }

  getTest(testId: string): Promise<TestRef | null> {
    const row = this.read('SELECT test_id AS testId, suite, module, name, file FROM tests WHERE test_id = ?').get(
      testId,
    ) as TestRef | undefined
    return Promise.resolve(row ?? null)
  }

  stats(): Promise<StoreStats> {
    const one = (sql: string) => Number(this.db.prepare(sql).pluck().get() ?? 0)
    const span = this.db.prepare('SELECT min(at) AS lo, max(at) AS hi FROM runs').get() as {
      lo: number | null
      hi: number | null
    }
    return Promise.resolve({
      runs: one('SELECT count(*) FROM runs'),
      tests: one('SELECT count(*) FROM tests'),
      results: one('SELECT count(*) FROM results'),
      attempts: one('SELECT coalesce(sum(attempts), 0) FROM results'),
      oldestRunAt: span.lo,
      newestRunAt: span.hi,
    })
  }

  listQuarantines(): Promise<QuarantineRecord[]> {
    const rows = this.read('SELECT * FROM quarantine ORDER BY test_id').all() as QuarantineRow[]
    return Promise.resolve(rows.map(quarantineFromRow))
  }

  getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    const row = this.read('SELECT * FROM quarantine WHERE test_id = ?').get(testId) as QuarantineRow | undefined
    return Promise.resolve(row ? quarantineFromRow(row) : null)
  }

  putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    return this.serial(() => this.putQuarantineNow(record, audit))
  }

  private putQuarantineNow(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    try {
      this.db
        .transaction(() => {
          this.db
            .prepare(
              `INSERT OR REPLACE INTO quarantine (test_id, reason, owner, issue_url, created_at, created_by, expires_at, source)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(
              record.testId,
              record.reason,
              record.owner,
              record.issueUrl,
              record.createdAt,
              record.createdBy,
              record.expiresAt,
              record.source,
            )
          appendSqliteAudit(this.db, quarantineAuditInput(record.testId, audit, record))
        })
        .immediate()
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(this.wrap('quarantine', error))
    }
  }

  deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    return this.serial(() => this.deleteQuarantineNow(testId, audit))
  }

  private deleteQuarantineNow(testId: string, audit: AuditInput): Promise<boolean> {
    try {
      const removed = this.db
        .transaction(() => {
          const changes = this.db.prepare('DELETE FROM quarantine WHERE test_id = ?').run(testId).changes
          if (changes) appendSqliteAudit(this.db, quarantineAuditInput(testId, audit, null))
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.wrap('unquarantine', error))
    }
  }

  listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const entries = listSqliteAudit(this.db, { kind: 'quarantine', subject: filter.testId, limit: filter.limit })
    return Promise.resolve(entries.map(quarantineAuditFromEntry))
  }

  listQuarantineRules(): Promise<QuarantineRule[]> {
    const rows = this.db.prepare('SELECT * FROM quarantine_rules ORDER BY id').all() as RuleRow[]
    return Promise.resolve(rows.map(ruleFromRow))
  }

  putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    try {
      this.db
        .transaction(() => {
          this.db
            .prepare(
              `INSERT OR REPLACE INTO quarantine_rules (id, match, reason, owner, issue_url, created_at, created_by, expires_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(...ruleToRow(rule))
          appendSqliteAudit(this.db, ruleAuditInput(rule.id, audit, rule))
        })
        .immediate()
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(this.wrap('save quarantine rule', error))
    }
  }

  deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    try {
      const removed = this.db
        .transaction(() => {
          const changes = this.db.prepare('DELETE FROM quarantine_rules WHERE id = ?').run(id).changes
          if (changes) appendSqliteAudit(this.db, ruleAuditInput(id, audit, null))
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.wrap('remove quarantine rule', error))
    }
  }

  listRuleAudit(filter: { ruleId?: string; limit?: number } = {}): Promise<RuleAuditEntry[]> {
    const entries = listSqliteAudit(this.db, { kind: 'rule', subject: filter.ruleId, limit: filter.limit })
    return Promise.resolve(entries.map(ruleAuditFromEntry))
  }

  appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    return this.serial(() => {
      try {
        return Promise.resolve(this.db.transaction(() => appendSqliteAudit(this.db, entry)).immediate())
      } catch (error) {
        return Promise.reject(this.wrap('audit', error))
      }
    })
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return Promise.resolve(listSqliteAudit(this.db, filter))
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return Promise.resolve(sqliteAuditChainPage(this.db, afterId, limit))
  }

  auditHead(): Promise<AuditHead> {
    return Promise.resolve(readSqliteAuditHead(this.db))
  }

  putFingerprint(fp: Fingerprint): Promise<void> {
    return this.serial(() => this.putFingerprintNow(fp))
  }

  private putFingerprintNow(fp: Fingerprint): Promise<void> {
    this.db
      .prepare('INSERT OR REPLACE INTO fingerprints (test_id, locator, data, updated_at) VALUES (?, ?, ?, ?)')
      .run(fp.testId, fp.locator, JSON.stringify(fp.data), fp.updatedAt)
    return Promise.resolve()
  }

  getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    const row = this.db
      .prepare('SELECT data, updated_at FROM fingerprints WHERE test_id = ? AND locator = ?')
      .get(testId, locator) as { data: string; updated_at: string } | undefined
    return Promise.resolve(
      row ? { testId, locator, data: JSON.parse(row.data) as unknown, updatedAt: row.updated_at } : null,
    )
  }

  appendHeal(heal: HealRecord): Promise<void> {
    return this.serial(() => this.appendHealNow(heal))
  }

  private appendHealNow(heal: HealRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO heal_log (test_id, old_locator, new_locator, score, breakdown, url, at, run_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        heal.testId,
        heal.oldLocator,
        heal.newLocator,
        heal.score,
        JSON.stringify(heal.breakdown),
        heal.url,
        heal.at,
        heal.runId,
      )
    return Promise.resolve()
  }

  listHeals(filter: HealFilter = {}): Promise<HealRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.testId) {
      where.push('test_id = ?')
      params.push(filter.testId)
    }
    if (filter.since) {
      where.push('at >= ?')
      params.push(filter.since)
    }
    const rows = this.db
      .prepare(`SELECT * FROM heal_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`)
      .all(...params, filter.limit ?? -1) as {
      id: number
      test_id: string
      old_locator: string
      new_locator: string
      score: number
      breakdown: string
      url: string | null
      at: string
      run_id: string | null
    }[]
    return Promise.resolve(
      rows.map((r) => ({
        id: r.id,
        testId: r.test_id,
        oldLocator: r.old_locator,
        newLocator: r.new_locator,
        score: r.score,
        breakdown: JSON.parse(r.breakdown) as Record<string, number>,
        url: r.url,
        at: r.at,
        runId: r.run_id,
      })),
    )
  }

  prune(before: number, opts: { batchSize?: number } = {}): Promise<{ runs: number; results: number }> {
    return this.serial(() => this.pruneNow(before, opts))
  }

  private async pruneNow(before: number, opts: { batchSize?: number }): Promise<{ runs: number; results: number }> {
    const batch = opts.batchSize ?? 50
    const pick = this.db.prepare('SELECT id FROM runs WHERE at < ? ORDER BY at LIMIT ?').pluck()
    const stmts = [
      this.db.prepare('DELETE FROM attempts WHERE run = ?'),
      this.db.prepare('DELETE FROM reports WHERE run = ?'),
      this.db.prepare('DELETE FROM runs WHERE id = ?'),
    ]
    const delResults = this.db.prepare('DELETE FROM results WHERE run = ?')
    let runs = 0
    let results = 0
    for (;;) {
      const ids = pick.all(before, batch) as number[]
      if (ids.length === 0) break
      this.db
        .transaction(() => {
          for (const id of ids) {
            results += delResults.run(id).changes
            for (const s of stmts) s.run(id)
          }
        })
        .immediate()
      runs += ids.length
      // Yield between batches so that other work (and other processes' writers) get a turn.
      await new Promise((r) => setImmediate(r))
    }
    return { runs, results }
  }

  /** Runs a SQL query and returns its rows; for tests and diagnostics only. */
  rawQuery(sql: string, ...params: unknown[]): unknown[] {
    return this.db.prepare(sql).all(...params)
  }

  /** Runs a SQL statement that returns no rows; for tests and diagnostics only. */
  rawRun(sql: string, ...params: unknown[]): number {
    return this.db.prepare(sql).run(...params).changes
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close()
    return Promise.resolve()
  }
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

export type { SqliteStatement }
