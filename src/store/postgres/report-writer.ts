import { InternalError } from '../../errors.js'
import { foldAttempts, type Repeatable } from '../../fold-attempts.js'
import type { Attempt, Result, RunMeta } from '../../model.js'
import { clip, isoToMs, messageKey, statusCode, statusFromCode } from '../codes.js'
import { attemptLimit, checkAttempts, Seen, SeenTests, type RunState } from '../report-state.js'
import { attemptsToStore, attemptSummary, storedPosition } from '../rows.js'
import { unpackRunBatch, type AnyRunBatch } from '../packed-results.js'
import type { IngestOptions, ReportStream, RunOutcome } from '../store.js'
import { markRunsStalePg } from './analyses.js'
import type { ActiveRun, PgIngest } from './ingest.js'
import { prepareBatch, type PreparedRun } from './prepare-batch.js'

type Parts = ReturnType<PgIngest['ingestParts']>

interface PgRunState extends RunState {
  /** The duplicate check of this report against this run is done (the claim row is written at the end). */
  claimed: boolean
}

/**
 * Writes one streamed report inside an open PostgreSQL transaction, chunk by chunk: the chunk's tests and
 * messages are resolved in one round trip each, new rows of a run this transaction created are COPYed straight
 * in, rows of an existing run go through staging and INSERT … ON CONFLICT DO NOTHING, and a test the report
 * repeats is read back and folded. Per run it keeps integers and one byte per test.
 */
export class PgReportWriter {
  private readonly runs = new Map<string, PgRunState>()
  private readonly now = Date.now()
  private readonly nowIso = new Date(this.now).toISOString()
  private readonly maxAttempts: number

  constructor(
    private readonly parts: Parts,
    private readonly stream: ReportStream,
    private readonly opts: IngestOptions,
  ) {
    this.maxAttempts = attemptLimit(opts)
  }

  /** Claims runs known up front, in the order given (run-id order: the global lock order). */
  async claimAll(runs: RunMeta[]): Promise<void> {
    for (const run of runs) if (!this.runs.has(run.runId)) await this.claim(run)
  }

  /**
   * Finds or creates the run, and takes the report's claim on it: of two concurrent ingests of one report, the
   * second waits here for the first to commit, then finds the claim taken and stores nothing.
   */
  private async claim(run: RunMeta): Promise<PgRunState> {
    const { client } = this.parts
    const { key, at, created } = await this.parts.claimRun(run, this.nowIso)
    const onConflict = this.opts.replace
      ? 'DO UPDATE SET file = EXCLUDED.file, ingested_at = EXCLUDED.ingested_at'
      : 'DO NOTHING'
    const claimed = await client.query(
      `INSERT INTO reports (run, content_hash, file, ingested_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (run, content_hash) ${onConflict} RETURNING run`,
      [key, this.stream.contentHash, this.stream.file, this.nowIso],
    )
    const state: PgRunState = {
      runId: run.runId,
      key,
      at,
      created,
      replacing: !created && Boolean(this.opts.replace),
      duplicate: claimed.rows.length === 0,
      claimedWith: run,
      seen: new SeenTests(),
      tests: 0,
      results: 0,
      attempts: 0,
      claimed: true,
    }
    this.runs.set(run.runId, state)
    if (state.duplicate || created) return state
    const updated = state.replacing
      ? await this.parts.replaceRun(key, run, this.nowIso)
      : await this.parts.mergeRun(key, run)
    // A prune deleted the run between finding it and locking it; a retry creates it afresh.
    if (!updated) throw Object.assign(new Error(`run ${run.runId} was pruned meanwhile`), { code: 'FW_RUN_GONE' })
    return state
  }

