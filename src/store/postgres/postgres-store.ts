import { Readable } from 'node:stream'
import type { NotificationStore } from '../notifications.js'
import { PostgresNotificationStore } from './notifications.js'
import { pipeline } from 'node:stream/promises'
import { FlakewatchError, InternalError, StoreError } from '../../errors.js'
import type { Attempt, HistoryEntry, Run, RunInfo, RunMeta, TestHistory, TestRef } from '../../model.js'
import { isoToMs, statusFromCode } from '../codes.js'
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
  ReportStream,
  RunFilter,
  RunOutcome,
  RunSummary,
  Store,
  StoreStats,
  TestFilter,
  WrittenRun,
} from '../store.js'
import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from '../audit-chain.js'
import { appendPostgresAudit, listPostgresAudit, postgresAuditChainPage, readPostgresAuditHead } from './audit-log.js'
import { streamOfBatch, WRITTEN_RUNS_MAX } from '../store.js'
import type { MigrationResultSet } from '../sqlite/migrations.js'
import { copyChunks } from './copy-text.js'
import { loadPg, type PgClient, type PgDriver, type PgPool, type PgQueryable, type PgQueryConfig } from './driver.js'
import { migratePostgres } from './migrations.js'
import { attemptCopyRows, attemptCount, resultCopyRows, type PreparedRun, type RunCounts } from './prepare-batch.js'
import { PgReportWriter } from './report-writer.js'

export interface PostgresStoreOptions {
  /** Connections kept by this store (default: `?pool=` or 10). The analysis scan holds one for its whole duration. */
  poolSize?: number
  /** How long to wait for a connection before failing (ms, default 10 000). */
  connectTimeoutMs?: number
  /** For reading commands. The schema check is read-only in every case; this is kept for symmetry with SQLite. */
  readOnly?: boolean
}

/** A PostgreSQL URL split into what `pg` needs and what flakewatch reads itself. */
export interface ResolvedPostgresUrl {
  /** The URL without flakewatch's own parameters. */
  connectionString: string
  /** From `?schema=name`: every table lives there (created if missing), through `search_path`. */
  schema: string | null
  /** From `?pool=n`: connections this store may hold, so that N servers can be fitted into `max_connections`. */
  poolSize: number | null
  /** The URL without its password, for messages. */
  location: string
}

/** Rows fetched per round trip of the analysis scan: big enough to amortise the trip, small enough to stay flat. */
const SCAN_PAGE = 20_000
/** Deadlocks and serialization failures are transient: the whole report is retried this many times. */
const MAX_ATTEMPTS = 5

const RETRYABLE = new Set(['40P01', '40001', 'FW_RUN_GONE'])
const INT8_OID = 20
/** Message texts kept in memory between queries: failure messages repeat, so a few thousand cover most scans. */
const MESSAGE_CACHE = 50_000
/**
 * Characters of message text kept likewise: a stored message may have 16,384 (MAX_STORED_TEXT), so the count
 * alone would allow 800M characters in a long-running server's analysis thread.
 */
const MESSAGE_CACHE_CHARS = 8_000_000
/** Test keys cached per store: a report of a million new tests must not keep a million ids in memory. */
const TEST_KEY_CACHE = 100_000
/** Message keys cached likewise. */
const MESSAGE_KEY_CACHE = 100_000
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * Splits `?schema=` off a PostgreSQL URL and checks it, since it becomes an identifier.
 * @example
 * resolvePostgresUrl('postgres://ci:secret@db/fw?schema=team_a').location // 'postgres://ci@db/fw?schema=team_a'
 */
export function resolvePostgresUrl(url: string): ResolvedPostgresUrl {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (error) {
    throw new StoreError(`not a valid PostgreSQL URL: ${redact(url)}`, { cause: error })
  }
  const schema = parsed.searchParams.get('schema')
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    throw new StoreError(`schema "${schema}" is not a plain identifier (letters, digits, underscore)`)
  }
  const pool = parsed.searchParams.get('pool')
  const poolSize = pool === null ? null : Number(pool)
  if (poolSize !== null && !(Number.isInteger(poolSize) && poolSize >= 1 && poolSize <= 1000)) {
    throw new StoreError(`pool=${pool}: expected a whole number of connections from 1 to 1000`)
  }
  parsed.searchParams.delete('schema')
  parsed.searchParams.delete('pool')
  const connectionString = parsed.toString()
  parsed.password = ''
  if (schema) parsed.searchParams.set('schema', schema)
  return { connectionString, schema, poolSize, location: parsed.toString() }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@')
}

/**
 * Opens (migrating if needed) a PostgreSQL store. `pg` and `pg-copy-streams` are loaded only here.
 * @example const store = await openPostgresStore('postgres://ci@db:5432/flakewatch?schema=flakewatch')
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const resolved = resolvePostgresUrl(url)
  const driver = await loadPg()
  const pool = new driver.Pool({
    connectionString: resolved.connectionString,
    options: resolved.schema ? `-c search_path=${resolved.schema}` : undefined,
    max: opts.poolSize ?? resolved.poolSize ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'flakewatch',
    // Counts, ids and epoch-ms times are int8; all fit a double, and numbers are what the rest of flakewatch uses.
    types: { getTypeParser: (oid, format) => (oid === INT8_OID ? Number : driver.getTypeParser(oid, format)) },
  })
  // An idle connection dropped by the server emits here; without a listener that would crash the process.
  // The next query fails with its own error instead.
  pool.on('error', () => undefined)
  let client: PgClient
  try {
    client = await pool.connect()
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw new StoreError(`cannot connect to PostgreSQL at ${resolved.location}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const migrated = await migratePostgres(client, resolved.schema)
  client.release(migrated.error)
  if (migrated.error) {
    await pool.end().catch(() => undefined)
    throw new StoreError(`cannot migrate ${resolved.location}: ${migrated.error.message}`, { cause: migrated.error })
  }
  return new PostgresStore(driver, pool, resolved.location, migrated.results)
}

/** A run this transaction writes results for. */
/** What one write of results did: per run key, results and attempts stored; which merged rows went in. */
export interface WrittenResults {
  counts: Map<number, { results: number; attempts: number }>
  /** For runs that already existed: the (run, test) rows actually inserted (the rest were another report's). */
  inserted: { run: number; test: number }[]
}

