import type { Attempt, HistoryEntry, RunInfo, TestHistory, TestRef } from '../../model.js'
import { statusFromCode } from '../codes.js'
import { runInfoFromRow, type RunRow } from '../rows.js'
import { HEAT_CELLS_MAX, type HeatCell, type HistoryFilter, type HistoryStore, type RunFilter } from '../store.js'
import type { PgConnection } from './connection.js'
import type { PgClient, PgQueryable } from './driver.js'
import { narrowed, Params, RUN_COLUMNS, runWhere } from './sql.js'

/** Rows fetched per round trip of the analysis scan: big enough to amortise the trip, small enough to stay flat. */
const SCAN_PAGE = 20_000
/** Message texts kept in memory between queries: failure messages repeat, so a few thousand cover most scans. */
const MESSAGE_CACHE = 50_000
/**
 * Characters of message text kept likewise: a stored message may have 16,384 (MAX_STORED_TEXT), so the count
 * alone would allow 800M characters in a long-running server's analysis thread.
 */
const MESSAGE_CACHE_CHARS = 8_000_000

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

/**
 * What reads return, as `ResultRow`. Decoding fields dominates the client's side of the scan, so the row carries
 * no `at` (its run has it) and status, flaky and healing travel as one small integer of bit flags.
 */
const RESULT_COLUMNS = `test, run, status | (flaky::integer << 2) | (healing::integer << 3), duration_ms, attempts,
  failed_attempts, failed_ms, error_type, message, position`
const FLAKY = 4
const HEALING = 8

/** Reading results back from a PostgreSQL store: the analysis scan, one test's history, one test's attempts. */
export class PgHistory implements HistoryStore {
  private readonly messageTexts = new Map<number, string>()
  /** Characters held in `messageTexts`. */
  private messageTextChars = 0

  constructor(private readonly conn: PgConnection) {}

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