  async write(chunk: AnyRunBatch[]): Promise<void> {
    const batches: { state: PgRunState; results: Result[] }[] = []
    // COPY writes text built from objects: a packed batch is unpacked first.
    for (const { run, results } of chunk.map(unpackRunBatch)) {
      const state = this.runs.get(run.runId) ?? (await this.claim(run))
      if (state.duplicate || results.length === 0) continue
      batches.push({ state, results: this.foldWithinChunk(results) })
    }
    if (batches.length === 0) return
    const prepared = prepareBatch({ runs: batches.map((b) => ({ run: b.state.claimedWith, results: b.results })) })
    const testKeys = await this.parts.resolveTests(prepared.tests)
    const messageIds = await this.parts.resolveMessages(prepared.messages)
    this.parts.remember(prepared.tests, testKeys, prepared.messages, messageIds)

    const active: ActiveRun[] = []
    const repeats: { state: PgRunState; test: number; result: Result }[] = []
    prepared.runs.forEach((p, i) => {
      const state = batches[i]!.state
      const keep = new Uint8Array(p.results.length)
      p.results.forEach((r, j) => {
        const test = testKeys[p.test[j]!]!
        const seen = state.seen.get(test)
        if (seen === Seen.Written) repeats.push({ state, test, result: r })
        else if (seen === Seen.No) {
          keep[j] = 1
          state.tests++
          // A run this transaction created holds only this report's rows: every first occurrence goes in.
          if (state.created) state.seen.set(test, Seen.Written)
          else state.seen.set(test, Seen.Skipped)
        }
      })
      active.push({
        prepared: subset(p, keep),
        key: state.key,
        at: state.at,
        created: state.created,
        replacing: state.replacing,
      })
    })
    const written = await this.parts.writeResults(active, testKeys, messageIds)
    for (const state of new Set(batches.map((b) => b.state))) {
      const c = written.counts.get(state.key)
      if (c) {
        state.results += c.results
        state.attempts += c.attempts
      }
    }
    // Rows of an existing run that really went in are this report's; the rest belong to another report.
    for (const { run, test } of written.inserted) {
      for (const state of this.runs.values()) if (state.key === run) state.seen.set(test, Seen.Written)
    }
    for (const r of repeats) await this.foldStored(r.state, r.test, r.result)
  }

  /** Repeats inside one chunk are folded here, before anything is written. */
  private foldWithinChunk(results: Result[]): Result[] {
    const groups = new Map<string, Result[]>()
    let repeated = false
    for (const r of results) {
      if (r.attempts.length > this.maxAttempts) {
        checkAttempts(this.stream.file, r.test.testId, r.attempts.length, this.maxAttempts)
      }
      const g = groups.get(r.test.testId)
      if (g) {
        g.push(r)
        repeated = true
      } else groups.set(r.test.testId, [r])
    }
    if (!repeated) return results
    const out: Result[] = []
    for (const g of groups.values()) {
      if (g.length === 1) out.push(g[0]!)
      else {
        const folded = foldAttempts(g)
        checkAttempts(this.stream.file, g[0]!.test.testId, folded.attempts.length, this.maxAttempts)
        out.push({ ...folded, test: g[0]!.test, position: g[0]!.position })
      }
    }
    return out
  }

