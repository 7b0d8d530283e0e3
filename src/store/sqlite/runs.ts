import type { Run, RunTiming, TestRef } from '../../model.js'
import { runFromRow, type RunRow } from '../rows.js'
import type { RunFilter, RunStore, RunSummary, StoreStats, TestFilter, WrittenRun } from '../store.js'
import { WRITTEN_RUNS_MAX } from '../store.js'
import type { SqliteConnection } from './connection.js'

/** The WHERE clause of a run filter (suite, branch, time bounds) and its parameters. */
export function runWhere(filter: RunFilter & { runIds?: string[] }): { sql: string; params: unknown[] } {
  const where: string[] = []
  const params: unknown[] = []
  if (filter.runIds) {
    where.push('run_id IN (SELECT value FROM json_each(?))')
    params.push(JSON.stringify(filter.runIds))
  }
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

/** Runs and tests as catalogues in a SQLite store. */
export class SqliteRuns implements RunStore {
  constructor(private readonly conn: SqliteConnection) {}

  listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const { sql, params } = runWhere(filter)
    const rows = this.conn
      .read(`SELECT * FROM runs ${sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...params, filter.limit ?? -1, filter.offset ?? 0) as RunRow[]
    return Promise.resolve(rows.map(runFromRow))
  }

  getRun(runId: string): Promise<Run | null> {
    const row = this.conn.read('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
    return Promise.resolve(row ? runFromRow(row) : null)
  }

  getRunTimings(runId: string): Promise<RunTiming[]> {
    const rows = this.conn
      .read(
        `SELECT t.name, t.duration_ms AS durationMs, t.status FROM run_timings t JOIN runs r ON r.id = t.run
         WHERE r.run_id = ? ORDER BY t.duration_ms DESC, t.name`,
      )
      .all(runId) as RunTiming[]
    return Promise.resolve(rows)
  }

  runSummaries(filter: RunFilter = {}): Promise<RunSummary[]> {
    const { sql, params } = runWhere(filter)
    const rows = this.conn
      .read(
        `SELECT run_id AS runId, at, total, passed, failed, skipped, flaky FROM runs ${sql}
         ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
      )
      .all(...params, filter.limit ?? -1, filter.offset ?? 0) as RunSummary[]
    return Promise.resolve(rows)
  }

  runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    const rows = this.conn
      .read(
        `SELECT run_id AS runId, written_at AS writtenAt FROM runs WHERE written_at >= ?
       ORDER BY written_at DESC, id DESC LIMIT ?`,
      )
      .all(sinceMs, Math.min(limit, WRITTEN_RUNS_MAX)) as WrittenRun[]
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
    const rows = this.conn.db
      .prepare(
        `SELECT test_id AS testId, suite, module, name, file FROM tests ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY test_id LIMIT ? OFFSET ?`,
      )
      .all(...params, filter.limit ?? -1, filter.offset ?? 0) as TestRef[]
    return Promise.resolve(rows)
  }

  getTest(testId: string): Promise<TestRef | null> {
    const row = this.conn
      .read('SELECT test_id AS testId, suite, module, name, file FROM tests WHERE test_id = ?')
      .get(testId) as TestRef | undefined
    return Promise.resolve(row ?? null)
  }

  stats(): Promise<StoreStats> {
    const one = (sql: string) => Number(this.conn.db.prepare(sql).pluck().get() ?? 0)
    const span = this.conn.db.prepare('SELECT min(at) AS lo, max(at) AS hi FROM runs').get() as {
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
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}