export interface ActiveRun {
  prepared: PreparedRun
  key: number
  at: number
  created: boolean
  replacing: boolean
}

type ResultRow = [
  test: number,
  run: number,
  flags: number,
  durationMs: number | null,
  attempts: number,
  failedAttempts: number,
  failedMs: number,
  errorType: string | null,
  message: number | null,
  position: number | null,
]

/** In table order: what COPY and INSERT write. */
const RESULT_INSERT_COLUMNS =
  'at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky, healing, error_type, position'
const ATTEMPT_COLUMNS = 'run, test, retry, status, duration_ms, message, stack'
/**
 * What reads return, as `ResultRow`. Decoding fields dominates the client's side of the scan, so the row carries
 * no `at` (its run has it) and status, flaky and healing travel as one small integer of bit flags.
 */
const RESULT_COLUMNS = `test, run, status | (flaky::integer << 2) | (healing::integer << 3), duration_ms, attempts,
  failed_attempts, failed_ms, error_type, message, position`
const FLAKY = 4
const HEALING = 8
const RUN_COLUMNS = `run_id, suite, branch, revision, pipeline_id, pipeline_url, job_id, job_url, artifacts_url,
  job_status, pipeline_status, runner_id, env, started_at, finished_at, duration_ms, status, uploaded_at, at`
const STAGE_RESULTS = `CREATE TEMP TABLE fw_stage_results (at bigint, duration_ms double precision,
  failed_ms double precision, test integer, run integer, attempts integer, failed_attempts integer, message integer,
  status smallint, flaky boolean, healing boolean, error_type text, position integer) ON COMMIT DELETE ROWS`
const STAGE_ATTEMPTS = `CREATE TEMP TABLE fw_stage_attempts (run integer, test integer, retry integer, status smallint,
  duration_ms double precision, message integer, stack integer) ON COMMIT DELETE ROWS`

/** Registers work to do only once the current transaction has committed. */
export type OnCommit = (f: () => void) => void

/** Builds `$n` placeholders in step with their values. */
class Params {
  readonly values: unknown[] = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  /** Test and message keys are never deleted (prune keeps them), so once committed they can be cached for good. */
  private readonly testKeys = new Map<string, number>()
  private readonly messageKeys = new Map<string, number>()
  private readonly messageTexts = new Map<number, string>()
  /** Characters held in `messageTexts`. */
  private messageTextChars = 0
  /** Pool clients that already have the session's staging tables. */
  private readonly staged = new WeakSet<PgClient>()

  /** The pool, with its errors turned into StoreErrors that name the database, as every other failure here is. */
  private readonly db: PgQueryable
  private notificationStore: PostgresNotificationStore | null = null

  constructor(
    private readonly driver: PgDriver,
    private readonly pool: PgPool,
    readonly location: string,
    /** What opening this store did to the schema: which migrations it applied and which it found applied. */
    readonly migrations: MigrationResultSet['results'] = [],
  ) {
    this.db = {
      query: async <R>(query: string | PgQueryConfig, values?: unknown[]) => {
        try {
          return await pool.query<R>(query, values)
        } catch (error) {
          throw this.wrap('query', error)
        }
      },
    }
  }

  notifications(): NotificationStore {
    return (this.notificationStore ??= new PostgresNotificationStore(this.db, async (fn) => {
      try {
        return await this.transaction((client) => fn(client))
      } catch (error) {
        throw this.wrap('notifications', error)
      }
    }))
  }

  // ---------------------------------------------------------------------------------------------------- ingest