  /** A test this report already wrote for this run, again: read back, fold, write the fold in its place. */
  private async foldStored(state: PgRunState, test: number, r: Result): Promise<void> {
    const { client } = this.parts
    const earlier = await this.readBack(state, test)
    const folded = foldAttempts([earlier, r])
    // The test's place in the run is where it first ran.
    checkAttempts(this.stream.file, r.test.testId, folded.attempts.length, this.maxAttempts)
    // With `at`, each statement reaches only the run's partition.
    await client.query('DELETE FROM results WHERE run = $1 AND test = $2 AND at = $3', [state.key, test, state.at])
    await client.query('DELETE FROM attempts WHERE run = $1 AND test = $2 AND at = $3', [state.key, test, state.at])
    const result: Result = { ...folded, test: r.test, position: earlier.position }
    const sum = attemptSummary(result)
    const [message] = await this.messageIds([result.message])
    await client.query(
      `INSERT INTO results (at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky,
        healing, error_type, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        state.at,
        result.durationMs,
        sum.failedMs,
        test,
        state.key,
        sum.attempts,
        sum.failed,
        message,
        statusCode(result.status),
        result.flakyOnRetry,
        result.healingOccurred,
        result.errorType,
        storedPosition(result),
      ],
    )
    for (const a of attemptsToStore(result)) {
      const [m, st] = await this.messageIds([a.message, a.stack])
      await client.query(
        `INSERT INTO attempts (at, run, test, retry, status, duration_ms, message, stack)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [state.at, state.key, test, a.retry, statusCode(a.status), a.durationMs, m, st],
      )
    }
    state.attempts += sum.attempts - earlier.attempts.length
  }

  private async messageIds(texts: (string | null)[]): Promise<(number | null)[]> {
    const out: (number | null)[] = []
    for (const text of texts) {
      const clipped = clip(text?.includes('\0') ? text.replace(/\0/g, '\uFFFD') : text)
      if (clipped === null) {
        out.push(null)
        continue
      }
      const [id] = await this.parts.resolveMessages([{ key: messageKey(clipped), text: clipped }])
      out.push(id ?? null)
    }
    return out
  }

  private async readBack(state: PgRunState, test: number): Promise<Repeatable & { position: number | null }> {
    const { client } = this.parts
    const { rows } = await client.query<{
      status: number
      flaky: boolean
      duration_ms: number | null
      error_type: string | null
      message: string | null
      healing: boolean
      position: number | null
    }>(
      `SELECT r.status, r.flaky, r.duration_ms, r.error_type, m.text AS message, r.healing, r.position FROM results r
       LEFT JOIN messages m ON m.id = r.message WHERE r.run = $1 AND r.test = $2 AND r.at = $3`,
      [state.key, test, state.at],
    )
    const row = rows[0]
    if (!row) throw new InternalError(`result ${state.key}/${test} written by this report cannot be found`)
    const attempts = await client.query<{
      retry: number
      status: number
      duration_ms: number | null
      message: string | null
      stack: string | null
    }>(
      `SELECT a.retry, a.status, a.duration_ms, m.text AS message, s.text AS stack FROM attempts a
       LEFT JOIN messages m ON m.id = a.message LEFT JOIN messages s ON s.id = a.stack
       WHERE a.run = $1 AND a.test = $2 AND a.at = $3 ORDER BY a.retry`,
      [state.key, test, state.at],
    )
    const status = statusFromCode(row.status)
    const durationMs = row.duration_ms === null ? null : Number(row.duration_ms)
    const list: Attempt[] = attempts.rows.map((a) => ({
      retry: a.retry,
      status: statusFromCode(a.status),
      durationMs: a.duration_ms === null ? null : Number(a.duration_ms),
      message: a.message,
      stack: a.stack,
    }))
    return {
      position: row.position,
      status,
      flakyOnRetry: row.flaky,
      durationMs,
      errorType: row.error_type,
      message: row.message,
      stack: null,
      healingOccurred: row.healing,
      // A single attempt implied by its result row (a plain pass) is spelled out again.
      attempts: list.length > 0 ? list : [{ retry: 0, status, durationMs, message: row.message, stack: null }],
    }
  }

  /** After the last chunk: runs without results, final metadata and `at`, counts. */
  async finish(): Promise<RunOutcome[]> {
    const finals = this.stream.runs()
    const listed = new Set(finals.map((r) => r.runId))
    for (const state of this.runs.values()) if (!listed.has(state.runId)) finals.push(state.claimedWith)
    const outcomes: RunOutcome[] = []
    for (const run of finals) outcomes.push(await this.finishRun(run))
    // In this transaction, in one statement (one lock order): a reader never sees these results beside an analysis
    // that predates them.
    const written = [...this.runs.values()].filter((state) => !state.duplicate).map((state) => state.key)
    await markRunsStalePg(this.parts.client, written)
    return outcomes
  }

  private async finishRun(run: RunMeta): Promise<RunOutcome> {
    const { client } = this.parts
    const state = this.runs.get(run.runId) ?? (await this.claim(run))
    if (state.duplicate) return { runId: run.runId, outcome: 'duplicate', tests: 0, results: 0, attempts: 0 }
    if (run !== state.claimedWith) {
      if (state.created || state.replacing) await this.parts.replaceRun(state.key, run, this.nowIso)
      else await this.parts.mergeRun(state.key, run)
    }
    if (state.created) {
      const at = isoToMs(run.startedAt, this.now)
      if (at !== state.at) {
        // The one move the runs.at guard allows: this run, by this transaction (set_config is transaction-local).
        // Its rows move with it, across partitions when the day changes (an UPDATE of the partition key moves
        // the row), in this same transaction.
        await client.query(`SELECT set_config('flakewatch.moving_run', $1, true)`, [String(state.key)])
        await client.query('UPDATE runs SET at = $1 WHERE id = $2', [at, state.key])
        await client.query('UPDATE results SET at = $1 WHERE run = $2 AND at = $3', [at, state.key, state.at])
        await client.query('UPDATE attempts SET at = $1 WHERE run = $2 AND at = $3', [at, state.key, state.at])
        state.at = at
      }
    }
    if (state.replacing) await client.query('DELETE FROM run_timings WHERE run = $1', [state.key])
    const timings = run.timings ?? []
    if (timings.length > 0) {
      // One statement from arrays, whatever the number of packages; a later report's time for a package stands.
      await client.query(
        `INSERT INTO run_timings (run, name, duration_ms, status)
         SELECT $1, * FROM unnest($2::text[], $3::double precision[], $4::text[])
         ON CONFLICT (run, name) DO UPDATE SET duration_ms = excluded.duration_ms, status = excluded.status`,
        [state.key, timings.map((t) => t.name), timings.map((t) => t.durationMs), timings.map((t) => t.status)],
      )
    }
    // Counted where the rows are: a merged run holds rows from several reports. The run row is locked since the
    // claim, so a concurrent merge into the same run counts after this one commits. The time it was written is the
    // database's (instances' clocks differ), read now rather than at the start of the transaction as now() would:
    // other instances look for runs written since a time, and a late stamp keeps the commit lag short. Never behind
    // a committed stamp, so that a write within the same millisecond as the last still looks newer.
    await client.query(
      `UPDATE runs r SET (total, passed, failed, skipped, flaky) = (
         SELECT count(*), count(*) FILTER (WHERE status = 0), count(*) FILTER (WHERE status IN (1, 2)),
                count(*) FILTER (WHERE status = 3), count(*) FILTER (WHERE flaky)
         FROM results WHERE run = r.id AND at = r.at),
         written_at = greatest(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
           (SELECT coalesce(max(written_at), 0) + 1 FROM runs))
       WHERE r.id = $1`,
      [state.key],
    )
    return {
      runId: run.runId,
      outcome: state.replacing ? 'replaced' : 'ingested',
      tests: state.tests,
      results: state.results,
      attempts: state.attempts,
    }
  }
}

/** The prepared run restricted to the results marked in `keep`, with attempts re-indexed. */
function subset(p: PreparedRun, keep: Uint8Array): PreparedRun {
  if (keep.every((k) => k === 1)) return p
  const index = new Int32Array(p.results.length).fill(-1)
  const results: Result[] = []
  const test: number[] = []
  const message: number[] = []
  p.results.forEach((r, i) => {
    if (!keep[i]) return
    index[i] = results.length
    results.push(r)
    test.push(p.test[i]!)
    message.push(p.message[i]!)
  })
  const attempts = p.attempts.filter((a) => index[a.result]! >= 0).map((a) => ({ ...a, result: index[a.result]! }))
  const counts = { total: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 }
  return {
    ...p,
    tests: results.length,
    results,
    test: Int32Array.from(test),
    message: Int32Array.from(message),
    attempts,
    counts,
  }
}
