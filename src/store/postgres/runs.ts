import type { Run, RunTiming, TestRef } from '../../model.js'
import { runFromRow, type RunRow } from '../rows.js'
import type { RunFilter, RunStore, RunSummary, StoreStats, TestFilter, WrittenRun } from '../store.js'
import { WRITTEN_RUNS_MAX } from '../store.js'
import type { PgConnection } from './connection.js'
import { Params, RUN_COLUMNS, runWhere } from './sql.js'

/** Runs and tests as catalogues in a PostgreSQL store. */
export class PgRuns implements RunStore {
  constructor(private readonly conn: PgConnection) {}

  async listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const p = new Params()
    const where = runWhere(filter, p)
    const { rows } = await this.conn.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs ${where} ORDER BY at DESC, id DESC
       LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows.map(runFromRow)
  }

  async getRun(runId: string): Promise<Run | null> {
    const { rows } = await this.conn.db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId])
    return rows[0] ? runFromRow(rows[0]) : null
  }

  async getRunTimings(runId: string): Promise<RunTiming[]> {
    const { rows } = await this.conn.db.query<RunTiming>(
      `SELECT t.name, t.duration_ms AS "durationMs", t.status FROM run_timings t JOIN runs r ON r.id = t.run
       WHERE r.run_id = $1 ORDER BY t.duration_ms DESC, t.name`,
      [runId],
    )
    return rows
  }

  async runSummaries(filter: RunFilter = {}): Promise<RunSummary[]> {
    const p = new Params()
    const where = runWhere(filter, p)
    const { rows } = await this.conn.db.query<RunSummary>(
      `SELECT run_id AS "runId", at, total, passed, failed, skipped, flaky FROM runs ${where}
       ORDER BY at DESC, id DESC LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows
  }

  async runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    const { rows } = await this.conn.db.query<WrittenRun>(
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
    const { rows } = await this.conn.db.query<TestRef>(
      `SELECT test_id AS "testId", suite, module, name, file FROM tests
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY test_id LIMIT ${p.add(filter.limit ?? null)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    )
    return rows
  }

  async getTest(testId: string): Promise<TestRef | null> {
    const { rows } = await this.conn.db.query<TestRef>(
      'SELECT test_id AS "testId", suite, module, name, file FROM tests WHERE test_id = $1',
      [testId],
    )
    return rows[0] ?? null
  }

  async stats(): Promise<StoreStats> {
    const { rows } = await this.conn.db.query<StoreStats>(
      `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM tests) AS tests,
         r.results, r.attempts, s.lo AS "oldestRunAt", s.hi AS "newestRunAt"
       FROM (SELECT count(*) AS results, coalesce(sum(attempts), 0)::bigint AS attempts FROM results) r,
            (SELECT min(at) AS lo, max(at) AS hi FROM runs) s`,
    )
    return rows[0]!
  }
}
