import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { AnalysisFilter, AnalysisPage } from '../../src/store/analyses.js'
import type { PgConnection } from '../../src/store/postgres/connection.js'
import { PgAnalyses } from '../../src/store/postgres/analyses.js'
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js'
import type { SqliteConnection } from '../../src/store/sqlite/connection.js'
import { SqliteAnalyses } from '../../src/store/sqlite/analyses.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { tempDir } from '../server/helpers.js'
import { resolveTestPg, schemas } from './pg-helpers.js'

/**
 * Migration 0020's indexes serve the server's default reads as the queries write them: the leaderboard's default
 * order is read in index order (no sort of the window's rows), and the per-verdict counts by an index range. The
 * plans are those of the very statements the stores run, captured on their way to the database.
 */

const TESTS = 20_000
const SINCE = 1_000_000
/** The default page, as the leaderboard and the heatmap ask for it. */
const PAGE: AnalysisPage = { since: SINCE, sort: 'flaky', order: 'desc', offset: 0, limit: 50 }
const COUNTS: AnalysisFilter = { since: SINCE }

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/**
 * Tests and their analyses as a store of `TESTS` tests has them: 3% flaky, 1% broken, most in the window, each row
 * with its analysis JSON (which makes a scan of the table cost what it does).
 */
const FILL = (series: string) => `
  INSERT INTO tests (test_id, suite, module, name) SELECT 'unit::m' || (i / 10) || '::t' || i, 'unit', 'm' || (i / 10), 't' || i
    FROM ${series} AS i;
  INSERT INTO analyses (test, analysis, verdict, score, failures, flip_rate, last_run_at, valid_until)
    SELECT id, '{"test_id":"' || test_id || '","evidence":"${'x'.repeat(600)}"}', CASE WHEN id % 33 = 0 THEN 'flaky' WHEN id % 100 = 1 THEN 'broken' ELSE 'healthy' END,
      (id % 997) / 997.0, id % 7, (id % 89) / 89.0, CASE WHEN id % 10 = 0 THEN 0 ELSE ${SINCE} + id END, 1
    FROM tests`

const pg = await resolveTestPg()
const pgSchemas = pg.url === undefined ? null : schemas(pg.url)
if (pgSchemas) afterAll(() => pgSchemas.dropAll())

describe.skipIf(!pgSchemas)('read indexes on PostgreSQL', () => {
  /** The plan of each statement the store's analysis reads send, instead of running it. */
  async function plans(store: PostgresStore, read: (a: PgAnalyses) => Promise<unknown>): Promise<string[]> {
    const out: string[] = []
    const db = {
      query: async (text: string, params: unknown[]) => {
        const rows = await store.rawQuery<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, ...params)
        out.push(rows.map((r) => r['QUERY PLAN']).join('\n'))
        return { rows: [] }
      },
    }
    await read(new PgAnalyses({ db } as unknown as PgConnection))
    return out
  }

  it('reads the default page in index order and counts the window by an index-only range', async () => {
    const store = await openPostgresStore(pgSchemas!.fresh())
    cleanups.push(() => store.close())
    await store.rawQuery(`DELETE FROM analyses`)
    await store.rawQuery(FILL(`generate_series(1, ${TESTS})`))
    await store.rawQuery('ANALYZE tests')
    await store.rawQuery('ANALYZE analyses')
    await store.rawQuery('VACUUM analyses')
    const [page] = await plans(store, (a) => a.pageAnalyses(PAGE))
    expect(page).toContain('Index Scan using analyses_order on analyses')
    // No sort of the window's rows: at most the incremental one of the test-id tie-break within equal keys.
    expect(page!.split('\n').filter((l) => /(?<!Incremental )Sort\b/.test(l) && !/Sort Key|Presorted/.test(l))).toEqual(
      [],
    )
    expect(page).not.toMatch(/Seq Scan on analyses/)
    const [counts] = await plans(store, (a) => a.countAnalyses(COUNTS))
    expect(counts).toContain('Index Only Scan using analyses_window_verdict on analyses')
    expect(counts).not.toMatch(/Seq Scan/)
  })
})

describe('read indexes on SQLite', () => {
  function plans(store: SqliteStore, read: (a: SqliteAnalyses) => Promise<unknown>): Promise<string[]> {
    const out: string[] = []
    const plan = (sql: string, params: unknown[]) => {
      const rows = store.rawQuery(`EXPLAIN QUERY PLAN ${sql}`, ...params) as { detail: string }[]
      out.push(rows.map((r) => r.detail).join('\n'))
    }
    const prepare = (sql: string) => ({
      all: (...params: unknown[]) => (plan(sql, params), []),
      get: (...params: unknown[]) => (plan(sql, params), { runs: 0, newest: null }),
    })
    return read(new SqliteAnalyses({ db: { prepare } } as unknown as SqliteConnection)).then(() => out)
  }

  it('reads the default page in index order and counts the window from an index', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
    cleanups.push(() => store.close())
    store.rawRun('DELETE FROM analyses')
    const series = `(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TESTS}) SELECT i FROM n)`
    for (const sql of FILL(series).split(';')) store.rawRun(sql)
    store.rawRun('ANALYZE')
    const [page] = await plans(store, (a) => a.pageAnalyses(PAGE))
    expect(page).toMatch(/SCAN a USING INDEX analyses_order/)
    expect(page).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/)
    const [counts] = await plans(store, (a) => a.countAnalyses(COUNTS))
    expect(counts).toMatch(/USING COVERING INDEX analyses_window_verdict/)
  })

  it("reads a suite's runs in the window by one index range, and its tests by the tests' file index", async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
    cleanups.push(() => store.close())
    const [runs] = await plans(store, (a) => a.windowRuns(SINCE, 'unit'))
    expect(runs).toMatch(/USING (COVERING )?INDEX runs_suite \(suite=\? AND at>\?\)/)
    const [counts] = await plans(store, (a) => a.countAnalyses({ ...COUNTS, suite: 'unit' }))
    expect(counts).toMatch(/SEARCH t USING (COVERING )?INDEX tests_file \(suite=\?\)/)
  })
})