  /** Reads the runs these rows name that `runs` lacks: each one selected by the filter, or null. */
  private async addRuns(
    db: PgQueryable,
    filter: HistoryFilter,
    runs: Map<number, RunInfo | null>,
    rows: ResultRow[],
  ): Promise<void> {
    const missing = new Set<number>()
    for (const row of rows) if (!runs.has(row[1])) missing.add(row[1])
    if (missing.size === 0) return
    const p = new Params()
    const where = runWhere(filter, p)
    const keys = p.add([...missing])
    const { rows: found } = await db.query<RunRow & { id: number }>(
      `SELECT id, ${RUN_COLUMNS} FROM runs ${where ? `${where} AND` : 'WHERE'} id = ANY(${keys}::integer[])`,
      p.values,
    )
    for (const key of missing) runs.set(key, null)
    for (const row of found) runs.set(row.id, runInfoFromRow(row))
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
      client = await this.conn.pool.connect()
    } catch (error) {
      throw this.conn.wrap('history scan', error)
    }
    let broken: unknown = undefined
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      // A few tests: only the runs their results name are read (a page at a time, below), never every run.
      const byKey = filter.testIds !== undefined && filter.lastRuns === undefined
      const runs = byKey ? new Map<number, RunInfo | null>() : await this.runsFor(client, filter, filter.lastRuns)
      if (!byKey && runs.size === 0) return
      const tests = await this.testsFor(client, filter.testIds)
      if (tests.size === 0) return
      const p = new Params()
      const where: string[] = []
      if (byKey) {
        // The filter's own time bounds: the results' `at` is their run's, so partitions outside are skipped.
        if (filter.since !== undefined) where.push(`at >= ${p.add(filter.since)}`)
        if (filter.until !== undefined) where.push(`at <= ${p.add(filter.until)}`)
      } else if (narrowed(filter)) {
        // Rows outside the selected runs are dropped below; the time bounds let the index skip most of them.
        let minAt = Infinity
        let maxAt = -Infinity
        for (const r of runs.values()) {
          if (r === null) continue
          minAt = Math.min(minAt, r.at)
          maxAt = Math.max(maxAt, r.at)
        }
        where.push(`at BETWEEN ${p.add(minAt)} AND ${p.add(maxAt)}`)
        // Only these runs' results, by the key (run, test, at): not every result of their time span.
        if (filter.runIds) where.push(`run = ANY(${p.add([...runs.keys()])}::integer[])`)
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
        if (byKey) await this.addRuns(client, filter, runs, rows)
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
      throw this.conn.wrap('history scan', error)
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
      const { rows } = await this.conn.db.query<{ test_id: string }>(
        // `at` as well as the run: each run's rows are looked up in its own partition only.
        `SELECT DISTINCT t.test_id FROM runs r JOIN results s ON s.run = r.id AND s.at = r.at JOIN tests t ON t.id = s.test
         WHERE r.run_id = ANY($1::text[])`,
        [[...new Set(runIds)]],
      )
      return rows.map((r) => r.test_id)
    } catch (error) {
      throw this.conn.wrap('tests of runs', error)
    }
  }

  async heatCells(testIds: string[], runIds: string[]): Promise<HeatCell[]> {
    if (testIds.length === 0 || runIds.length === 0) return []
    try {
      const runs = await this.conn.db.query<[number, string, string]>({
        text: 'SELECT id, run_id, at FROM runs WHERE run_id = ANY($1::text[])',
        values: [runIds.slice(0, HEAT_CELLS_MAX)],
        rowMode: 'array',
      })
      if (runs.rows.length === 0) return []
      const runOf = new Map(runs.rows.map(([id, runId]) => [id, runId]))
      let minAt = Infinity
      let maxAt = -Infinity
      for (const [, , at] of runs.rows) {
        minAt = Math.min(minAt, Number(at))
        maxAt = Math.max(maxAt, Number(at))
      }
      // One range of the scan index (test, at, run) per test, in the partitions of the runs' times only.
      const { rows } = await this.conn.db.query<[string, number, number]>({
        text: `SELECT t.test_id, s.run, s.status | (s.flaky::integer << 2) FROM tests t
               JOIN results s ON s.test = t.id AND s.at BETWEEN $2 AND $3
               WHERE t.test_id = ANY($1::text[]) AND s.run = ANY($4::integer[])`,
        values: [testIds.slice(0, HEAT_CELLS_MAX), minAt, maxAt, [...runOf.keys()]],
        rowMode: 'array',
      })
      const cells: HeatCell[] = []
      for (const [testId, run, flags] of rows) {
        const runId = runOf.get(run)
        if (runId !== undefined) {
          cells.push({ testId, runId, status: statusFromCode(flags & 3), flakyOnRetry: (flags & FLAKY) !== 0 })
        }
      }
      return cells
    } catch (error) {
      throw this.conn.wrap('heatmap cells', error)
    }
  }

  async getTestHistory(testId: string, opts: { limit?: number } = {}): Promise<TestHistory | null> {
    const t = await this.conn.db.query<{ id: number; test_id: string } & Omit<TestRef, 'testId'>>(
      'SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = $1',
      [testId],
    )
    const test = t.rows[0]
    if (!test) return null
    const { rows } = await this.conn.db.query<ResultRow>({
      text: `SELECT ${RESULT_COLUMNS} FROM results WHERE test = $1 ORDER BY at DESC, run DESC LIMIT $2`,
      values: [test.id, opts.limit ?? 1000],
      rowMode: 'array',
    })
    const runKeys = [...new Set(rows.map((r) => r[1]))]
    const runs = new Map<number, RunInfo>()
    if (runKeys.length) {
      const r = await this.conn.db.query<RunRow & { id: number }>(
        `SELECT id, ${RUN_COLUMNS} FROM runs WHERE id = ANY($1::integer[])`,
        [runKeys],
      )
      for (const row of r.rows) runs.set(row.id, runInfoFromRow(row))
    }
    const messages = await this.messagesFor(
      this.conn.db,
      rows.map((r) => r[8]),
    )
    return {
      test: { testId: test.test_id, suite: test.suite, module: test.module, name: test.name, file: test.file },
      entries: rows.reverse().map((row) => this.entryFromRow(row, runs.get(row[1])!, messages)),
    }
  }

  async getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    const { rows } = await this.conn.db.query<{
      retry: number
      status: number
      duration_ms: number | null
      message: number | null
      stack: number | null
    }>(
      `SELECT a.retry, a.status, a.duration_ms, a.message, a.stack FROM attempts a
       JOIN tests t ON t.id = a.test JOIN runs r ON r.id = a.run AND a.at = r.at
       WHERE t.test_id = $1 AND r.run_id = $2 ORDER BY a.retry`,
      [testId, runId],
    )
    if (rows.length > 0) {
      const texts = await this.messagesFor(
        this.conn.db,
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
    const res = await this.conn.db.query<{ status: number; duration_ms: number | null; message: number | null }>(
      `SELECT s.status, s.duration_ms, s.message FROM results s
       JOIN tests t ON t.id = s.test JOIN runs r ON r.id = s.run AND s.at = r.at
       WHERE t.test_id = $1 AND r.run_id = $2`,
      [testId, runId],
    )
    const one = res.rows[0]
    if (!one) return []
    const texts = await this.messagesFor(this.conn.db, [one.message])
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
}
