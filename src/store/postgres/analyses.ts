import {
  ANALYSIS_BATCH,
  ANALYSIS_LEASE_MS,
  analysisOrderSql,
  suiteHealthOf,
  sumTrendDays,
  verdictCounts,
} from '../analyses.js'
import type {
  AnalysisClaim,
  AnalysisClaimOptions,
  AnalysisFilter,
  AnalysisPage,
  AnalysisPageRow,
  AnalysisRead,
  AnalysisStore,
  PersistedAnalysis,
  RunFile,
  TestFile,
  WindowFileCount,
  WindowTestFilter,
  WindowTestRow,
} from '../analyses.js'
import type { VerdictKind } from '../../model.js'
import { analyzeOrderSql, COSTLY_SQL, testsJoin } from '../analyses.js'
import type { PgConnection } from './connection.js'
import type { PgQueryable } from './driver.js'

/** The same table as SQLite's (`sqlite/analyses.ts`), columns widest first. */
export const POSTGRES_ANALYSES_SCHEMA = `
  CREATE TABLE analyses (
    test integer PRIMARY KEY,
    score double precision,
    flip_rate double precision,
    pass_rate double precision,
    last_failure_at bigint,
    first_run_at bigint,
    last_run_at bigint,
    as_of bigint NOT NULL DEFAULT 0,
    valid_from bigint NOT NULL DEFAULT 0,
    valid_until bigint NOT NULL DEFAULT 0,
    version bigint NOT NULL DEFAULT 1,
    lease_until bigint NOT NULL DEFAULT 0,
    runs integer,
    failures integer,
    verdict text,
    flip_rate_class text,
    last_status text,
    config text NOT NULL DEFAULT '',
    analysis text
  );
  CREATE INDEX analyses_due ON analyses (valid_until);
  CREATE INDEX analyses_ahead ON analyses (valid_from);
  CREATE INDEX analyses_first ON analyses (first_run_at);
  CREATE INDEX analyses_rank ON analyses (verdict, score DESC, flip_rate DESC);
  CREATE INDEX tests_file ON tests (suite, module);
  INSERT INTO analyses (test) SELECT id FROM tests;
`

/** Migration 0019: what the server's reads need besides the JSON; every row is analysed again to fill them. */
export const POSTGRES_ANALYSES_READS = `
  ALTER TABLE analyses ADD COLUMN streak_since bigint, ADD COLUMN window_failure_at bigint, ADD COLUMN streak integer,
    ADD COLUMN time_lost_ms double precision, ADD COLUMN pass_rate_class text, ADD COLUMN last5 text,
    ADD COLUMN days text;
  CREATE INDEX analyses_window ON analyses (last_run_at);
  UPDATE analyses SET valid_until = 0, version = version + 1;
`

/**
 * Migration 0020: the indexes of the server's default reads. The leaderboard's and heatmap's default order
 * (`analysisOrderSql('flaky', 'desc')`, written here as the query writes it, so that the planner matches it) is
 * read in index order, a page at a time; the window's per-verdict counts are an index-only range. The covering
 * window index replaces the plain one.
 */
export const POSTGRES_READ_INDEXES = `
  CREATE INDEX analyses_order ON analyses (
    (CASE verdict WHEN 'flaky' THEN 0 WHEN 'broken' THEN 1 WHEN 'healthy' THEN 2 ELSE 3 END),
    score DESC, failures DESC, flip_rate DESC
  ) WHERE verdict IS NOT NULL;
  CREATE INDEX analyses_window_verdict ON analyses (last_run_at) INCLUDE (verdict);
  DROP INDEX analyses_window;
`

/** The database's clock in epoch ms: leases compare against one clock, whichever instance set them. */
const DB_NOW = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

/**
 * Marks stale, creating rows as needed, every test of the files of the tests selected, in key order: two writers
 * marking overlapping files lock rows in one order and never deadlock each other. Refreshes never wait for these
 * locks (they skip locked rows), so they cannot deadlock with a writer either.
 */
