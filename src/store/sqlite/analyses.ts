import {
  ANALYSIS_BATCH,
  ANALYSIS_LEASE_MS,
  analysisOrderSql,
  suiteHealthOf,
  sumTrendDays,
  verdictCounts,
  type AnalysisClaim,
  type AnalysisClaimOptions,
  type AnalysisFilter,
  type AnalysisPage,
  type AnalysisPageRow,
  type AnalysisRead,
  type AnalysisStore,
  type PersistedAnalysis,
  type RunFile,
  type TestFile,
  type WindowFileCount,
  type WindowTestFilter,
  type WindowTestRow,
} from '../analyses.js'
import type { VerdictKind } from '../../model.js'
import { analyzeOrderSql, COSTLY_SQL, testsJoin } from '../analyses.js'
import type { SqliteConnection } from './connection.js'
import type { SqliteDb } from './driver.js'

/** The columns of `analyses` after the key: see docs/scaling.md ("What a row holds"). */
export const SQLITE_ANALYSES_SCHEMA = `
  CREATE TABLE analyses (
    test INTEGER PRIMARY KEY,
    analysis TEXT,
    config TEXT NOT NULL DEFAULT '',
    verdict TEXT,
    score REAL,
    flip_rate REAL,
    flip_rate_class TEXT,
    runs INTEGER,
    failures INTEGER,
    pass_rate REAL,
    last_status TEXT,
    last_failure_at INTEGER,
    first_run_at INTEGER,
    last_run_at INTEGER,
    as_of INTEGER NOT NULL DEFAULT 0,
    valid_from INTEGER NOT NULL DEFAULT 0,
    valid_until INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    lease_until INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX analyses_due ON analyses (valid_until);
  CREATE INDEX analyses_ahead ON analyses (valid_from);
  CREATE INDEX analyses_rank ON analyses (verdict, score DESC, flip_rate DESC);
  CREATE INDEX tests_file ON tests (suite, module);
  INSERT INTO analyses (test) SELECT id FROM tests;
`

/** Migration 0019: what the server's reads need besides the JSON; every row is analysed again to fill them. */
export const SQLITE_ANALYSES_READS = `
  ALTER TABLE analyses ADD COLUMN pass_rate_class TEXT;
  ALTER TABLE analyses ADD COLUMN last5 TEXT;
  ALTER TABLE analyses ADD COLUMN streak INTEGER;
  ALTER TABLE analyses ADD COLUMN streak_since INTEGER;
  ALTER TABLE analyses ADD COLUMN window_failure_at INTEGER;
  ALTER TABLE analyses ADD COLUMN days TEXT;
  ALTER TABLE analyses ADD COLUMN time_lost_ms REAL;
  CREATE INDEX analyses_window ON analyses (last_run_at);
  UPDATE analyses SET valid_until = 0, version = version + 1;
`

/**
 * Migration 0020: the indexes of the server's default reads, as on PostgreSQL (`POSTGRES_READ_INDEXES`): the
 * default order as the query writes it, and the verdicts with the window for the counts (verdict first: SQLite
 * groups them in index order, reading no row).
 */
export const SQLITE_READ_INDEXES = `
  CREATE INDEX analyses_order ON analyses (
    CASE verdict WHEN 'flaky' THEN 0 WHEN 'broken' THEN 1 WHEN 'healthy' THEN 2 ELSE 3 END,
    score DESC, failures DESC, flip_rate DESC
  ) WHERE verdict IS NOT NULL;
  CREATE INDEX analyses_window_verdict ON analyses (verdict, last_run_at);
`

/** Marks stale, creating rows as needed: every test of the files (suite and module) of the tests selected. */
const MARK_FILES = (tests: string) => `
  INSERT INTO analyses (test)
    SELECT t.id FROM tests t WHERE (t.suite, t.module) IN (SELECT s.suite, s.module FROM tests s WHERE s.id IN (${tests}))
  ON CONFLICT (test) DO UPDATE SET valid_until = 0, version = version + 1, lease_until = 0`

/**
 * Marks stale the rows of every test with a result in these runs, and of their file-mates: called by each write of
 * results, inside its transaction, after the write (so that a test a report adds is included).
 */