  async ingestReport(batch: ReportBatch, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        // A batch is known whole: its runs are claimed in run-id order first, the global lock order, and a
        // deadlock or serialisation failure is retried with a fresh stream of the same batch.
        return await this.streamTx(
          streamOfBatch(batch),
          opts,
          batch.runs.map((r) => r.run),
        )
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (attempt < MAX_ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) {
          await sleep(10 * attempt + Math.random() * 40)
          continue
        }
        throw this.wrap('ingest', error)
      }
    }
  }

  /**
   * One streamed report in one transaction: each chunk is COPYed (or staged and merged) as it arrives, so memory
   * follows the chunk. Runs are claimed as the stream names them. Not retried: the stream is read once.
   */
  async ingestStream(stream: ReportStream, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    try {
      return await this.streamTx(stream, opts, [])
    } catch (error) {
      throw this.wrap('ingest', error)
    }
  }

  private streamTx(stream: ReportStream, opts: IngestOptions, claimFirst: RunMeta[]): Promise<RunOutcome[]> {
    return this.transaction(async (client, onCommit) => {
      const writer = new PgReportWriter(this.ingestParts(client, onCommit), stream, opts)
      await writer.claimAll([...claimFirst].sort((a, b) => compare(a.runId, b.runId)))
      for await (const chunk of stream.chunks) await writer.write(chunk)
      return writer.finish()
    })
  }

  /** @internal What the report writer needs of the store, bound to one transaction's client. */
  ingestParts(client: PgClient, onCommit: OnCommit) {
    const none: RunCounts = { total: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 }
    // Keys waiting for this transaction's commit count against the caches' bounds too: a report of a million new
    // tests must not hold every chunk's keys until it commits.
    let pendingTests = 0
    let pendingMessages = 0
    return {
      client,
      onCommit,
      claimRun: (run: RunMeta, now: string) => this.claimRun(client, { run, counts: none } as PreparedRun, now),
      mergeRun: (key: number, run: RunMeta) => this.mergeRun(client, key, run),
      replaceRun: (key: number, run: RunMeta, now: string) => this.replaceRun(client, key, run, now),
      resolveTests: (refs: TestRef[]) => this.resolveTests(client, refs),
      resolveMessages: (messages: { key: string; text: string }[]) => this.resolveMessages(client, messages),
      writeResults: (active: ActiveRun[], testKeys: Int32Array, messageIds: Int32Array) =>
        this.writeResults(client, onCommit, active, testKeys, messageIds),
      /** Caches keys once the transaction commits, up to the caches' bounds. */
      remember: (tests: TestRef[], testKeys: Int32Array, messages: { key: string }[], messageIds: Int32Array) => {
        const keepTests = this.testKeys.size + pendingTests + tests.length <= TEST_KEY_CACHE
        const keepMessages = pendingMessages + messages.length <= MESSAGE_KEY_CACHE
        if (!keepTests && !keepMessages) return
        // Only the keys wait for the commit: holding the chunk's test refs and message texts (up to 64 KB each)
        // until then made a report's memory follow its size again.
        const testIds = keepTests ? tests.map((t) => t.testId) : null
        const messageKeys = keepMessages ? messages.map((m) => m.key) : null
        const keys = keepTests ? testKeys : null
        const ids = keepMessages ? messageIds : null
        pendingTests += testIds?.length ?? 0
        pendingMessages += messageKeys?.length ?? 0
        onCommit(() => {
          testIds?.forEach((id, i) => this.testKeys.set(id, keys![i]!))
          if (!messageKeys) return
          if (this.messageKeys.size + messageKeys.length > MESSAGE_KEY_CACHE) this.messageKeys.clear()
          messageKeys.forEach((k, i) => this.messageKeys.set(k, ids![i]!))
        })
      },
    }
  }

  /** Finds or creates the run. A plain SELECT first, so that known runs do not burn identity values. */
  private async claimRun(
    client: PgClient,
    { run, counts }: PreparedRun,
    now: string,
  ): Promise<{ key: number; at: number; created: boolean }> {
    const find = () =>
      client.query<{ id: number; at: number }>('SELECT id, at FROM runs WHERE run_id = $1', [run.runId])
    const found = await find()
    if (found.rows[0]) return { key: found.rows[0].id, at: found.rows[0].at, created: false }
    // The writer's own clock: its final check of the run's time compares against the same instant.
    const at = isoToMs(run.startedAt, Date.parse(now))
    // A run created here gets exactly this report's results, so its counts are known before they are written.
    const inserted = await client.query<{ id: number }>(
      `INSERT INTO runs (${RUN_COLUMNS}, total, passed, failed, skipped, flaky)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
         $20, $21, $22, $23, $24)
       ON CONFLICT (run_id) DO NOTHING RETURNING id`,
      [run.runId, ...runValues(run), now, at, counts.total, counts.passed, counts.failed, counts.skipped, counts.flaky],
    )
    if (inserted.rows[0]) return { key: inserted.rows[0].id, at, created: true }
    // Another transaction created it meanwhile; ON CONFLICT waited for it to commit, so a new snapshot sees it.
    const again = await find()
    if (!again.rows[0]) throw new InternalError(`run ${run.runId} conflicted but cannot be found`)
    return { key: again.rows[0].id, at: again.rows[0].at, created: false }
  }

  /** A later report of the same run fills what earlier ones left unknown; it never erases. */
  private async mergeRun(client: PgClient, key: number, run: RunMeta): Promise<boolean> {
    const { rowCount } = await client.query(
      `UPDATE runs SET branch = coalesce(branch, $1), revision = coalesce(revision, $2),
        pipeline_id = coalesce(pipeline_id, $3), pipeline_url = coalesce(pipeline_url, $4),
        job_id = coalesce(job_id, $5), job_url = coalesce(job_url, $6), artifacts_url = coalesce(artifacts_url, $7),
        job_status = coalesce($8, job_status), pipeline_status = coalesce($9, pipeline_status),
        runner_id = coalesce(runner_id, $10), env = $11::jsonb || env, started_at = coalesce(started_at, $12),
        finished_at = coalesce($13, finished_at), duration_ms = coalesce($14::double precision, duration_ms),
        status = CASE WHEN $15::text = 'interrupted' THEN 'interrupted' ELSE status END
       WHERE id = $16`,
      // runValues without the suite: a merge never moves a run to another suite.
      [...runValues(run).slice(1), key],
    )
    return rowCount === 1
  }

  private async replaceRun(client: PgClient, key: number, run: RunMeta, now: string): Promise<boolean> {
    const { rowCount } = await client.query(
      `UPDATE runs SET suite = $1, branch = $2, revision = $3, pipeline_id = $4, pipeline_url = $5, job_id = $6,
        job_url = $7, artifacts_url = $8, job_status = $9, pipeline_status = $10, runner_id = $11, env = $12,
        started_at = $13, finished_at = $14, duration_ms = $15, status = $16, uploaded_at = $17 WHERE id = $18`,
      [...runValues(run), now, key],
    )
    return rowCount === 1
  }

  /**
   * The key of every test given, in order. Uncached ones are selected first (so that known tests do not burn
   * identity values), the rest inserted in sorted order, and those a concurrent transaction inserted first are
   * selected again.
   */
  private async resolveTests(client: PgClient, refs: TestRef[]): Promise<Int32Array> {
    const keys = new Int32Array(refs.length)
    const missing: TestRef[] = []
    const where = new Map<string, number>()
    refs.forEach((t, i) => {
      const key = this.testKeys.get(t.testId)
      if (key === undefined) {
        missing.push(t)
        where.set(t.testId, i)
      } else keys[i] = key
    })
    if (missing.length === 0) return keys
    missing.sort((a, b) => compare(a.testId, b.testId))
    await this.upsertKeys(
      client,
      where,
      keys,
      'SELECT id, test_id AS k FROM tests WHERE test_id = ANY($1::text[])',
      `INSERT INTO tests (test_id, suite, module, name, file)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) ORDER BY 1
       ON CONFLICT (test_id) DO NOTHING RETURNING id, test_id AS k`,
      missing.map((t) => t.testId),
      (ids) => {
        const rows = missing.filter((t) => ids.has(t.testId))
        return [
          rows.map((t) => t.testId),
          rows.map((t) => t.suite),
          rows.map((t) => t.module),
          rows.map((t) => t.name),
          rows.map((t) => t.file),
        ]
      },
    )
    return keys
  }

  /** Same pattern as tests: messages are deduplicated by the hash of their text. */
  private async resolveMessages(client: PgClient, messages: { key: string; text: string }[]): Promise<Int32Array> {
    const ids = new Int32Array(messages.length)
    const missing: { key: string; text: string }[] = []
    const where = new Map<string, number>()
    messages.forEach((m, i) => {
      const id = this.messageKeys.get(m.key)
      if (id === undefined) {
        missing.push(m)
        where.set(m.key, i)
      } else ids[i] = id
    })
    if (missing.length === 0) return ids
    missing.sort((a, b) => compare(a.key, b.key))
    await this.upsertKeys(
      client,
      where,
      ids,
      'SELECT id, key AS k FROM messages WHERE key = ANY($1::text[])',
      `INSERT INTO messages (key, text) SELECT * FROM unnest($1::text[], $2::text[]) ORDER BY 1
       ON CONFLICT (key) DO NOTHING RETURNING id, key AS k`,
      missing.map((m) => m.key),
      (keys) => {
        const rows = missing.filter((m) => keys.has(m.key))
        return [rows.map((m) => m.key), rows.map((m) => m.text)]
      },
    )
    return ids
  }

  /**
   * Select, insert what is still missing (ON CONFLICT DO NOTHING: a concurrent insert of the same key waits for
   * that transaction, then yields nothing), and select again what the race took. Fills `out` at `where[key]`.
   */
  private async upsertKeys(
    client: PgClient,
    where: Map<string, number>,
    out: Int32Array,
    select: string,
    insert: string,
    sortedKeys: string[],
    insertValues: (keys: Set<string>) => unknown[],
  ): Promise<void> {
    const pending = new Set(sortedKeys)
    const take = (rows: { id: number; k: string }[]) => {
      for (const r of rows) {
        out[where.get(r.k)!] = r.id
        pending.delete(r.k)
      }
    }
    take((await client.query<{ id: number; k: string }>(select, [sortedKeys])).rows)
    if (pending.size === 0) return
    take((await client.query<{ id: number; k: string }>(insert, insertValues(pending))).rows)
    if (pending.size === 0) return
    take((await client.query<{ id: number; k: string }>(select, [[...pending]])).rows)
    if (pending.size) throw new InternalError(`no key for ${[...pending][0]} after insert`)
  }

  /** Staging tables live for the connection; ON COMMIT DELETE ROWS empties them after every report. */
  private async ensureStaging(client: PgClient, onCommit: OnCommit): Promise<void> {
    if (this.staged.has(client)) return
    await client.query(`${STAGE_RESULTS}; ${STAGE_ATTEMPTS}`)
    // A rollback undoes the CREATE too, so the connection counts as staged only once this commits.
    onCommit(() => this.staged.add(client))
  }

  /**
   * Writes the results of the claimed runs. A run this transaction created cannot have rows from anyone else (its
   * key is invisible outside until commit, and repeats within the report were dropped), so its rows are COPYed
   * straight into place: that is most reports, at the speed of a bare COPY. Rows for a run that already existed
   * (another file of the same run, or --replace) go through staging and INSERT … ON CONFLICT DO NOTHING, so that
   * overlapping reports merge without double-counting, and only results actually inserted bring their attempts.
   */
  private async writeResults(
    client: PgClient,
    onCommit: OnCommit,
    active: ActiveRun[],
    testKeys: Int32Array,
    messageIds: Int32Array,
  ): Promise<WrittenResults> {
    const counts = new Map<number, { results: number; attempts: number }>()
    const inserted: { run: number; test: number }[] = []
    const fresh = active.filter((a) => a.created)
    const merging = active.filter((a) => !a.created)
    const resultRows = function* (runs: ActiveRun[]) {
      for (const a of runs) yield* resultCopyRows(a.prepared, a.at, a.key, testKeys, messageIds)
    }
    const attemptRows = function* (runs: ActiveRun[]) {
      for (const a of runs) yield* attemptCopyRows(a.prepared, a.key, testKeys, messageIds)
    }
    const hasAttempts = (runs: ActiveRun[]) => runs.some((a) => a.prepared.attempts.length > 0)

    if (fresh.length) {
      await this.copy(client, `results (${RESULT_INSERT_COLUMNS})`, resultRows(fresh))
      if (hasAttempts(fresh)) await this.copy(client, `attempts (${ATTEMPT_COLUMNS})`, attemptRows(fresh))
      for (const a of fresh) {
        counts.set(a.key, { results: a.prepared.results.length, attempts: attemptCount(a.prepared) })
      }
    }
    if (merging.length === 0) return { counts, inserted }

    await this.ensureStaging(client, onCommit)
    await this.copy(client, 'fw_stage_results', resultRows(merging))
    const attempts = hasAttempts(merging)
    if (attempts) await this.copy(client, 'fw_stage_attempts', attemptRows(merging))
    const replacing = merging.filter((a) => a.replacing).map((a) => a.key)
    if (replacing.length) {
      await client.query(
        `DELETE FROM results r USING fw_stage_results s
         WHERE s.run = ANY($1::integer[]) AND r.run = s.run AND r.test = s.test`,
        [replacing],
      )
      await client.query(
        `DELETE FROM attempts a USING fw_stage_results s
         WHERE s.run = ANY($1::integer[]) AND a.run = s.run AND a.test = s.test`,
        [replacing],
      )
    }
    // Sorted, so that two merges into the same run wait for each other in one order and never deadlock.
    const { rows } = await client.query<{ run: number; test: number; attempts: number }>(
      `WITH ins AS (
         INSERT INTO results (${RESULT_INSERT_COLUMNS})
         SELECT ${RESULT_INSERT_COLUMNS} FROM fw_stage_results ORDER BY run, test
         ON CONFLICT DO NOTHING RETURNING run, test, attempts
       )${
         attempts
           ? `, att AS (
         INSERT INTO attempts (${ATTEMPT_COLUMNS})
         SELECT a.run, a.test, a.retry, a.status, a.duration_ms, a.message, a.stack
         FROM fw_stage_attempts a JOIN ins USING (run, test)
         ON CONFLICT DO NOTHING
       )`
           : ''
       }
       SELECT run, test, attempts FROM ins`,
    )
    for (const r of rows) {
      const c = counts.get(r.run) ?? { results: 0, attempts: 0 }
      c.results++
      c.attempts += r.attempts
      counts.set(r.run, c)
      inserted.push({ run: r.run, test: r.test })
    }
    return { counts, inserted }
  }

  private async copy(client: PgClient, target: string, rows: Iterable<string>): Promise<void> {
    const stream = client.query(this.driver.copyFrom(`COPY ${target} FROM STDIN`))
    await pipeline(Readable.from(copyChunks(rows)), stream)
  }

  private async transaction<T>(fn: (client: PgClient, onCommit: OnCommit) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    const committed: (() => void)[] = []
    try {
      await client.query('BEGIN')
      const value = await fn(client, (f) => committed.push(f))
      await client.query('COMMIT')
      client.release()
      for (const f of committed) f()
      return value
    } catch (error) {
      try {
        await client.query('ROLLBACK')
        client.release()
      } catch {
        client.release(true)
      }
      throw error
    }
  }

  private wrap(what: string, error: unknown): Error {
    // Parse and limit errors raised while the stream was read keep their code (exit 2, HTTP 422).
    if (error instanceof FlakewatchError) return error
    return new StoreError(`${what} failed on ${this.location}: ${(error as Error).message}`, { cause: error })
  }

  // ---------------------------------------------------------------------------------------------------- reads

  private async runsFor(
    db: PgQueryable,
    filter: HistoryFilter | RunFilter,
    limit?: number,
  ): Promise<Map<number, RunInfo>> {
    const p = new Params()
    const where = runWhere(filter, p)
    const { rows } = await db.query<RunRow & { id: number }>(
      `SELECT id, ${RUN_COLUMNS} FROM runs ${where} ORDER BY at DESC, id DESC LIMIT ${p.add(limit ?? null)}`,
      p.values,
    )
    const map = new Map<number, RunInfo>()
    for (const row of rows) map.set(row.id, runInfoFromRow(row))
    return map
  }

  private async testsFor(db: PgQueryable, testIds?: string[]): Promise<Map<number, TestRef>> {
    const { rows } = await db.query<[number, string, string, string, string, string | null]>({
      text: `SELECT id, test_id, suite, module, name, file FROM tests
             ${testIds ? 'WHERE test_id = ANY($1::text[])' : ''}`,
      values: testIds ? [testIds] : [],
      rowMode: 'array',
    })
    const map = new Map<number, TestRef>()
    for (const [id, testId, suite, module, name, file] of rows) map.set(id, { testId, suite, module, name, file })
    return map
  }

  /**
   * The texts of the given message ids, from the shared cache or one query. The map returned is the caller's own,
   * so that another operation trimming the cache meanwhile (a scan yields between rows) takes nothing from it.
   */
  private async messagesFor(db: PgQueryable, ids: (number | null)[]): Promise<Map<number, string>> {
    const texts = new Map<number, string>()
    const missing: number[] = []
    for (const id of ids) {
      if (id === null || texts.has(id)) continue
      const text = this.messageTexts.get(id)
      if (text === undefined) missing.push(id)
      else texts.set(id, text)
    }
    if (missing.length === 0) return texts
    const { rows } = await db.query<{ id: number; text: string }>(
      'SELECT id, text FROM messages WHERE id = ANY($1::integer[])',
      [[...new Set(missing)]],
    )
    let chars = 0
    for (const r of rows) chars += r.text.length
    if (this.messageTexts.size + rows.length > MESSAGE_CACHE || this.messageTextChars + chars > MESSAGE_CACHE_CHARS) {
      this.messageTexts.clear()
      this.messageTextChars = 0
    }
    for (const r of rows) {
      texts.set(r.id, r.text)
      // One query's texts alone may be over the bound: those are the caller's, not the cache's.
      if (r.text.length + this.messageTextChars > MESSAGE_CACHE_CHARS) continue
      this.messageTexts.set(r.id, r.text)
      this.messageTextChars += r.text.length
    }
    return texts
  }

  private entryFromRow(row: ResultRow, run: RunInfo, messages: Map<number, string>): HistoryEntry {
    return {
      run,
      status: statusFromCode(row[2] & 3),
      flakyOnRetry: (row[2] & FLAKY) !== 0,
      durationMs: row[3],
      attempts: row[4],
      failedAttempts: row[5],
      failedAttemptsMs: row[6],
      errorType: row[7],
      message: row[8] === null ? null : (messages.get(row[8]) ?? ''),
      healingOccurred: (row[2] & HEALING) !== 0,
      position: row[9],
    }
  }

  /**
   * A server-side cursor in a read-only REPEATABLE READ transaction on a dedicated connection: runs, tests and
   * results come from one snapshot, and only one page of rows is in memory at a time, however big the table.
   */
  async *scanHistory(filter: HistoryFilter = {}): AsyncIterable<TestHistory> {
    let client: PgClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw this.wrap('history scan', error)
    }
    let broken: unknown = undefined
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const runs = await this.runsFor(client, filter, filter.lastRuns)
      if (runs.size === 0) return
      const tests = await this.testsFor(client, filter.testIds)
      if (tests.size === 0) return
      const p = new Params()
      const where: string[] = []
      if (narrowed(filter)) {
        // Rows outside the selected runs are dropped below; the time bounds let the index skip most of them.
        let minAt = Infinity
        let maxAt = -Infinity
        for (const r of runs.values()) {
          minAt = Math.min(minAt, r.at)
          maxAt = Math.max(maxAt, r.at)
        }
        where.push(`at BETWEEN ${p.add(minAt)} AND ${p.add(maxAt)}`)
      }
      if (filter.testIds) where.push(`test = ANY(${p.add([...tests.keys()])}::integer[])`)
      await client.query(
        `DECLARE fw_scan NO SCROLL CURSOR FOR SELECT ${RESULT_COLUMNS} FROM results
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY test, at, run`,
        p.values,
      )
      let current: TestHistory | null = null
      let currentKey = -1
      const fetchPage = () => {
        const page = client.query<ResultRow>({ text: `FETCH ${SCAN_PAGE} FROM fw_scan`, rowMode: 'array' })
        // Awaited in the next turn of the loop, or never when the consumer stops early (the ROLLBACK below waits
        // for it on the same connection): its failure must not go unhandled meanwhile.
        page.catch(() => undefined)
        return page
      }
      let next = fetchPage()
      for (;;) {
        const { rows } = await next
        if (rows.length === 0) break
        // The server reads the next page while this one is analysed: the scan's two halves on two cores.
        if (rows.length === SCAN_PAGE) next = fetchPage()
        const messages = await this.messagesFor(
          client,
          rows.map((r) => r[8]),
        )
        for (const row of rows) {
          const testKey = row[0]
          if (testKey !== currentKey) {
            if (current && current.entries.length) yield current
            currentKey = testKey
            const ref = tests.get(testKey)
            current = ref ? { test: ref, entries: [] } : null
          }
          const run = current && runs.get(row[1])
          if (run) current!.entries.push(this.entryFromRow(row, run, messages))
        }
        if (rows.length < SCAN_PAGE) break
      }
      if (current && current.entries.length) yield current
    } catch (error) {
      broken = error
      throw this.wrap('history scan', error)
    } finally {
      // Also reached when the consumer stops early: the read-only transaction is simply abandoned.
      try {
        await client.query('ROLLBACK')
        client.release()
      } catch {
        client.release(broken instanceof Error ? broken : true)
      }
    }
  }

  async testsInRuns(runIds: string[]): Promise<string[]> {
    try {
      const { rows } = await this.db.query<{ test_id: string }>(
        `SELECT DISTINCT t.test_id FROM runs r JOIN results s ON s.run = r.id JOIN tests t ON t.id = s.test
         WHERE r.run_id = ANY($1::text[])`,
        [[...new Set(runIds)]],
      )
      return rows.map((r) => r.test_id)
    } catch (error) {
      throw this.wrap('tests of runs', error)
    }
  }

  async getTestHistory(testId: string, opts: { limit?: number } = {}): Promise<TestHistory | null> {
    const t = await this.db.query<{ id: number; test_id: string } & Omit<TestRef, 'testId'>>(
      'SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = $1',
      [testId],
    )
    const test = t.rows[0]
    if (!test) return null
    const { rows } = await this.db.query<ResultRow>({
      text: `SELECT ${RESULT_COLUMNS} FROM results WHERE test = $1 ORDER BY at DESC, run DESC LIMIT $2`,
      values: [test.id, opts.limit ?? 1000],
      rowMode: 'array',
    })
    const runKeys = [...new Set(rows.map((r) => r[1]))]
    const runs = new Map<number, RunInfo>()
    if (runKeys.length) {
      const r = await this.db.query<RunRow & { id: number }>(
        `SELECT id, ${RUN_COLUMNS} FROM runs WHERE id = ANY($1::integer[])`,
        [runKeys],
      )
      for (const row of r.rows) runs.set(row.id, runInfoFromRow(row))
    }
    const messages = await this.messagesFor(
      this.db,
      rows.map((r) => r[8]),
    )
    return {
      test: { testId: test.test_id, suite: test.suite, module: test.module, name: test.name, file: test.file },
      entries: rows.reverse().map((row) => this.entryFromRow(row, runs.get(row[1])!, messages)),
    }
  }

  async getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    const { rows } = await this.db.query<{
      retry: number
      status: number
      duration_ms: number | null
      message: number | null
      stack: number | null
    }>(
      `SELECT a.retry, a.status, a.duration_ms, a.message, a.stack FROM attempts a
       JOIN tests t ON t.id = a.test JOIN runs r ON r.id = a.run
       WHERE t.test_id = $1 AND r.run_id = $2 ORDER BY a.retry`,
      [testId, runId],
    )
    if (rows.length > 0) {
      const texts = await this.messagesFor(
        this.db,
        rows.flatMap((r) => [r.message, r.stack]),
      )
      const text = (id: number | null) => (id === null ? null : (texts.get(id) ?? ''))
      return rows.map((r) => ({
        retry: r.retry,
        status: statusFromCode(r.status),
        durationMs: r.duration_ms,
        message: text(r.message),
        stack: text(r.stack),
      }))
    }
    // A single passing attempt is implied by its result row.
    const res = await this.db.query<{ status: number; duration_ms: number | null; message: number | null }>(
      `SELECT s.status, s.duration_ms, s.message FROM results s
       JOIN tests t ON t.id = s.test JOIN runs r ON r.id = s.run
       WHERE t.test_id = $1 AND r.run_id = $2`,
      [testId, runId],
    )
    const one = res.rows[0]
    if (!one) return []
    const texts = await this.messagesFor(this.db, [one.message])
    return [
      {
        retry: 0,
        status: statusFromCode(one.status),
        durationMs: one.duration_ms,
        message: one.message === null ? null : (texts.get(one.message) ?? ''),
        stack: null,
      },
    ]
  }

  async listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const p = new Params()
    const where = runWhere(filter, p)
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs ${where} ORDER BY at DESC, id DESC
       LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows.map(runFromRow)
  }

  async getRun(runId: string): Promise<Run | null> {
    const { rows } = await this.db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId])
    return rows[0] ? runFromRow(rows[0]) : null
  }

  async runSummaries(filter: RunFilter = {}): Promise<RunSummary[]> {
    const p = new Params()
    const where = runWhere(filter, p)
    const { rows } = await this.db.query<RunSummary>(
      `SELECT run_id AS "runId", at, total, passed, failed, skipped, flaky FROM runs ${where}
       ORDER BY at DESC, id DESC LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows
  }

  async runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    const { rows } = await this.db.query<WrittenRun>(
      `SELECT run_id AS "runId", written_at AS "writtenAt" FROM runs WHERE written_at >= $1
       ORDER BY written_at DESC, id DESC LIMIT $2`,
      [Math.floor(sinceMs), Math.min(limit, WRITTEN_RUNS_MAX)],
    )
    return rows
  }

  async listTests(filter: TestFilter = {}): Promise<TestRef[]> {
    const p = new Params()
    const where: string[] = []
    if (filter.suite) where.push(`suite = ${p.add(filter.suite)}`)
    if (filter.modules) where.push(`module = ANY(${p.add(filter.modules)}::text[])`)
    // strpos, not LIKE: the search is a plain substring, with no wildcard to escape.
    if (filter.search) where.push(`strpos(lower(test_id), ${p.add(filter.search.toLowerCase())}) > 0`)
    const { rows } = await this.db.query<TestRef>(
      `SELECT test_id AS "testId", suite, module, name, file FROM tests
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY test_id LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows
  }

  async getTest(testId: string): Promise<TestRef | null> {
    const { rows } = await this.db.query<TestRef>(
      'SELECT test_id AS "testId", suite, module, name, file FROM tests WHERE test_id = $1',
      [testId],
    )
    return rows[0] ?? null
  }

  async stats(): Promise<StoreStats> {
    const { rows } = await this.db.query<StoreStats>(
      `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM tests) AS tests,
         r.results, r.attempts, s.lo AS "oldestRunAt", s.hi AS "newestRunAt"
       FROM (SELECT count(*) AS results, coalesce(sum(attempts), 0)::bigint AS attempts FROM results) r,
            (SELECT min(at) AS lo, max(at) AS hi FROM runs) s`,
    )
    return rows[0]!
  }

  // ---------------------------------------------------------------------------------------------------- quarantine

  async listQuarantines(): Promise<QuarantineRecord[]> {
    const { rows } = await this.db.query<QuarantineRow>('SELECT * FROM quarantine ORDER BY test_id')
    return rows.map(quarantineFromRow)
  }

  async getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    const { rows } = await this.db.query<QuarantineRow>('SELECT * FROM quarantine WHERE test_id = $1', [testId])
    return rows[0] ? quarantineFromRow(rows[0]) : null
  }

  async putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    try {
      await this.transaction(async (client) => {
        await client.query(
          `INSERT INTO quarantine (test_id, reason, owner, issue_url, created_at, created_by, expires_at, source)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (test_id) DO UPDATE SET reason = EXCLUDED.reason, owner = EXCLUDED.owner,
             issue_url = EXCLUDED.issue_url, created_at = EXCLUDED.created_at, created_by = EXCLUDED.created_by,
             expires_at = EXCLUDED.expires_at, source = EXCLUDED.source`,
          [
            record.testId,
            record.reason,
            record.owner,
            record.issueUrl,
            record.createdAt,
            record.createdBy,
            record.expiresAt,
            record.source,
          ],
        )
        await appendPostgresAudit(client, quarantineAuditInput(record.testId, audit, record))
      })
    } catch (error) {
      throw this.wrap('quarantine', error)
    }
  }

  async deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    try {
      return await this.transaction(async (client) => {
        const { rowCount } = await client.query('DELETE FROM quarantine WHERE test_id = $1', [testId])
        if (rowCount) await appendPostgresAudit(client, quarantineAuditInput(testId, audit, null))
        return Boolean(rowCount)
      })
    } catch (error) {
      throw this.wrap('unquarantine', error)
    }
  }

  async listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const entries = await listPostgresAudit(this.db, {
      kind: 'quarantine',
      subject: filter.testId,
      limit: filter.limit,
    })
    return entries.map(quarantineAuditFromEntry)
  }

  async listQuarantineRules(): Promise<QuarantineRule[]> {
    const { rows } = await this.db.query<RuleRow>('SELECT * FROM quarantine_rules ORDER BY id')
    return rows.map(ruleFromRow)
  }

  async putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    try {
      await this.transaction(async (client) => {
        await client.query(
          `INSERT INTO quarantine_rules (id, match, reason, owner, issue_url, created_at, created_by, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (id) DO UPDATE SET match = EXCLUDED.match, reason = EXCLUDED.reason, owner = EXCLUDED.owner,
             issue_url = EXCLUDED.issue_url, created_at = EXCLUDED.created_at, created_by = EXCLUDED.created_by,
             expires_at = EXCLUDED.expires_at`,
          ruleToRow(rule),
        )
        await appendPostgresAudit(client, ruleAuditInput(rule.id, audit, rule))
      })
    } catch (error) {
      throw this.wrap('save quarantine rule', error)
    }
  }

  async deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    try {
      return await this.transaction(async (client) => {
        const { rowCount } = await client.query('DELETE FROM quarantine_rules WHERE id = $1', [id])
        if (rowCount) await appendPostgresAudit(client, ruleAuditInput(id, audit, null))
        return Boolean(rowCount)
      })
    } catch (error) {
      throw this.wrap('remove quarantine rule', error)
    }
  }

  async listRuleAudit(filter: { ruleId?: string; limit?: number } = {}): Promise<RuleAuditEntry[]> {
    const entries = await listPostgresAudit(this.db, { kind: 'rule', subject: filter.ruleId, limit: filter.limit })
    return entries.map(ruleAuditFromEntry)
  }

  async appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    try {
      return await this.transaction((client) => appendPostgresAudit(client, entry))
    } catch (error) {
      throw this.wrap('audit', error)
    }
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return listPostgresAudit(this.db, filter)
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return postgresAuditChainPage(this.db, afterId, limit)
  }

  auditHead(): Promise<AuditHead> {
    return readPostgresAuditHead(this.db)
  }

  // ---------------------------------------------------------------------------------------------------- healing

  async putFingerprint(fp: Fingerprint): Promise<void> {
    await this.db.query(
      `INSERT INTO fingerprints (test_id, locator, data, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (test_id, locator) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at`,
      [fp.testId, fp.locator, JSON.stringify(fp.data), fp.updatedAt],
    )
  }

  async getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    const { rows } = await this.db.query<{ data: unknown; updated_at: string }>(
      'SELECT data, updated_at FROM fingerprints WHERE test_id = $1 AND locator = $2',
      [testId, locator],
    )
    const row = rows[0]
    return row ? { testId, locator, data: row.data, updatedAt: row.updated_at } : null
  }

  async appendHeal(heal: HealRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO heal_log (test_id, old_locator, new_locator, score, breakdown, url, at, run_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        heal.testId,
        heal.oldLocator,
        heal.newLocator,
        heal.score,
        JSON.stringify(heal.breakdown),
        heal.url,
        heal.at,
        heal.runId,
      ],
    )
  }

  async listHeals(filter: HealFilter = {}): Promise<HealRecord[]> {
    const p = new Params()
    const where: string[] = []
    if (filter.testId) where.push(`test_id = ${p.add(filter.testId)}`)
    if (filter.since) where.push(`at >= ${p.add(filter.since)}`)
    const { rows } = await this.db.query<{
      id: number
      test_id: string
      old_locator: string
      new_locator: string
      score: number
      breakdown: Record<string, number>
      url: string | null
      at: string
      run_id: string | null
    }>(
      `SELECT * FROM heal_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY id DESC LIMIT ${p.add(filter.limit ?? null)}`,
      p.values,
    )
    return rows.map((r) => ({
      id: r.id,
      testId: r.test_id,
      oldLocator: r.old_locator,
      newLocator: r.new_locator,
      score: r.score,
      breakdown: r.breakdown,
      url: r.url,
      at: r.at,
      runId: r.run_id,
    }))
  }

  // ---------------------------------------------------------------------------------------------------- upkeep

  async prune(before: number, opts: { batchSize?: number } = {}): Promise<{ runs: number; results: number }> {
    const batchSize = opts.batchSize ?? 50
    let runs = 0
    let results = 0
    try {
      for (;;) {
        const removed = await this.transaction(async (client) => {
          // SKIP LOCKED: a run being merged right now is left for the next prune instead of blocking on it.
          const { rows } = await client.query<{ id: number }>(
            'SELECT id FROM runs WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED',
            [before, batchSize],
          )
          const ids = rows.map((r) => r.id)
          if (ids.length === 0) return null
          const res = await client.query('DELETE FROM results WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM attempts WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM reports WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM runs WHERE id = ANY($1::integer[])', [ids])
          return { runs: ids.length, results: res.rowCount ?? 0 }
        })
        if (!removed) break
        runs += removed.runs
        results += removed.results
      }
    } catch (error) {
      throw this.wrap('prune', error)
    }
    return { runs, results }
  }

  /** Runs a SQL statement and returns its rows; for tests, benchmarks and diagnostics only. */
  async rawQuery<R = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<R[]> {
    const { rows } = await this.pool.query<R>(sql, params)
    return rows
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

function runValues(run: RunMeta) {
  return [
    run.suite,
    run.branch,
    run.revision,
    run.pipelineId,
    run.pipelineUrl,
    run.jobId,
    run.jobUrl,
    run.artifactsUrl,
    run.jobStatus,
    run.pipelineStatus,
    run.runnerId,
    JSON.stringify(run.env),
    run.startedAt,
    run.finishedAt,
    run.durationMs,
    run.status,
  ]
}

/** Whether a history filter selects fewer runs than all. */
function narrowed(filter: HistoryFilter): boolean {
  const bounds = [filter.since, filter.until, filter.lastRuns]
  return Boolean(filter.suite || filter.branch) || bounds.some((v) => v !== undefined)
}

function runWhere(filter: HistoryFilter | RunFilter, p: Params): string {
  const where: string[] = []
  if (filter.suite) where.push(`suite = ${p.add(filter.suite)}`)
  if (filter.branch) where.push(`branch = ${p.add(filter.branch)}`)
  if (filter.since !== undefined) where.push(`at >= ${p.add(filter.since)}`)
  if (filter.until !== undefined) where.push(`at <= ${p.add(filter.until)}`)
  return where.length ? `WHERE ${where.join(' AND ')}` : ''
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}
