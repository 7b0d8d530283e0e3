import type { EnvFacets, HistoryEntry, RunInfo, RunStatus, Attempt, TestHistory, TestRef } from '../../model.js'
import { statusFromCode } from '../codes.js'
import { runInfoFromRow, type RunRow } from '../rows.js'
import { HEAT_CELLS_MAX, type HeatCell, type HistoryFilter, type HistoryStore, type RunFilter } from '../store.js'
import type { SqliteConnection } from './connection.js'
import { runWhere } from './runs.js'

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
const RUN_INFO_COLUMNS = `id, run_id, suite, at, branch, revision, pipeline_id, job_status, pipeline_status,
  runner_id, env, status, pipeline_url, artifacts_url`

/**
 * Makes `RunInfo`s from `RUN_INFO_COLUMNS` rows, sharing the values that repeat from run to run (suite, branch,
 * runner, statuses, the env facets) instead of copying them once per run.
 */
function runInfoMaker(): (row: RunInfoRow) => RunInfo {
  const shared = new Map<string, string>()
  const one = <T extends string | null>(text: T): T => {
    if (text === null) return text
    let kept = shared.get(text)
    if (kept === undefined) shared.set(text, (kept = text))
    return kept as T
  }
  const envs = new Map<string, EnvFacets>()
  return (row) => {
    const [, runId, suite, at, branch, revision, pipelineId, jobStatus, pipelineStatus, runnerId, envText] = row
    let env = envs.get(envText ?? '')
    if (env === undefined) envs.set(envText ?? '', (env = envText ? (JSON.parse(envText) as EnvFacets) : {}))
    return {
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
    }
  }
}

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

/** Reading results back from a SQLite store: the analysis scan, a few tests' histories, one test's attempts. */
export class SqliteHistory implements HistoryStore {
  constructor(private readonly conn: SqliteConnection) {}

  /**
   * The selected runs by key, for the scan. A store may hold a million runs, so rows are iterated rather than
   * all fetched, and the values that repeat from run to run (suite, branch, runner, statuses, the env facets) are
   * shared instead of copied once per run.
   */
  private runsFor(filter: HistoryFilter | RunFilter = {}, limit?: number): Map<number, RunInfo> {
    const { sql: where, params } = runWhere(filter)
    params.push(limit ?? -1)
    const rows = this.conn.db
      .prepare(`SELECT ${RUN_INFO_COLUMNS} FROM runs ${where} ORDER BY at DESC, id DESC LIMIT ?`)
      .raw(true)
    const info = runInfoMaker()
    const map = new Map<number, RunInfo>()
    for (const row of rows.iterate(...params) as Iterable<RunInfoRow>) map.set(row[0], info(row))
    return map
  }