export function markRunsStaleSqlite(db: SqliteDb, runKeys: readonly number[]): void {
  const stmt = db.prepare(MARK_FILES('SELECT test FROM results WHERE run = ?'))
  for (const run of runKeys) stmt.run(run)
}

/** Marks stale the rows of these tests (by key) and of their file-mates, inside the caller's transaction. */
export function markTestsStaleSqlite(db: SqliteDb, testKeys: readonly number[]): void {
  const stmt = db.prepare(MARK_FILES('?'))
  for (const test of testKeys) stmt.run(test)
}

/** Tests read per page of `readAnalyses`. */
const READ_PAGE = 5000

type ReadRow = [
  testId: string,
  suite: string,
  module: string,
  name: string,
  file: string | null,
  exact: number,
  analysis: string | null,
  verdict: AnalysisRead['verdict'],
  score: number | null,
  flipRate: number | null,
  flipRateClass: AnalysisRead['flipRateClass'],
]

/** The persisted analyses of a SQLite store (see `store/analyses.ts`). */
export class SqliteAnalyses implements AnalysisStore {
  constructor(private readonly conn: SqliteConnection) {}

  claimAnalyses(opts: AnalysisClaimOptions): Promise<AnalysisClaim[]> {
    const now = Date.now()
    const due = '(a.valid_until <= ? OR a.valid_from > ?) AND a.lease_until < ?'
    // Leases that end before this are free: with `leased`, every one.
    const free = opts.leased === true ? Number.MAX_SAFE_INTEGER : now
    if (opts.files?.length === 1) {
      // One file: its rows in key order straight from the index, stopping at the limit.
      const [file] = opts.files
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id
         WHERE t.suite = ? AND t.module = ? AND ${due} ORDER BY t.id LIMIT ?`,
        [file!.suite, file!.module, opts.clock, opts.clock, free, opts.limit],
        now,
      )
    }
    if (opts.files !== undefined) {
      const files = JSON.stringify(opts.files.slice(0, ANALYSIS_BATCH).map((f) => [f.suite, f.module]))
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id
         WHERE (t.suite, t.module) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
           AND ${due} ORDER BY t.suite, t.module, t.id LIMIT ?`,
        [files, opts.clock, opts.clock, free, opts.limit],
        now,
      )
    }
    if (opts.testIds !== undefined) {
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id
         WHERE t.test_id IN (SELECT value FROM json_each(?)) AND a.lease_until < ?
           AND (a.valid_until <= ? OR a.valid_from > ? OR a.config <> ?) LIMIT ?`,
        [
          JSON.stringify(opts.testIds.slice(0, ANALYSIS_BATCH)),
          now,
          opts.clock,
          opts.clock,
          opts.config ?? null,
          opts.limit,
        ],
        now,
      )
    }
    return this.claim(
      `SELECT test FROM analyses a WHERE ${due} ORDER BY valid_until LIMIT ?`,
      [opts.clock, opts.clock, now, opts.limit],
      now,
    )
  }

  releaseClaims(claims: AnalysisClaim[]): Promise<void> {
    return this.conn.serial(() => {
      const db = this.conn.db
      const stmt = db.prepare(
        'UPDATE analyses SET lease_until = 0 WHERE test = (SELECT id FROM tests WHERE test_id = ?) AND version = ?',
      )
      db.transaction(() => {
        for (const c of claims) stmt.run(c.testId, c.version)
      }).immediate()
      return Promise.resolve()
    })
  }

  runFiles(runIds: string[], after: TestFile | null, limit: number): Promise<RunFile[]> {
    const rows = this.conn.db
      .prepare(
        `SELECT f.suite, f.module, (SELECT count(*) FROM tests c WHERE c.suite = f.suite AND c.module = f.module) AS tests
         FROM (SELECT DISTINCT t.suite, t.module FROM results r JOIN tests t ON t.id = r.test
           WHERE r.run IN (SELECT id FROM runs WHERE run_id IN (SELECT value FROM json_each(?)))
             AND (? IS NULL OR (t.suite, t.module) > (?, ?))
           ORDER BY t.suite, t.module LIMIT ?) f
         ORDER BY f.suite, f.module`,
      )
      .all(
        JSON.stringify(runIds.slice(0, ANALYSIS_BATCH)),
        after === null ? null : 1,
        after?.suite ?? null,
        after?.module ?? null,
        limit,
      ) as RunFile[]
    return Promise.resolve(rows)
  }

  dueFiles(clock: number, limit: number): Promise<RunFile[]> {
    const rows = this.conn.db
      .prepare(
        `SELECT f.suite, f.module, (SELECT count(*) FROM tests c WHERE c.suite = f.suite AND c.module = f.module) AS tests
         FROM (SELECT DISTINCT t.suite, t.module FROM tests t WHERE t.id IN (
           SELECT test FROM analyses WHERE (valid_until <= ? OR valid_from > ?) AND lease_until < ?
           ORDER BY valid_until LIMIT ?)) f
         ORDER BY f.suite, f.module`,
      )
      .all(clock, clock, Date.now(), limit) as RunFile[]
    return Promise.resolve(rows)
  }

  claimOtherConfig(config: string, limit: number): Promise<AnalysisClaim[]> {
    const now = Date.now()
    // Whole files, those of the first rows found, in file order: see `AnalysisStore.claimOtherConfig`.
    return this.claim(
      `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id
       WHERE (t.suite, t.module) IN (SELECT s.suite, s.module FROM tests s WHERE s.id IN (
           SELECT test FROM analyses WHERE config <> ? AND lease_until < ? LIMIT ?))
         AND a.config <> ? AND a.lease_until < ?
       ORDER BY t.suite, t.module, t.id LIMIT ?`,
      [config, now, limit, config, now, limit],
      now,
    )
  }

  /** One immediate transaction: the one writer lock serialises claims, which is what SKIP LOCKED does on PG. */
  private claim(pick: string, params: unknown[], now: number): Promise<AnalysisClaim[]> {
    return this.conn.serial(() => {
      const db = this.conn.db
      const claimed = db
        .transaction(
          () =>
            db
              .prepare(
                `UPDATE analyses SET lease_until = ? WHERE test IN (${pick})
               RETURNING (SELECT test_id FROM tests WHERE id = analyses.test), version`,
              )
              .raw(true)
              .all(now + ANALYSIS_LEASE_MS, ...params) as [string | null, number][],
        )
        .immediate()
      return Promise.resolve(
        claimed.filter((c) => c[0] !== null).map(([testId, version]) => ({ testId: testId!, version })),
      )
    })
  }

  writeAnalyses(rows: PersistedAnalysis[]): Promise<number> {
    return this.conn.serial(() => {
      const db = this.conn.db
      const stmt = db.prepare(
        `UPDATE analyses SET analysis = ?, config = ?, verdict = ?, score = ?, flip_rate = ?, flip_rate_class = ?,
           runs = ?, failures = ?, pass_rate = ?, last_status = ?, last_failure_at = ?, first_run_at = ?,
           last_run_at = ?, pass_rate_class = ?, last5 = ?, streak = ?, streak_since = ?, window_failure_at = ?,
           days = ?, time_lost_ms = ?, as_of = ?, valid_from = ?, valid_until = ?, lease_until = 0
         WHERE test = (SELECT id FROM tests WHERE test_id = ?) AND version = ?`,
      )
      const written = db
        .transaction(() => {
          let n = 0
          for (const r of rows) {
            const s = r.analysis?.summary
            n += stmt.run(
              r.analysis?.json ?? null,
              r.config,
              s?.verdict ?? null,
              s?.score ?? null,
              s?.flipRate ?? null,
              s?.flipRateClass ?? null,
              s?.runs ?? null,
              s?.failures ?? null,
              s?.passRate ?? null,
              s?.lastStatus ?? null,
              s?.lastFailureAt ?? null,
              s?.firstRunAt ?? null,
              s?.lastRunAt ?? null,
              s?.passRateClass ?? null,
              s?.last5 ?? null,
              s?.streak ?? null,
              s?.streakSince ?? null,
              s?.windowFailureAt ?? null,
              s === undefined ? null : JSON.stringify(s.days),
              s?.timeLostMs ?? null,
              r.asOf,
              r.validFrom,
              r.validUntil,
              r.testId,
              r.version,
            ).changes
          }
          return n
        })
        .immediate()
      return Promise.resolve(written)
    })
  }

  fileMates(testIds: string[]): Promise<string[]> {
    const stmt = this.conn.db
      .prepare(
        `SELECT t.test_id FROM tests t WHERE (t.suite, t.module) IN (
           SELECT s.suite, s.module FROM tests s WHERE s.test_id IN (SELECT value FROM json_each(?)))`,
      )
      .pluck(true)
    const out = new Set<string>()
    for (let i = 0; i < testIds.length; i += ANALYSIS_BATCH) {
      for (const id of stmt.all(JSON.stringify(testIds.slice(i, i + ANALYSIS_BATCH))) as string[]) out.add(id)
    }
    return Promise.resolve([...out])
  }

  runCounts(runIds: string[]): Promise<{ runId: string; total: number; failed: number }[]> {
    const stmt = this.conn.db.prepare(
      'SELECT run_id AS runId, total, failed FROM runs WHERE run_id IN (SELECT value FROM json_each(?))',
    )
    const out: { runId: string; total: number; failed: number }[] = []
    for (let i = 0; i < runIds.length; i += ANALYSIS_BATCH) {
      for (const row of stmt.all(JSON.stringify(runIds.slice(i, i + ANALYSIS_BATCH))) as typeof out) out.push(row)
    }
    return Promise.resolve(out)
  }

  async *readAnalyses(opts: { clock: number; config: string; suite?: string }): AsyncIterable<AnalysisRead> {
    const exact = 'a.config = @config AND a.valid_from <= @clock AND a.valid_until > @clock'
    // Pages by key rather than one long cursor: the consumer may await, and this connection may be asked for more.
    const page = this.conn.db
      .prepare(
        `SELECT t.id, t.test_id, t.suite, t.module, t.name, t.file, a.test IS NOT NULL,
           a.analysis, a.verdict, a.score, a.flip_rate, a.flip_rate_class
         FROM tests t LEFT JOIN analyses a ON a.test = t.id AND ${exact}
         WHERE t.id > @after ${opts.suite === undefined ? '' : 'AND t.suite = @suite'}
         ORDER BY t.id LIMIT ${READ_PAGE}`,
      )
      .raw(true)
    const params: Record<string, unknown> = { config: opts.config, clock: opts.clock, after: -1 }
    if (opts.suite !== undefined) params.suite = opts.suite
    for (;;) {
      const rows = page.all(params) as [number, ...ReadRow][]
      for (const [
        ,
        testId,
        suite,
        module,
        name,
        file,
        isExact,
        json,
        verdict,
        score,
        flipRate,
        flipRateClass,
      ] of rows) {
        yield { testId, suite, module, name, file, exact: isExact === 1, json, verdict, score, flipRate, flipRateClass }
      }
      if (rows.length < READ_PAGE) return
      params.after = rows[rows.length - 1]![0]
      // Between pages, let a server answer other requests.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  countExact(opts: { clock: number; config: string; suite?: string }): Promise<{ tests: number; exact: number }> {
    const params: Record<string, unknown> = { config: opts.config, clock: opts.clock }
    if (opts.suite !== undefined) params.suite = opts.suite
    const row = this.conn.db
      .prepare(
        `SELECT count(*) AS tests, count(a.test) AS exact FROM tests t LEFT JOIN analyses a
           ON a.test = t.id AND a.config = @config AND a.valid_from <= @clock AND a.valid_until > @clock
         ${opts.suite === undefined ? '' : 'WHERE t.suite = @suite'}`,
      )
      .get(params) as { tests: number; exact: number }
    return Promise.resolve(row)
  }

  pageAnalyses(page: AnalysisPage): Promise<AnalysisPageRow[]> {
    const { where, params } = windowWhere(page)
    const limit = page.limit === null ? '' : `LIMIT ${Math.trunc(page.limit)} OFFSET ${Math.trunc(page.offset)}`
    const rows = this.conn.db
      .prepare(
        `SELECT t.test_id AS testId, t.suite, t.module, t.name, t.file,
           ${page.refsOnly ? 'NULL' : 'a.analysis'} AS json, a.verdict, a.score, coalesce(a.last5, '') AS last5,
           coalesce(a.streak, 0) AS streak, a.streak_since AS streakSince
         FROM analyses a JOIN tests t ON t.id = a.test WHERE ${where}
         ORDER BY ${analysisOrderSql(page.sort, page.order, '')} ${limit}`,
      )
      .all(...params) as AnalysisPageRow[]
    if (page.limit === null && page.offset > 0) return Promise.resolve(rows.slice(page.offset))
    return Promise.resolve(rows)
  }

  countAnalyses(filter: AnalysisFilter): Promise<Record<VerdictKind, number>> {
    const { where, params } = windowWhere(filter)
    const rows = this.conn.db
      .prepare(
        `SELECT a.verdict AS verdict, count(*) AS n FROM analyses a ${testsJoin(filter)} WHERE ${where}
         GROUP BY a.verdict`,
      )
      .all(...params) as { verdict: VerdictKind; n: number }[]
    return Promise.resolve(verdictCounts(rows))
  }

  dueAnalyses(clock: number): Promise<number> {
    const row = this.conn.db
      .prepare(
        `SELECT (SELECT count(*) FROM analyses WHERE valid_until <= ?)
           + (SELECT count(*) FROM analyses WHERE valid_from > ? AND valid_until > ?)`,
      )
      .pluck()
      .get(clock, clock, clock) as number
    return Promise.resolve(row)
  }

  otherConfigAnalyses(config: string): Promise<number> {
    return Promise.resolve(
      this.conn.db.prepare('SELECT count(*) FROM analyses WHERE config <> ?').pluck().get(config) as number,
    )
  }

  suiteHealth(
    since: number,
    suite?: string,
  ): Promise<{ suite: string; lastFailureAt: number | null; lastRunAt: number | null }[]> {
    const db = this.conn.db
    const params = suite === undefined ? [since] : [since, suite]
    const failures = db
      .prepare(
        `SELECT t.suite AS suite, max(a.window_failure_at) AS at FROM analyses a JOIN tests t ON t.id = a.test
         WHERE a.last_run_at >= ? AND a.verdict IS NOT NULL ${suite === undefined ? '' : 'AND t.suite = ?'}
         GROUP BY t.suite`,
      )
      .all(...params) as { suite: string; at: number | null }[]
    const runs = db
      .prepare(
        `SELECT suite, max(at) AS at FROM runs WHERE at >= ? ${suite === undefined ? '' : 'AND suite = ?'} GROUP BY suite`,
      )
      .all(...params) as { suite: string; at: number }[]
    return Promise.resolve(suiteHealthOf(failures, runs))
  }

  timeLost(filter: AnalysisFilter): Promise<number> {
    const { where, params } = windowWhere(filter)
    const sql = `SELECT coalesce(sum(a.time_lost_ms), 0) FROM analyses a ${testsJoin(filter)} WHERE ${where}`
    return Promise.resolve(
      this.conn.db
        .prepare(sql)
        .pluck()
        .get(...params) as number,
    )
  }

  brokenSuites(since: number, suite?: string): Promise<string[]> {
    return Promise.resolve(
      this.conn.db
        .prepare(
          `SELECT DISTINCT t.suite FROM analyses a JOIN tests t ON t.id = a.test
           WHERE a.verdict = 'broken' AND a.last_run_at >= ? ${suite === undefined ? '' : 'AND t.suite = ?'}`,
        )
        .pluck()
        .all(...(suite === undefined ? [since] : [since, suite])) as string[],
    )
  }

  trendDays(
    since: number,
    suite?: string,
  ): Promise<{ day: number; flaky: number; broken: number; tests: number; runs: number }[]> {
    const db = this.conn.db
    const params = suite === undefined ? [since] : [since, suite]
    const shares = db
      .prepare(
        `SELECT a.days FROM analyses a ${testsJoin({ suite })}
         WHERE a.last_run_at >= ? AND a.days IS NOT NULL ${suite === undefined ? '' : 'AND t.suite = ?'}`,
      )
      .pluck()
      .iterate(...params) as Iterable<string>
    const runs = db
      .prepare(`SELECT at FROM runs WHERE at >= ? ${suite === undefined ? '' : 'AND suite = ?'}`)
      .pluck()
      .iterate(...params) as Iterable<number>
    return Promise.resolve(sumTrendDays(shares, runs, since))
  }

  windowRuns(since: number, suite?: string): Promise<{ runs: number; newest: number | null }> {
    return Promise.resolve(
      this.conn.db
        .prepare(
          `SELECT count(*) AS runs, max(at) AS newest FROM runs WHERE at >= ? ${suite === undefined ? '' : 'AND suite = ?'}`,
        )
        .get(...(suite === undefined ? [since] : [since, suite])) as { runs: number; newest: number | null },
    )
  }

  windowTests(filter: WindowTestFilter & { offset: number; limit: number | null }): Promise<WindowTestRow[]> {
    const { where, params } = windowTestsWhere(filter)
    const page = filter.limit === null ? '' : `LIMIT ${Math.trunc(filter.limit)} OFFSET ${Math.trunc(filter.offset)}`
    const rows = this.conn.db
      .prepare(
        `SELECT t.test_id AS testId, t.suite, t.module, t.name, t.file, a.verdict, a.score, a.pass_rate AS passRate,
           a.flip_rate AS flipRate, a.runs, a.failures, a.last_failure_at AS lastFailureAt,
           a.window_failure_at AS windowFailureAt
         FROM analyses a JOIN tests t ON t.id = a.test WHERE ${where} ORDER BY ${analyzeOrderSql('')} ${page}`,
      )
      .all(...params) as WindowTestRow[]
    return Promise.resolve(filter.limit === null && filter.offset > 0 ? rows.slice(filter.offset) : rows)
  }

  countWindowTests(filter: WindowTestFilter): Promise<number> {
    const { where, params } = windowTestsWhere(filter)
    return Promise.resolve(
      this.conn.db
        .prepare(`SELECT count(*) FROM analyses a ${testsJoin(filter)} WHERE ${where}`)
        .pluck()
        .get(...params) as number,
    )
  }

  windowFiles(filter: WindowTestFilter): Promise<WindowFileCount[]> {
    const { where, params } = windowTestsWhere(filter)
    return Promise.resolve(
      this.conn.db
        .prepare(
          `SELECT t.suite, t.module, t.file, a.verdict, count(*) AS tests FROM analyses a JOIN tests t ON t.id = a.test
           WHERE ${where} GROUP BY t.suite, t.module, t.file, a.verdict`,
        )
        .all(...params) as WindowFileCount[],
    )
  }

  analysisBacklog(clock: number): Promise<{ rows: number; due: number }> {
    const row = this.conn.db
      .prepare('SELECT count(*) AS rows, coalesce(sum(valid_until <= ? OR valid_from > ?), 0) AS due FROM analyses')
      .get(clock, clock) as { rows: number; due: number }
    return Promise.resolve(row)
  }
}

/** The WHERE of the window reads: tests analysed with a result since the window's start, narrowed as asked. */
function windowWhere(f: AnalysisFilter): { where: string; params: unknown[] } {
  const parts = ['a.last_run_at >= ?', 'a.verdict IS NOT NULL']
  const params: unknown[] = [f.since]
  if (f.verdict !== undefined) {
    parts.push('a.verdict = ?')
    params.push(f.verdict)
  }
  if (f.search !== undefined) {
    parts.push('instr(lower(t.test_id), ?) > 0')
    params.push(f.search.toLowerCase())
  }
  if (f.suite !== undefined) {
    parts.push('t.suite = ?')
    params.push(f.suite)
  }
  if (f.testIds !== undefined) {
    parts.push('t.test_id IN (SELECT value FROM json_each(?))')
    params.push(JSON.stringify(f.testIds.slice(0, ANALYSIS_BATCH)))
  }
  return { where: parts.join(' AND '), params }
}

/** The WHERE of {@link SqliteAnalyses.windowTests}: the window's rows, narrowed as asked. */
function windowTestsWhere(f: WindowTestFilter): { where: string; params: unknown[] } {
  const { where, params } = windowWhere({ since: f.since, search: f.search, suite: f.suite, testIds: f.testIds })
  const parts = [where]
  if (f.verdicts !== undefined) {
    parts.push('a.verdict IN (SELECT value FROM json_each(?))')
    params.push(JSON.stringify(f.verdicts))
  }
  if (f.costly !== undefined) parts.push(f.costly ? COSTLY_SQL : `NOT ${COSTLY_SQL}`)
  return { where: parts.join(' AND '), params }
}
