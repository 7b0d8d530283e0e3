import type { PgConnection } from './connection.js'
import type { PgClient, PgQueryable } from './driver.js'

/**
 * Daily time partitions of `results` and `attempts` (docs/scaling.md, "Time partitions"): one partition per UTC
 * day of `at` (the run's start, epoch ms), named `<table>_pYYYYMMDD`, and a default partition `<table>_default`
 * for any day that has none.
 *
 * A partition is made as a plain table (LIKE the parent, so with its indexes) and then attached: attaching takes
 * SHARE UPDATE EXCLUSIVE on the parent, which readers and writers never wait for, where CREATE TABLE … PARTITION
 * OF would take ACCESS EXCLUSIVE and queue every reader behind a running scan. Attaching still locks the default
 * partition, so it runs under a short lock timeout: a day that cannot be made now is made at the next try, and
 * meanwhile its rows wait in the default partition, where they are read like any other.
 */

export const DAY_MS = 86_400_000
/** The partitioned tables, in the order every transaction locks them (writers write results, then attempts). */
export const PARTITIONED = ['results', 'attempts'] as const
export type PartitionedTable = (typeof PARTITIONED)[number]
/** Days made ahead of the data: today and the next seven. */
export const DAYS_AHEAD = 7
/** How long partition DDL waits for a lock before giving up until the next try. */
const LOCK_TIMEOUT = '1s'
/** Days before year 1 or after 9999 stay in the default partition: their names would not be eight digits. */
const FIRST_DAY = Math.floor(Date.UTC(1, 0, 1) / DAY_MS)
const LAST_DAY = Math.floor(Date.UTC(9999, 11, 31) / DAY_MS)
/** Serialises partition DDL within a schema (with the schema's name as the second key). */
const PARTITION_LOCK = 0x666c7770

/** The UTC day (days since the epoch) of an epoch-ms time. */
export function dayOf(at: number): number {
  return Math.floor(at / DAY_MS)
}

/** A day partition's table name, e.g. `results_p20261127`. */
export function partitionName(table: PartitionedTable, day: number): string {
  const d = new Date(day * DAY_MS)
  const ymd = `${String(d.getUTCFullYear()).padStart(4, '0')}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(
    d.getUTCDate(),
  ).padStart(2, '0')}`
  return `${table}_p${ymd}`
}

export function defaultPartitionName(table: PartitionedTable): string {
  return `${table}_default`
}

/** Whether a day can have a partition of its own. */
export function partitionable(day: number): boolean {
  return Number.isInteger(day) && day >= FIRST_DAY && day <= LAST_DAY
}

/** One attached partition: its table name and its range of `at` (`[lo, hi)`), or the default partition. */
export interface Partition {
  name: string
  /** Null for the default partition. */
  range: { lo: number; hi: number } | null
}

const BOUND = /FROM \('(-?\d+)'\) TO \('(-?\d+)'\)/

/** The partitions attached to a table, read from the catalogue (the names are only ever a convention). */
export async function listPartitions(db: PgQueryable, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1)`,
    [table],
  )
  return rows.map((r) => {
    const m = BOUND.exec(r.bound)
    return { name: r.name, range: m ? { lo: Number(m[1]), hi: Number(m[2]) } : null }
  })
}

/** Days that have a partition of their own in every partitioned table. */
export async function partitionedDays(db: PgQueryable): Promise<Set<number>> {
  const per = await Promise.all(PARTITIONED.map((t) => listPartitions(db, t)))
  const days = (parts: Partition[]) =>
    new Set(parts.flatMap((p) => (p.range && p.range.hi - p.range.lo === DAY_MS ? [dayOf(p.range.lo)] : [])))
  const [first, ...rest] = per.map(days)
  return new Set([...first!].filter((d) => rest.every((s) => s.has(d))))
}

/** The keys and the scan index, made on the parents and so on every partition, present and future. */
export const PARTITIONED_INDEXES = `
  ALTER TABLE results ADD PRIMARY KEY (run, test, at);
  CREATE INDEX results_scan ON results (test, at, run)
    INCLUDE (status, flaky, duration_ms, attempts, failed_attempts, failed_ms, error_type, message, healing, position);
  ALTER TABLE attempts ADD PRIMARY KEY (run, test, retry, at);
`

/**
 * Gives `day` a partition of its own in every partitioned table, moving any rows of that day out of the default
 * partition, in the caller's transaction. Returns the rows moved (results and attempts), or null when the day
 * already had its partitions. Waits at most LOCK_TIMEOUT for each lock: a lock timeout (55P03) aborts the
 * transaction, and the day is left as it was.
 */
export async function makeDay(client: PgClient, day: number): Promise<number | null> {
  await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`)
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [PARTITION_LOCK])
  const lo = day * DAY_MS
  const hi = lo + DAY_MS
  let moved = 0
  let made = false
  for (const table of PARTITIONED) {
    const name = partitionName(table, day)
    const existing = await listPartitions(client, table)
    if (existing.some((p) => p.name === name || (p.range && p.range.lo < hi && p.range.hi > lo))) continue
    made = true
    const def = defaultPartitionName(table)
    // Writers into the default partition wait (readers do not) while its rows of the day move out.
    await client.query(`LOCK TABLE ${def} IN SHARE ROW EXCLUSIVE MODE`)
    await client.query(
      `CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
    )
    const columns = await columnsOf(client, table)
    const res = await client.query(
      `INSERT INTO ${name} (${columns}) SELECT ${columns} FROM ${def} WHERE at >= $1 AND at < $2`,
      [lo, hi],
    )
    moved += res.rowCount ?? 0
    if (res.rowCount) await client.query(`DELETE FROM ${def} WHERE at >= $1 AND at < $2`, [lo, hi])
    await client.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${lo}) TO (${hi})`)
  }
  return made ? moved : null
}