const markFiles = (tests: string) => `
  INSERT INTO analyses (test)
    SELECT t.id FROM tests t WHERE (t.suite, t.module) IN (SELECT s.suite, s.module FROM tests s WHERE s.id IN (${tests}))
    ORDER BY t.id
  ON CONFLICT (test) DO UPDATE SET valid_until = 0, version = analyses.version + 1, lease_until = 0`

/**
 * Marks stale the rows of every test with a result in these runs, and of their file-mates (marked in one statement):
 * called once by each write of results, inside its transaction, after the write, and by prune before a delete.
 *
 * The tests are found first and marked by key. Found and marked in one statement, the join of the runs to their
 * results was estimated at a few rows (a run's key and its `at` counted as independent), and at 10^8 results the
 * planner matched the store's 20,000 tests against a batch's 250,000 results in nested loops: one prune batch of 50
 * runs took 133 s (issue 32). By key, each step is estimated on what it is given.
 */
export async function markRunsStalePg(db: PgQueryable, runKeys: readonly number[]): Promise<void> {
  if (runKeys.length === 0) return
  // The runs' times beside their keys: each run's results are in its own day's partition, which the planner then
  // picks at plan time, so the lookup costs a day's rows at most, whatever the history.
  const { rows: days } = await db.query<{ at: string | number }>(
    'SELECT DISTINCT at FROM runs WHERE id = ANY($1::integer[])',
    [runKeys],
  )
  if (days.length === 0) return
  const { rows } = await db.query<{ test: number }>(
    'SELECT DISTINCT test FROM results WHERE run = ANY($1::integer[]) AND at = ANY($2::bigint[])',
    [runKeys, days.map((d) => d.at)],
  )
  await markTestsStalePg(
    db,
    rows.map((r) => r.test),
  )
}

/**
 * Marks stale the rows of every test whose first stored result is before `before`, and of their file-mates: what
 * dropping the partitions of days before it takes results from. A row not analysed yet is stale already.
 */
export async function markStaleBeforePg(db: PgQueryable, before: number): Promise<void> {
  await db.query(markFiles('SELECT test FROM analyses WHERE first_run_at < $1'), [before])
}

/** Marks stale the rows of these tests (by key) and of their file-mates, inside the caller's transaction. */
export async function markTestsStalePg(db: PgQueryable, testKeys: readonly number[]): Promise<void> {
  if (testKeys.length === 0) return
  await db.query(markFiles('SELECT unnest($1::integer[])'), [testKeys])
}

type ReadRow = [
  id: number,
  testId: string,
  suite: string,
  module: string,
  name: string,
  file: string | null,
  exact: boolean,
  analysis: string | null,
  verdict: AnalysisRead['verdict'],
  score: number | null,
  flipRate: number | null,
  flipRateClass: AnalysisRead['flipRateClass'],
]

/** Tests read per page of `readAnalyses`. */
const READ_PAGE = 5000

/** The persisted analyses of a PostgreSQL store (see `store/analyses.ts`). */
export class PgAnalyses implements AnalysisStore {
  constructor(private readonly conn: PgConnection) {}

