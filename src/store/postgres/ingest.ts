import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { InternalError } from '../../errors.js'
import type { RunMeta, TestRef } from '../../model.js'
import { isoToMs } from '../codes.js'
import type { IngestOptions, ReportBatch, ReportStream, ResultStore, RunOutcome } from '../store.js'
import { streamOfBatch } from '../store.js'
import type { OnCommit, PgConnection } from './connection.js'
import { copyChunks } from './copy-text.js'
import type { PgClient } from './driver.js'
import type { PgPartitions } from './partitions.js'
import { attemptCopyRows, attemptCount, resultCopyRows, type PreparedRun, type RunCounts } from './prepare-batch.js'
import { PgReportWriter } from './report-writer.js'
import { RUN_COLUMNS } from './sql.js'

/** Deadlocks and serialization failures are transient: the whole report is retried this many times. */
const MAX_ATTEMPTS = 5
const RETRYABLE = new Set(['40P01', '40001', 'FW_RUN_GONE'])
/** Test keys cached per store: a report of a million new tests must not keep a million ids in memory. */
const TEST_KEY_CACHE = 100_000
/** Message keys cached likewise. */
const MESSAGE_KEY_CACHE = 100_000

/** What one write of results did: per run key, results and attempts stored; which merged rows went in. */
export interface WrittenResults {
  counts: Map<number, { results: number; attempts: number }>
  /** For runs that already existed: the (run, test) rows actually inserted (the rest were another report's). */
  inserted: { run: number; test: number }[]
}

/** A run this transaction writes results for. */
export interface ActiveRun {
  prepared: PreparedRun
  key: number
  at: number
  created: boolean
  replacing: boolean
}

/** In table order: what COPY and INSERT write. */
const RESULT_INSERT_COLUMNS =
  'at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky, healing, error_type, position'
/** Staged attempts carry no `at`: they take their result's. */
const ATTEMPT_COLUMNS = 'run, test, retry, status, duration_ms, message, stack'
const ATTEMPT_INSERT_COLUMNS = `at, ${ATTEMPT_COLUMNS}`
const STAGE_RESULTS = `CREATE TEMP TABLE fw_stage_results (at bigint, duration_ms double precision,
  failed_ms double precision, test integer, run integer, attempts integer, failed_attempts integer, message integer,
  status smallint, flaky boolean, healing boolean, error_type text, position integer) ON COMMIT DELETE ROWS`
const STAGE_ATTEMPTS = `CREATE TEMP TABLE fw_stage_attempts (run integer, test integer, retry integer, status smallint,
  duration_ms double precision, message integer, stack integer) ON COMMIT DELETE ROWS`

/**
 * Storing reports in a PostgreSQL store: runs claimed in a global order, test and message keys upserted, results
 * COPYed (or staged and merged), one transaction per report.
 */
export class PgIngest implements ResultStore {
  /** Test and message keys are never deleted (prune keeps them), so once committed they can be cached for good. */
  private readonly testKeys = new Map<string, number>()
  private readonly messageKeys = new Map<string, number>()
  /** Pool clients that already have the session's staging tables. */
  private readonly staged = new WeakSet<PgClient>()

  constructor(
    private readonly conn: PgConnection,
    private readonly partitions: PgPartitions,
  ) {}

  async ingestReport(batch: ReportBatch, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    // Before the transaction, in transactions of its own: partition DDL must not hold a report's locks.
    await this.partitions.ensureAhead(Date.now())
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
        throw this.conn.wrap('ingest', error)
      }
    }
  }

  /**
   * One streamed report in one transaction: each chunk is COPYed (or staged and merged) as it arrives, so memory
   * follows the chunk. Runs are claimed as the stream names them. Not retried: the stream is read once.
   */
  async ingestStream(stream: ReportStream, opts: IngestOptions = {}): Promise<RunOutcome[]> {
    await this.partitions.ensureAhead(Date.now())
    try {
      return await this.streamTx(stream, opts, [])
    } catch (error) {
      throw this.conn.wrap('ingest', error)
    }
  }

  private streamTx(stream: ReportStream, opts: IngestOptions, claimFirst: RunMeta[]): Promise<RunOutcome[]> {
    return this.conn.transaction(async (client, onCommit) => {
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
    const attemptRows = function* (runs: ActiveRun[], withAt: boolean) {
      for (const a of runs) yield* attemptCopyRows(a.prepared, withAt ? a.at : null, a.key, testKeys, messageIds)
    }
    const hasAttempts = (runs: ActiveRun[]) => runs.some((a) => a.prepared.attempts.length > 0)

    if (fresh.length) {
      await this.copy(client, `results (${RESULT_INSERT_COLUMNS})`, resultRows(fresh))
      if (hasAttempts(fresh)) await this.copy(client, `attempts (${ATTEMPT_INSERT_COLUMNS})`, attemptRows(fresh, true))
      for (const a of fresh) {
        counts.set(a.key, { results: a.prepared.results.length, attempts: attemptCount(a.prepared) })
      }
    }
    if (merging.length === 0) return { counts, inserted }

    await this.ensureStaging(client, onCommit)
    await this.copy(client, 'fw_stage_results', resultRows(merging))
    const attempts = hasAttempts(merging)
    if (attempts) await this.copy(client, 'fw_stage_attempts', attemptRows(merging, false))
    const replacing = merging.filter((a) => a.replacing).map((a) => a.key)
    if (replacing.length) {
      await client.query(
        `DELETE FROM results r USING fw_stage_results s
         WHERE s.run = ANY($1::integer[]) AND r.run = s.run AND r.test = s.test AND r.at = s.at`,
        [replacing],
      )
      await client.query(
        `DELETE FROM attempts a USING fw_stage_results s
         WHERE s.run = ANY($1::integer[]) AND a.run = s.run AND a.test = s.test AND a.at = s.at`,
        [replacing],
      )
    }
    // Sorted, so that two merges into the same run wait for each other in one order and never deadlock. The key
    // (run, test, at) is unique per partition, and a run's rows share its `at`, so one partition holds them all.
    const { rows } = await client.query<{ run: number; test: number; attempts: number }>(
      `WITH ins AS (
         INSERT INTO results (${RESULT_INSERT_COLUMNS})
         SELECT ${RESULT_INSERT_COLUMNS} FROM fw_stage_results ORDER BY run, test
         ON CONFLICT DO NOTHING RETURNING run, test, attempts, at
       )${
         attempts
           ? `, att AS (
         INSERT INTO attempts (${ATTEMPT_INSERT_COLUMNS})
         SELECT ins.at, a.run, a.test, a.retry, a.status, a.duration_ms, a.message, a.stack
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
    const stream = client.query(this.conn.driver.copyFrom(`COPY ${target} FROM STDIN`))
    await pipeline(Readable.from(copyChunks(rows)), stream)
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

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}