  /**
   * The selected runs by key, read as results name them: for a few tests' histories, whose runs are a few of the
   * store's (which may hold a million). A run outside the filter is remembered as null.
   */
  private runsByKey(filter: HistoryFilter): (key: number) => RunInfo | undefined {
    const { sql: where, params } = runWhere(filter)
    const stmt = this.conn.db
      .prepare(`SELECT ${RUN_INFO_COLUMNS} FROM runs ${where ? `${where} AND` : 'WHERE'} id = ?`)
      .raw(true)
    const info = runInfoMaker()
    const known = new Map<number, RunInfo | null>()
    return (key) => {
      let run = known.get(key)
      if (run === undefined) {
        const row = stmt.get(...params, key) as RunInfoRow | undefined
        known.set(key, (run = row === undefined ? null : info(row)))
      }
      return run ?? undefined
    }
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
      message: this.conn.messageById(row[7]),
      healingOccurred: (row[3] & 8) !== 0,
      position: row[8],
    }
  }

  async *scanHistory(filter: HistoryFilter = {}): AsyncIterable<TestHistory> {
    if (filter.testIds && filter.lastRuns === undefined) {
      // A few tests: only the runs their results name are read, never every run of the store.
      yield* this.historiesOf(filter.testIds, filter.since ?? -Number.MAX_SAFE_INTEGER, this.runsByKey(filter))
      return
    }
    const runs = this.runsFor(filter, filter.lastRuns)
    if (runs.size === 0) return
    if (filter.testIds) {
      let minAt = Infinity
      for (const r of runs.values()) minAt = Math.min(minAt, r.at)
      yield* this.historiesOf(filter.testIds, minAt, (key) => runs.get(key))
      return
    }
    let minAt = Infinity
    for (const r of runs.values()) if (r.at < minAt) minAt = r.at
    // Keyset pagination by test instead of one long-lived cursor: consumers may await between tests.
    const page = this.conn.db.prepare(
      `${HISTORY_GROUPS} WHERE test > ? AND at >= ? GROUP BY test ORDER BY test LIMIT ${SCAN_PAGE_TESTS}`,
    )
    page.raw(true)
    const refs = this.conn.db.prepare(
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
  private *historiesOf(
    testIds: string[],
    minAt: number,
    runOf: (key: number) => RunInfo | undefined,
  ): Iterable<TestHistory> {
    const byName = this.conn.db
      .prepare('SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = ?')
      .raw()
    const rowsOf = this.conn.db
      .prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE test = ? AND at >= ? ORDER BY at, run`)
      .raw(true)
    for (const testId of new Set(testIds)) {
      const t = byName.get(testId) as [number, string, string, string, string, string | null] | undefined
      if (!t) continue
      const [id, , suite, module, name, file] = t
      const history: TestHistory = { test: { testId, suite, module, name, file }, entries: [] }
      for (const row of rowsOf.all(id, minAt) as ResultRow[]) {
        const run = runOf(row[2])
        if (run) history.entries.push(this.entryFromRow(row, run))
      }
      if (history.entries.length) yield history
    }
  }

  testsInRuns(runIds: string[]): Promise<string[]> {
    const stmt = this.conn.db.prepare(
      `SELECT DISTINCT t.test_id FROM runs r JOIN results s ON s.run = r.id JOIN tests t ON t.id = s.test
       WHERE r.run_id = ?`,
    )
    stmt.pluck(true)
    const out = new Set<string>()
    for (const runId of new Set(runIds)) for (const id of stmt.all(runId) as string[]) out.add(id)
    return Promise.resolve([...out])
  }

  heatCells(testIds: string[], runIds: string[]): Promise<HeatCell[]> {
    const db = this.conn.db
    const runs = db
      .prepare('SELECT id, run_id, at FROM runs WHERE run_id IN (SELECT value FROM json_each(?))')
      .raw(true)
      .all(JSON.stringify(runIds.slice(0, HEAT_CELLS_MAX))) as [number, string, number][]
    if (runs.length === 0 || testIds.length === 0) return Promise.resolve([])
    const runOf = new Map(runs.map(([id, runId]) => [id, runId]))
    let minAt = Infinity
    let maxAt = -Infinity
    for (const [, , at] of runs) {
      minAt = Math.min(minAt, at)
      maxAt = Math.max(maxAt, at)
    }
    // One range of the results' key (test, at, run) per test: only the runs' times are read.
    const rows = db
      .prepare(
        `SELECT t.test_id, s.run, s.status | (s.flaky << 2) FROM tests t
         JOIN results s ON s.test = t.id AND s.at BETWEEN ? AND ?
         WHERE t.test_id IN (SELECT value FROM json_each(?))`,
      )
      .raw(true)
      .all(minAt, maxAt, JSON.stringify(testIds.slice(0, HEAT_CELLS_MAX))) as [string, number, number][]
    const cells: HeatCell[] = []
    for (const [testId, run, flags] of rows) {
      const runId = runOf.get(run)
      if (runId !== undefined)
        cells.push({ testId, runId, status: statusFromCode(flags & 3), flakyOnRetry: (flags & 4) !== 0 })
    }
    return Promise.resolve(cells)
  }

  getTestHistory(testId: string, opts: { limit?: number } = {}): Promise<TestHistory | null> {
    const test = this.conn.db
      .prepare('SELECT id, test_id, suite, module, name, file FROM tests WHERE test_id = ?')
      .get(testId) as
      { id: number; test_id: string; suite: string; module: string; name: string; file: string | null } | undefined
    if (!test) return Promise.resolve(null)
    const rows = this.conn.db
      .prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE test = ? ORDER BY at DESC, run DESC LIMIT ?`)
      .raw(true)
      .all(test.id, opts.limit ?? 1000) as ResultRow[]
    const runIds = [...new Set(rows.map((r) => r[2]))]
    const runs = new Map<number, RunInfo>()
    const runStmt = this.conn.db.prepare('SELECT * FROM runs WHERE id = ?')
    for (const id of runIds) runs.set(id, runInfoFromRow(runStmt.get(id) as RunRow))
    const entries = rows.reverse().map((row) => this.entryFromRow(row, runs.get(row[2])!))
    return Promise.resolve({
      test: { testId: test.test_id, suite: test.suite, module: test.module, name: test.name, file: test.file },
      entries,
    })
  }

  getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    const rows = this.conn.db
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
          message: this.conn.messageById(r.message),
          stack: this.conn.messageById(r.stack),
        })),
      )
    }
    // A single passing attempt is implied by its result row.
    const res = this.conn.db
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
        message: this.conn.messageById(res.message),
        stack: null,
      },
    ])
  }
}