  claimAnalyses(opts: AnalysisClaimOptions): Promise<AnalysisClaim[]> {
    const free = opts.leased === true && opts.files !== undefined ? '' : ' AND a.lease_until < now.ms'
    const due = `(a.valid_until <= $1 OR a.valid_from > $1)${free}`
    if (opts.files?.length === 1) {
      // One file: its rows in key order straight from the index, stopping at the limit.
      const [file] = opts.files
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id, now
         WHERE t.suite = $3 AND t.module = $4 AND ${due}
         ORDER BY t.id LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
        [opts.clock, opts.limit, file!.suite, file!.module],
      )
    }
    if (opts.files !== undefined) {
      const files = opts.files.slice(0, ANALYSIS_BATCH)
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id, now
         WHERE (t.suite, t.module) IN (SELECT * FROM unnest($3::text[], $4::text[])) AND ${due}
         ORDER BY t.suite, t.module, t.id LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
        [opts.clock, opts.limit, files.map((f) => f.suite), files.map((f) => f.module)],
      )
    }
    if (opts.testIds !== undefined) {
      return this.claim(
        `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id, now
         WHERE t.test_id = ANY($3::text[]) AND (${due} OR (a.config <> $4 AND a.lease_until < now.ms))
         LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
        [opts.clock, opts.limit, opts.testIds.slice(0, ANALYSIS_BATCH), opts.config ?? null],
      )
    }
    return this.claim(
      `SELECT a.test FROM analyses a, now WHERE ${due} ORDER BY a.valid_until LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
      [opts.clock, opts.limit],
    )
  }

  async releaseClaims(claims: AnalysisClaim[]): Promise<void> {
    for (let i = 0; i < claims.length; i += ANALYSIS_BATCH) {
      const batch = claims.slice(i, i + ANALYSIS_BATCH)
      // Locked rows are skipped, as writes skip them: an upload marking one ends its lease itself.
      await this.conn.db.query(
        `WITH free AS (
           SELECT a.test FROM analyses a JOIN tests t ON t.id = a.test
             JOIN unnest($1::text[], $2::bigint[]) AS v(test_id, version) ON v.test_id = t.test_id
           WHERE a.version = v.version FOR UPDATE OF a SKIP LOCKED
         )
         UPDATE analyses a SET lease_until = 0 FROM free f WHERE a.test = f.test`,
        [batch.map((c) => c.testId), batch.map((c) => c.version)],
      )
    }
  }

  async runFiles(runIds: string[], after: TestFile | null, limit: number): Promise<RunFile[]> {
    // `at` beside the run's key: each run's results are looked up in its own day's partition only.
    const { rows } = await this.conn.db.query<RunFile>(
      `SELECT f.suite, f.module,
         (SELECT count(*) FROM tests c WHERE c.suite = f.suite AND c.module = f.module)::integer AS tests
       FROM (SELECT DISTINCT t.suite, t.module FROM runs x JOIN results r ON r.run = x.id AND r.at = x.at
           JOIN tests t ON t.id = r.test
         WHERE x.run_id = ANY($1::text[]) AND ($2::text IS NULL OR (t.suite, t.module) > ($2, $3::text))
         ORDER BY t.suite, t.module LIMIT $4) f
       ORDER BY f.suite, f.module`,
      [runIds.slice(0, ANALYSIS_BATCH), after?.suite ?? null, after?.module ?? null, limit],
    )
    return rows
  }

  async dueFiles(clock: number, limit: number): Promise<RunFile[]> {
    const { rows } = await this.conn.db.query<RunFile>(
      `SELECT f.suite, f.module,
         (SELECT count(*) FROM tests c WHERE c.suite = f.suite AND c.module = f.module)::integer AS tests
       FROM (SELECT DISTINCT t.suite, t.module FROM tests t WHERE t.id IN (
         SELECT test FROM analyses WHERE (valid_until <= $1 OR valid_from > $1) AND lease_until < ${DB_NOW}
         ORDER BY valid_until LIMIT $2)) f
       ORDER BY f.suite, f.module`,
      [clock, limit],
    )
    return rows
  }

  claimOtherConfig(config: string, limit: number): Promise<AnalysisClaim[]> {
    // Whole files, those of the first rows found, in file order: see `AnalysisStore.claimOtherConfig`.
    return this.claim(
      `SELECT a.test FROM tests t JOIN analyses a ON a.test = t.id, now
       WHERE (t.suite, t.module) IN (SELECT s.suite, s.module FROM tests s WHERE s.id IN (
           SELECT o.test FROM analyses o, now WHERE o.config <> $1 AND o.lease_until < now.ms LIMIT $2))
         AND a.config <> $1 AND a.lease_until < now.ms
       ORDER BY t.suite, t.module, t.id LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
      [config, limit],
    )
  }

  /** Rows another claim holds are skipped, not waited for: two instances claiming at once take different rows. */
  private async claim(pick: string, params: unknown[]): Promise<AnalysisClaim[]> {
    const lease = params.length + 1
    const { rows } = await this.conn.db.query<{ test_id: string | null; version: number }>(
      `WITH now AS (SELECT ${DB_NOW} AS ms), picked AS (${pick})
       UPDATE analyses a SET lease_until = (SELECT ms FROM now) + $${lease} FROM picked WHERE a.test = picked.test
       RETURNING (SELECT test_id FROM tests WHERE id = a.test) AS test_id, a.version`,
      [...params, ANALYSIS_LEASE_MS],
    )
    return rows.filter((r) => r.test_id !== null).map((r) => ({ testId: r.test_id!, version: r.version }))
  }

  async writeAnalyses(rows: PersistedAnalysis[]): Promise<number> {
    let written = 0
    for (let i = 0; i < rows.length; i += ANALYSIS_BATCH) {
      const batch = rows.slice(i, i + ANALYSIS_BATCH)
      const col = <T>(f: (r: PersistedAnalysis) => T) => batch.map(f)
      // A row an upload holds is being marked stale by it: skipped, never waited for (see markFiles).
      const { rowCount } = await this.conn.db.query(
        `WITH v AS (
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::double precision[],
             $7::double precision[], $8::text[], $9::integer[], $10::integer[], $11::double precision[], $12::text[],
             $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[],
             $19::text[], $20::text[], $21::integer[], $22::bigint[], $23::bigint[], $24::text[],
             $25::double precision[])
             AS v(test_id, version, analysis, config, verdict, score, flip_rate, flip_rate_class, runs, failures,
               pass_rate, last_status, last_failure_at, first_run_at, last_run_at, as_of, valid_from, valid_until,
               pass_rate_class, last5, streak, streak_since, window_failure_at, days, time_lost_ms)
         ), free AS (
           SELECT a.test, v.* FROM analyses a JOIN tests t ON t.id = a.test JOIN v ON v.test_id = t.test_id
           WHERE a.version = v.version FOR UPDATE OF a SKIP LOCKED
         )
         UPDATE analyses a SET analysis = f.analysis, config = f.config, verdict = f.verdict, score = f.score,
           flip_rate = f.flip_rate, flip_rate_class = f.flip_rate_class, runs = f.runs, failures = f.failures,
           pass_rate = f.pass_rate, last_status = f.last_status, last_failure_at = f.last_failure_at,
           first_run_at = f.first_run_at, last_run_at = f.last_run_at, as_of = f.as_of, valid_from = f.valid_from,
           valid_until = f.valid_until, pass_rate_class = f.pass_rate_class, last5 = f.last5, streak = f.streak,
           streak_since = f.streak_since, window_failure_at = f.window_failure_at, days = f.days,
           time_lost_ms = f.time_lost_ms, lease_until = 0
         FROM free f WHERE a.test = f.test AND a.version = f.version`,
        [
          col((r) => r.testId),
          col((r) => r.version),
          col((r) => r.analysis?.json ?? null),
          col((r) => r.config),
          col((r) => r.analysis?.summary.verdict ?? null),
          col((r) => r.analysis?.summary.score ?? null),
          col((r) => r.analysis?.summary.flipRate ?? null),
          col((r) => r.analysis?.summary.flipRateClass ?? null),
          col((r) => r.analysis?.summary.runs ?? null),
          col((r) => r.analysis?.summary.failures ?? null),
          col((r) => r.analysis?.summary.passRate ?? null),
          col((r) => r.analysis?.summary.lastStatus ?? null),
          col((r) => r.analysis?.summary.lastFailureAt ?? null),
          col((r) => r.analysis?.summary.firstRunAt ?? null),
          col((r) => r.analysis?.summary.lastRunAt ?? null),
          col((r) => r.asOf),
          col((r) => r.validFrom),
          col((r) => r.validUntil),
          col((r) => r.analysis?.summary.passRateClass ?? null),
          col((r) => r.analysis?.summary.last5 ?? null),
          col((r) => r.analysis?.summary.streak ?? null),
          col((r) => r.analysis?.summary.streakSince ?? null),
          col((r) => r.analysis?.summary.windowFailureAt ?? null),
          col((r) => (r.analysis ? JSON.stringify(r.analysis.summary.days) : null)),
          col((r) => r.analysis?.summary.timeLostMs ?? null),
        ],
      )
      written += rowCount ?? 0
    }
    return written
  }

  async fileMates(testIds: string[]): Promise<string[]> {
    const out = new Set<string>()
    for (let i = 0; i < testIds.length; i += ANALYSIS_BATCH) {
      const { rows } = await this.conn.db.query<{ test_id: string }>(
        `SELECT t.test_id FROM tests t WHERE (t.suite, t.module) IN (
           SELECT s.suite, s.module FROM tests s WHERE s.test_id = ANY($1::text[]))`,
        [testIds.slice(i, i + ANALYSIS_BATCH)],
      )
      for (const r of rows) out.add(r.test_id)
    }
    return [...out]
  }

  async runCounts(runIds: string[]): Promise<{ runId: string; total: number; failed: number }[]> {
    const out: { runId: string; total: number; failed: number }[] = []
    for (let i = 0; i < runIds.length; i += ANALYSIS_BATCH) {
      const { rows } = await this.conn.db.query<{ runId: string; total: number; failed: number }>(
        'SELECT run_id AS "runId", total, failed FROM runs WHERE run_id = ANY($1::text[])',
        [runIds.slice(i, i + ANALYSIS_BATCH)],
      )
      for (const r of rows) out.push(r)
    }
    return out
  }

  async *readAnalyses(opts: { clock: number; config: string; suite?: string }): AsyncIterable<AnalysisRead> {
    let after = -1
    for (;;) {
      const { rows } = await this.conn.db.query<ReadRow>({
        text: `SELECT t.id, t.test_id, t.suite, t.module, t.name, t.file, a.test IS NOT NULL,
                 a.analysis, a.verdict, a.score, a.flip_rate, a.flip_rate_class
               FROM tests t LEFT JOIN analyses a
                 ON a.test = t.id AND a.config = $1 AND a.valid_from <= $2 AND a.valid_until > $2
               WHERE t.id > $3 ${opts.suite === undefined ? '' : 'AND t.suite = $4'}
               ORDER BY t.id LIMIT ${READ_PAGE}`,
        values: [opts.config, opts.clock, after, ...(opts.suite === undefined ? [] : [opts.suite])],
        rowMode: 'array',
      })
      for (const [, testId, suite, module, name, file, exact, json, verdict, score, flipRate, flipRateClass] of rows) {
        yield { testId, suite, module, name, file, exact, json, verdict, score, flipRate, flipRateClass }
      }
      if (rows.length < READ_PAGE) return
      after = rows[rows.length - 1]![0]
    }
  }

  async countExact(opts: { clock: number; config: string; suite?: string }): Promise<{ tests: number; exact: number }> {
    const { rows } = await this.conn.db.query<{ tests: number; exact: number }>(
      `SELECT count(*)::integer AS tests, count(a.test)::integer AS exact FROM tests t LEFT JOIN analyses a
         ON a.test = t.id AND a.config = $1 AND a.valid_from <= $2 AND a.valid_until > $2
       ${opts.suite === undefined ? '' : 'WHERE t.suite = $3'}`,
      [opts.config, opts.clock, ...(opts.suite === undefined ? [] : [opts.suite])],
    )
    return rows[0]!
  }

  async pageAnalyses(page: AnalysisPage): Promise<AnalysisPageRow[]> {
    const { where, params } = windowWhere(page)
    const limit = page.limit === null ? '' : `LIMIT ${Math.trunc(page.limit)}`
    const { rows } = await this.conn.db.query<AnalysisPageRow>(
      `SELECT t.test_id AS "testId", t.suite, t.module, t.name, t.file,
         ${page.refsOnly ? 'NULL' : 'a.analysis'} AS json, a.verdict, a.score, coalesce(a.last5, '') AS last5,
         coalesce(a.streak, 0) AS streak, a.streak_since AS "streakSince"
       FROM analyses a JOIN tests t ON t.id = a.test WHERE ${where}
       ORDER BY ${analysisOrderSql(page.sort, page.order, ' COLLATE "C"')} ${limit} OFFSET ${Math.trunc(page.offset)}`,
      params,
    )
    for (const r of rows) if (r.streakSince !== null) r.streakSince = Number(r.streakSince)
    return rows
  }

  async countAnalyses(filter: AnalysisFilter): Promise<Record<VerdictKind, number>> {
    const { where, params } = windowWhere(filter)
    const { rows } = await this.conn.db.query<{ verdict: VerdictKind; n: string }>(
      `SELECT a.verdict, count(*) AS n FROM analyses a ${testsJoin(filter)} WHERE ${where} GROUP BY a.verdict`,
      params,
    )
    return verdictCounts(rows)
  }

  async dueAnalyses(clock: number): Promise<number> {
    const { rows } = await this.conn.db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM analyses WHERE valid_until <= $1)
         + (SELECT count(*) FROM analyses WHERE valid_from > $1 AND valid_until > $1))::integer AS n`,
      [clock],
    )
    return rows[0]!.n
  }

  async otherConfigAnalyses(config: string): Promise<number> {
    const { rows } = await this.conn.db.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM analyses WHERE config <> $1',
      [config],
    )
    return rows[0]!.n
  }

  async suiteHealth(
    since: number,
    suite?: string,
  ): Promise<{ suite: string; lastFailureAt: number | null; lastRunAt: number | null }[]> {
    const one = suite === undefined ? '' : 'AND suite = $2'
    const params = suite === undefined ? [since] : [since, suite]
    const [failures, runs] = await Promise.all([
      this.conn.db.query<{ suite: string; at: string | null }>(
        `SELECT t.suite, max(a.window_failure_at) AS at FROM analyses a JOIN tests t ON t.id = a.test
         WHERE a.last_run_at >= $1 AND a.verdict IS NOT NULL ${suite === undefined ? '' : 'AND t.suite = $2'}
         GROUP BY t.suite`,
        params,
      ),
      this.conn.db.query<{ suite: string; at: string }>(
        `SELECT suite, max(at) AS at FROM runs WHERE at >= $1 ${one} GROUP BY suite`,
        params,
      ),
    ])
    return suiteHealthOf(failures.rows, runs.rows)
  }

  async timeLost(filter: AnalysisFilter): Promise<number> {
    const { where, params } = windowWhere(filter)
    const { rows } = await this.conn.db.query<{ ms: number }>(
      `SELECT coalesce(sum(a.time_lost_ms), 0)::double precision AS ms
       FROM analyses a ${testsJoin(filter)} WHERE ${where}`,
      params,
    )
    return rows[0]!.ms
  }

  async brokenSuites(since: number, suite?: string): Promise<string[]> {
    const { rows } = await this.conn.db.query<{ suite: string }>(
      `SELECT DISTINCT t.suite FROM analyses a JOIN tests t ON t.id = a.test
       WHERE a.verdict = 'broken' AND a.last_run_at >= $1 ${suite === undefined ? '' : 'AND t.suite = $2'}`,
      suite === undefined ? [since] : [since, suite],
    )
    return rows.map((r) => r.suite)
  }

  async trendDays(
    since: number,
    suite?: string,
  ): Promise<{ day: number; flaky: number; broken: number; tests: number; runs: number }[]> {
    const params = suite === undefined ? [since] : [since, suite]
    const [shares, runs] = await Promise.all([
      this.conn.db.query<{ days: string }>(
        `SELECT a.days FROM analyses a ${testsJoin({ suite })}
         WHERE a.last_run_at >= $1 AND a.days IS NOT NULL ${suite === undefined ? '' : 'AND t.suite = $2'}`,
        params,
      ),
      this.conn.db.query<{ at: string }>(
        `SELECT at FROM runs WHERE at >= $1 ${suite === undefined ? '' : 'AND suite = $2'}`,
        params,
      ),
    ])
    return sumTrendDays(
      shares.rows.map((r) => r.days),
      runs.rows.map((r) => r.at),
      since,
    )
  }

  async windowRuns(since: number, suite?: string): Promise<{ runs: number; newest: number | null }> {
    const { rows } = await this.conn.db.query<{ runs: number; newest: string | null }>(
      `SELECT count(*)::integer AS runs, max(at) AS newest FROM runs
       WHERE at >= $1 ${suite === undefined ? '' : 'AND suite = $2'}`,
      suite === undefined ? [since] : [since, suite],
    )
    return { runs: rows[0]!.runs, newest: rows[0]!.newest === null ? null : Number(rows[0]!.newest) }
  }

  async windowTests(filter: WindowTestFilter & { offset: number; limit: number | null }): Promise<WindowTestRow[]> {
    const { where, params } = windowTestsWhere(filter)
    const limit = filter.limit === null ? '' : `LIMIT ${Math.trunc(filter.limit)}`
    const { rows } = await this.conn.db.query<WindowTestRow>(
      `SELECT t.test_id AS "testId", t.suite, t.module, t.name, t.file, a.verdict, a.score, a.pass_rate AS "passRate",
         a.flip_rate AS "flipRate", a.runs, a.failures, a.last_failure_at AS "lastFailureAt",
         a.window_failure_at AS "windowFailureAt"
       FROM analyses a JOIN tests t ON t.id = a.test WHERE ${where}
       ORDER BY ${analyzeOrderSql(' COLLATE "C"')} ${limit} OFFSET ${Math.trunc(filter.offset)}`,
      params,
    )
    for (const r of rows) {
      if (r.lastFailureAt !== null) r.lastFailureAt = Number(r.lastFailureAt)
      if (r.windowFailureAt !== null) r.windowFailureAt = Number(r.windowFailureAt)
    }
    return rows
  }

  async countWindowTests(filter: WindowTestFilter): Promise<number> {
    const { where, params } = windowTestsWhere(filter)
    const { rows } = await this.conn.db.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM analyses a ${testsJoin(filter)} WHERE ${where}`,
      params,
    )
    return rows[0]!.n
  }

  async windowFiles(filter: WindowTestFilter): Promise<WindowFileCount[]> {
    const { where, params } = windowTestsWhere(filter)
    const { rows } = await this.conn.db.query<WindowFileCount>(
      `SELECT t.suite, t.module, t.file, a.verdict, count(*)::integer AS tests
       FROM analyses a JOIN tests t ON t.id = a.test WHERE ${where} GROUP BY t.suite, t.module, t.file, a.verdict`,
      params,
    )
    return rows
  }

  async analysisBacklog(clock: number): Promise<{ rows: number; due: number }> {
    const { rows } = await this.conn.db.query<{ rows: number; due: number }>(
      'SELECT count(*)::integer AS rows, count(*) FILTER (WHERE valid_until <= $1 OR valid_from > $1)::integer AS due FROM analyses',
      [clock],
    )
    return rows[0]!
  }
}

/** The WHERE of the window reads: tests analysed with a result since the window's start, narrowed as asked. */
function windowWhere(f: AnalysisFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [f.since]
  const parts = ['a.last_run_at >= $1', 'a.verdict IS NOT NULL']
  if (f.verdict !== undefined) {
    params.push(f.verdict)
    parts.push(`a.verdict = $${params.length}`)
  }
  if (f.search !== undefined) {
    params.push(f.search.toLowerCase())
    parts.push(`strpos(lower(t.test_id), $${params.length}) > 0`)
  }
  if (f.suite !== undefined) {
    params.push(f.suite)
    parts.push(`t.suite = $${params.length}`)
  }
  if (f.testIds !== undefined) {
    params.push(f.testIds.slice(0, ANALYSIS_BATCH))
    parts.push(`t.test_id = ANY($${params.length}::text[])`)
  }
  return { where: parts.join(' AND '), params }
}

/** The WHERE of {@link PgAnalyses.windowTests}: the window's rows, narrowed as asked. */
function windowTestsWhere(f: WindowTestFilter): { where: string; params: unknown[] } {
  const { where, params } = windowWhere({ since: f.since, search: f.search, suite: f.suite, testIds: f.testIds })
  const parts = [where]
  if (f.verdicts !== undefined) {
    params.push([...f.verdicts])
    parts.push(`a.verdict = ANY($${params.length}::text[])`)
  }
  if (f.costly !== undefined) parts.push(f.costly ? COSTLY_SQL : `NOT ${COSTLY_SQL}`)
  return { where: parts.join(' AND '), params }
}