async function columnsOf(db: PgQueryable, table: PartitionedTable): Promise<string> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped
     ORDER BY attnum`,
    [table],
  )
  return rows.map((r) => r.name).join(', ')
}

/** The days today and DAYS_AHEAD after it, by the given clock. */
export function daysAhead(now: number): number[] {
  const today = dayOf(now)
  return Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => today + i)
}

/** Days that have rows in a default partition, newest first, at most `limit` of them. */
export async function defaultDays(db: PgQueryable, limit: number): Promise<number[]> {
  const { rows } = await db.query<{ day: number }>(
    `SELECT day FROM (
       SELECT DISTINCT floor(at / ${DAY_MS}::numeric)::bigint AS day FROM results_default
       UNION SELECT DISTINCT floor(at / ${DAY_MS}::numeric)::bigint FROM attempts_default
     ) d WHERE day BETWEEN $1 AND $2 ORDER BY day DESC LIMIT $3`,
    [FIRST_DAY, LAST_DAY, limit],
  )
  return rows.map((r) => r.day)
}

/** The DDL that gives `day` its partitions where no data or reader can be yet (in a migration). */
export function dayPartitionsDdl(day: number): string {
  const lo = day * DAY_MS
  return PARTITIONED.map(
    (t) => `CREATE TABLE ${partitionName(t, day)} PARTITION OF ${t} FOR VALUES FROM (${lo}) TO (${lo + DAY_MS});`,
  ).join('\n')
}

/** Days moved out of the default partition by one maintenance, newest first: each one scans it. */
const MOVE_DAYS = 400
/** After a day could not be made (a lock timeout, or a role that may not create tables), writers wait this long. */
const RETRY_MS = 60_000

/** What one maintenance did. */
export interface PartitionMaintenance {
  /** Days given partitions of their own. */
  days: number
  /** Rows (results and attempts) moved out of the default partition into them. */
  moved: number
  /** Days that could not be made this time, with the first reason. */
  failed: number
  error: string | null
}

/**
 * Keeps the partitions ahead of the data: writers call `ensureAhead` before each report (a check of the clock
 * when the days are made already), and maintenance (`serve` daily, and `prune`) also moves what the default
 * partition holds into days of its own.
 */
export class PgPartitions {
  /** The day through which today's partitions and those ahead were found made, by this process. */
  private readyDay = -Infinity
  private retryAt = 0
  private pending: Promise<unknown> | null = null

  constructor(private readonly conn: PgConnection) {}

  /**
   * Makes today's partitions and the next DAYS_AHEAD days', when this process has not seen them made yet. Never
   * fails: a day that cannot be made now keeps its rows in the default partition, where they are read as well.
   */
  async ensureAhead(now: number): Promise<void> {
    if (dayOf(now) <= this.readyDay || now < this.retryAt) return
    // Concurrent reports of one process share one check.
    this.pending ??= this.makeAhead(now).finally(() => (this.pending = null))
    await this.pending
  }

  private async makeAhead(now: number): Promise<void> {
    const outcome = await this.makeDays(daysAhead(now))
    if (outcome.failed === 0) this.readyDay = dayOf(now)
    else this.retryAt = now + RETRY_MS
  }

  /** Makes the days ahead and moves the default partition's days out, newest first. */
  async maintain(now: number): Promise<PartitionMaintenance> {
    const ahead = await this.makeDays(daysAhead(now))
    const moved = await this.makeDays(await defaultDays(this.conn.db, MOVE_DAYS))
    if (ahead.failed === 0) this.readyDay = dayOf(now)
    return {
      days: ahead.days + moved.days,
      moved: ahead.moved + moved.moved,
      failed: ahead.failed + moved.failed,
      error: ahead.error ?? moved.error,
    }
  }

  private async makeDays(days: number[]): Promise<PartitionMaintenance> {
    const out: PartitionMaintenance = { days: 0, moved: 0, failed: 0, error: null }
    const have = await partitionedDays(this.conn.db)
    for (const day of days) {
      if (have.has(day) || !partitionable(day)) continue
      try {
        // One day per transaction: its locks are held for one day's rows, never for the whole backlog.
        const moved = await this.conn.transaction((client) => makeDay(client, day))
        if (moved !== null) {
          out.days++
          out.moved += moved
        }
      } catch (error) {
        out.failed++
        out.error ??= (error as Error).message
      }
    }
    return out
  }
}
