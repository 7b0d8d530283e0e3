import { markRunsStalePg, markStaleBeforePg } from './analyses.js'
import type { MaintenanceOutcome, RetentionStore } from '../store.js'
import type { PgConnection } from './connection.js'
import { listPartitions, PARTITIONED, type PgPartitions } from './partitions.js'

/** Days dropped per transaction: each holds a few locks per partition until it commits. */
const DAYS_PER_DROP = 31
/** How long a drop waits for readers and writers of the partitioned tables before it tries again. */
const DROP_LOCK_TIMEOUT = '2s'
const DROP_TRIES = 20
/** Lock timeout, deadlock: another transaction was in the way; the drop is tried again. */
const RETRYABLE = new Set(['55P03', '40P01'])

/**
 * Retention in a PostgreSQL store. Days wholly before the cutoff are dropped as partitions, with their runs
 * deleted by index in the same transaction; only the day that straddles the cutoff, and old rows waiting in the
 * default partition, are deleted row by row, in batches of runs.
 */
export class PgRetention implements RetentionStore {
  constructor(
    private readonly conn: PgConnection,
    private readonly partitions: PgPartitions,
  ) {}

  async prune(before: number, opts: { batchSize?: number } = {}): Promise<{ runs: number; results: number }> {
    try {
      const dropped = await this.dropDays(before)
      const deleted = await this.deleteRows(before, opts.batchSize ?? 50)
      return { runs: dropped.runs + deleted.runs, results: dropped.results + deleted.results }
    } catch (error) {
      throw this.conn.wrap('prune', error)
    }
  }

  maintain(now: number): Promise<MaintenanceOutcome> {
    return this.partitions.maintain(now)
  }

  /** Ranges of `at` that every partitioned table has as one partition ending at or before `before`. */
  private async droppableRanges(before: number): Promise<{ lo: number; hi: number; names: string[] }[]> {
    const per = await Promise.all(PARTITIONED.map((t) => listPartitions(this.conn.db, t)))
    const byRange = new Map<string, { lo: number; hi: number; names: string[] }>()
    for (const parts of per) {
      for (const p of parts) {
        if (!p.range || p.range.hi > before) continue
        const key = `${p.range.lo}:${p.range.hi}`
        const entry = byRange.get(key) ?? { ...p.range, names: [] }
        entry.names.push(p.name)
        byRange.set(key, entry)
      }
    }
    // A range not partitioned in every table keeps some of its rows elsewhere: those go row by row.
    return [...byRange.values()].filter((r) => r.names.length === PARTITIONED.length).sort((a, b) => a.lo - b.lo)
  }

  private async dropDays(before: number): Promise<{ runs: number; results: number }> {
    const ranges = await this.droppableRanges(before)
    let runs = 0
    let results = 0
    for (let i = 0; i < ranges.length; i += DAYS_PER_DROP) {
      const chunk = ranges.slice(i, i + DAYS_PER_DROP)
      const done = await this.retried(() =>
        this.conn.transaction(async (client) => {
          await client.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`)
          // Dropping a partition locks its parent as well; taken here at once, in the writers' order.
          await client.query(`LOCK TABLE ${PARTITIONED.map((t) => `ONLY ${t}`).join(', ')} IN ACCESS EXCLUSIVE MODE`)
          let n = 0
          let total = 0
          // Every row of these runs is in the partitions dropped below: a run's rows are in its `at`'s day. Days
          // that follow each other are one range of the runs index.
          for (const r of spans(chunk)) {
            const { rows } = await client.query<{ runs: number; total: number }>(
              `WITH gone AS (DELETE FROM runs WHERE at >= $1 AND at < $2 RETURNING id, total),
                 reports_gone AS (DELETE FROM reports WHERE run IN (SELECT id FROM gone)),
                 timings_gone AS (DELETE FROM run_timings WHERE run IN (SELECT id FROM gone))
               SELECT count(*)::integer AS runs, coalesce(sum(total), 0)::bigint AS total FROM gone`,
              [r.lo, r.hi],
            )
            n += rows[0]!.runs
            total += rows[0]!.total
          }
          // In this transaction: every test with a result in these days has its first result before their end.
          await markStaleBeforePg(client, chunk[chunk.length - 1]!.hi)
          await client.query(`DROP TABLE ${chunk.flatMap((r) => r.names).join(', ')}`)
          return { runs: n, results: total }
        }),
      )
      runs += done.runs
      results += done.results
    }
    return { runs, results }
  }

  private async retried<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn()
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (attempt >= DROP_TRIES || typeof code !== 'string' || !RETRYABLE.has(code)) throw error
        await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100))
      }
    }
  }

  /** What no dropped day covered: the straddling day and the default partition, in batches of runs. */
  private async deleteRows(before: number, batchSize: number): Promise<{ runs: number; results: number }> {
    let runs = 0
    let results = 0
    for (;;) {
      const removed = await this.conn.transaction(async (client) => {
        // SKIP LOCKED: a run being merged right now is left for the next prune instead of blocking on it.
        const { rows } = await client.query<{ id: number; at: number }>(
          'SELECT id, at FROM runs WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED',
          [before, batchSize],
        )
        const ids = rows.map((r) => r.id)
        if (ids.length === 0) return null
        // The runs' times as well as their keys: only their partitions are searched.
        const ats = [...new Set(rows.map((r) => r.at))]
        // Before the delete, in its transaction: the rows of the tests that lose results are analysed again.
        await markRunsStalePg(client, ids)
        const res = await client.query(
          'DELETE FROM results WHERE run = ANY($1::integer[]) AND at = ANY($2::bigint[])',
          [ids, ats],
        )
        await client.query('DELETE FROM attempts WHERE run = ANY($1::integer[]) AND at = ANY($2::bigint[])', [ids, ats])
        await client.query('DELETE FROM reports WHERE run = ANY($1::integer[])', [ids])
        await client.query('DELETE FROM run_timings WHERE run = ANY($1::integer[])', [ids])
        await client.query('DELETE FROM runs WHERE id = ANY($1::integer[])', [ids])
        return { runs: ids.length, results: res.rowCount ?? 0 }
      })
      if (!removed) break
      runs += removed.runs
      results += removed.results
    }
    return { runs, results }
  }
}

/** Ranges that touch merged into one, in order. */
function spans(ranges: { lo: number; hi: number }[]): { lo: number; hi: number }[] {
  const out: { lo: number; hi: number }[] = []
  for (const r of ranges) {
    const last = out.at(-1)
    if (last && last.hi === r.lo) last.hi = r.hi
    else out.push({ lo: r.lo, hi: r.hi })
  }
  return out
}
