import { afterAll, describe, expect, it } from 'vitest'
import pgModule from 'pg'
import { migratePostgres, POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { markRunsStalePg } from '../../src/store/postgres/analyses.js'
import { DAY_MS, dayOf, partitionName } from '../../src/store/postgres/partitions.js'
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js'
import type { Result } from '../../src/model.js'
import { startMaintenance } from '../../src/server/maintenance.js'
import type { MaintenanceOutcome } from '../../src/store/store.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'
import { connectTo, resolveTestPg, schemas, sql, withoutSchema } from './pg-helpers.js'

const pg = await resolveTestPg()

/** Noon UTC `days` days before today: far enough from midnight that a day's bounds never blur a test. */
function daysAgo(days: number): number {
  return (dayOf(Date.now()) - days) * DAY_MS + DAY_MS / 2
}

function iso(at: number): string {
  return new Date(at).toISOString()
}

/** Where each of a run's results is stored: partition name per row. */
async function partitionsOf(store: PostgresStore, table: 'results' | 'attempts', runId: string): Promise<string[]> {
  const rows = await store.rawQuery<{ p: string }>(
    `SELECT DISTINCT x.tableoid::regclass::text AS p FROM ${table} x JOIN runs r ON r.id = x.run WHERE r.run_id = $1`,
    runId,
  )
  return rows.map((r) => r.p.replace(/^.*\./, '')).sort()
}

async function count(store: PostgresStore, table: string): Promise<number> {
  const [row] = await store.rawQuery<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table}`)
  return row!.n
}

/** One run of `n` tests (every fifth one flaky, so with two attempts), started at `at`. */
function runOf(runId: string, at: number, n: number, status: Result['status'] = 'passed') {
  const results = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? flakyResult(`t${i}`) : result(`t${i}`, status)))
  return batch(runMeta(runId, iso(at)), results)
}

if (pg.skip !== undefined) {
  describe.skip(`postgres partitions (skipped: ${pg.skip})`, () => {
    it('partitions results by day', () => undefined)
  })
} else {
  const db = schemas(pg.url)
  afterAll(() => db.dropAll())

  describe('postgres time partitions', () => {
    it('stores a run in its day, and re-ingest and a second report of the run never double count', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        const at = daysAgo(0)
        const day = partitionName('results', dayOf(at))
        const report = runOf('r1', at, 20)
        expect((await store.ingestReport(report))[0]).toMatchObject({ outcome: 'ingested', results: 20 })
        expect((await store.ingestReport(report))[0]).toMatchObject({ outcome: 'duplicate', results: 0 })
        // Another file of the same run, overlapping: only its new tests go in.
        const more = batch(
          runMeta('r1', iso(at)),
          Array.from({ length: 20 }, (_, i) => result(`t${i + 10}`, 'failed')),
          'second-file',
        )
        expect((await store.ingestReport(more))[0]).toMatchObject({ outcome: 'ingested', results: 10 })
        expect(await count(store, 'results')).toBe(30)
        expect(await partitionsOf(store, 'results', 'r1')).toEqual([day])
        expect(await partitionsOf(store, 'attempts', 'r1')).toEqual([partitionName('attempts', dayOf(at))])
        expect((await store.runSummaries())[0]).toMatchObject({ runId: 'r1', total: 30, failed: 10 })
        expect(await store.getAttempts('unit::mod::t0', 'r1')).toHaveLength(2)
      } finally {
        await store.close()
      }
    })

    it('merges two writers of one run at once, each result stored once, in the run’s partition', async () => {
      const url = db.fresh()
      const [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)])
      try {
        const at = daysAgo(0)
        const run = runMeta('job', iso(at))
        const names = Array.from({ length: 400 }, (_, i) => `t${i}`)
        const [[oa], [ob]] = await Promise.all([
          a.ingestReport(
            batch(
              run,
              names.slice(0, 250).map((n) => flakyResult(n)),
              'file-a',
            ),
          ),
          b.ingestReport(
            batch(
              run,
              names.slice(150).map((n) => flakyResult(n)),
              'file-b',
            ),
          ),
        ])
        expect(oa!.results + ob!.results).toBe(400)
        expect(oa!.attempts + ob!.attempts).toBe(800)
        expect(await count(a, 'results')).toBe(400)
        expect(await count(a, 'attempts')).toBe(800)
        expect(await a.rawQuery('SELECT run, test FROM results GROUP BY run, test HAVING count(*) > 1')).toEqual([])
        expect(await partitionsOf(a, 'results', 'job')).toEqual([partitionName('results', dayOf(at))])
      } finally {
        await a.close()
        await b.close()
      }
    })

    it('moves a run’s rows across partitions when the report states its start late', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        const at = daysAgo(3)
        const unknown = { ...runMeta('late', iso(at)), startedAt: null }
        async function* gen() {
          yield await Promise.resolve([{ run: unknown, results: [flakyResult('a')] }])
          yield await Promise.resolve([{ run: unknown, results: [result('b', 'failed')] }])
        }
        const runs = () => [runMeta('late', iso(at))]
        await store.ingestStream({ file: 'f', contentHash: 'h', chunks: gen(), runs })
        // Claimed at the ingest time (today), then moved with the run to three days ago, in the default partition
        // (no partition is made behind today) until maintenance gives that day its own.
        expect(await partitionsOf(store, 'results', 'late')).toEqual(['results_default'])
        expect(await partitionsOf(store, 'attempts', 'late')).toEqual(['attempts_default'])
        expect(await count(store, 'results')).toBe(2)
        const m = await store.maintain(Date.now())
        // Two results, the flaky one's two attempts and the failure's one.
        expect(m).toMatchObject({ days: 1, moved: 5, failed: 0 })
        expect(await partitionsOf(store, 'results', 'late')).toEqual([partitionName('results', dayOf(at))])
        expect(await partitionsOf(store, 'attempts', 'late')).toEqual([partitionName('attempts', dayOf(at))])
        expect((await store.getTestHistory('unit::mod::a'))!.entries.map((e) => e.run.at)).toEqual([at])
      } finally {
        await store.close()
      }
    })

    it('keeps an import of old reports in the default partition until maintenance moves each day out', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        const old = [40, 41, 41, 90].map((d, i) => runOf(`old${i}`, daysAgo(d) + i, 10))
        for (const r of old) await store.ingestReport(r)
        await store.ingestReport(runOf('new', daysAgo(0), 10))
        expect(await count(store, 'results_default')).toBe(40)
        const before = await sortedHistory(store)
        const m = await store.maintain(Date.now())
        expect(m).toMatchObject({ days: 3, moved: 40 + 4 * 2 * 2, failed: 0 })
        expect(await count(store, 'results_default')).toBe(0)
        expect(await count(store, 'attempts_default')).toBe(0)
        expect(await partitionsOf(store, 'results', 'old1')).toEqual([partitionName('results', dayOf(daysAgo(41)))])
        expect(await sortedHistory(store)).toEqual(before)
        // A second maintenance finds nothing to do; the days moved out accept new rows of their day.
        expect(await store.maintain(Date.now())).toMatchObject({ days: 0, moved: 0 })
        await store.ingestReport(runOf('old-again', daysAgo(90) + 7, 3))
        expect(await partitionsOf(store, 'results', 'old-again')).toEqual([
          partitionName('results', dayOf(daysAgo(90))),
        ])
      } finally {
        await store.close()
      }
    })

    it('prunes by dropping whole days, deleting row by row only in the day that straddles the cutoff', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        // Forty days with their partitions (as a daily maintenance made them) and two runs each, and two old
        // imports left in the default partition.
        const days = 40
        for (let d = days - 1; d >= 0; d--) {
          await store.maintain(daysAgo(d))
          await store.ingestReport(runOf(`d${d}a`, daysAgo(d) - 3_600_000, 5))
          await store.ingestReport(runOf(`d${d}b`, daysAgo(d) + 3_600_000, 5, 'failed'))
        }
        await store.ingestReport(runOf('ancient', daysAgo(400), 5))
        await store.ingestReport(runOf('ancient-2', daysAgo(400) + 1, 5))
        expect(await count(store, 'results_default')).toBe(10)
        const partitionsBefore = await partitionCount(store)
        // The cutoff falls at noon of 30 days ago: its morning run goes, its afternoon run stays.
        const cutoff = daysAgo(30)
        const kept = await store.rawQuery<{ run_id: string }>(
          'SELECT run_id FROM runs WHERE at >= $1 ORDER BY run_id',
          cutoff,
        )
        const keptResults = await store.rawQuery<{ n: number }>(
          'SELECT count(*)::integer AS n FROM results WHERE at >= $1',
          cutoff,
        )
        const keptHistory = (await sortedHistory(store)).map((t) => ({
          ...t,
          entries: t.entries.filter((e) => e.at >= cutoff),
        }))
        const res = await store.prune(cutoff)
        // Days 31..39 (9 days × 2 runs), day 30's morning run, and the two imports.
        expect(res).toEqual({ runs: 9 * 2 + 1 + 2, results: (9 * 2 + 1 + 2) * 5 })
        expect(await partitionCount(store)).toBe(partitionsBefore - 9 * 2)
        expect(await store.rawQuery('SELECT run_id FROM runs ORDER BY run_id')).toEqual(kept)
        expect(await count(store, 'results')).toBe(keptResults[0]!.n)
        expect(await count(store, 'results_default')).toBe(0)
        expect(await store.rawQuery('SELECT 1 FROM results WHERE at < $1', cutoff)).toEqual([])
        expect(await store.rawQuery('SELECT 1 FROM attempts WHERE at < $1', cutoff)).toEqual([])
        expect(await store.rawQuery('SELECT 1 FROM reports WHERE run NOT IN (SELECT id FROM runs)')).toEqual([])
        expect(await sortedHistory(store)).toEqual(keptHistory.filter((t) => t.entries.length > 0))
        // Nothing left to prune.
        expect(await store.prune(cutoff)).toEqual({ runs: 0, results: 0 })
      } finally {
        await store.close()
      }
    })

    it('marks the tests of runs stale from those runs’ own day partitions only, each statement planned on its input', async () => {
      const url = db.fresh()
      const store = await openPostgresStore(url)
      const client = await connectTo(url)
      try {
        // Tests in files: a run of day 5 has a1 (file a) and s1 (file s); day 4's has a2; day 3's has a3 (a
        // file-mate of a1 and a2 that is in neither of their runs) and b1, b2 (file b); today's has c1.
        const inFile = (file: string, name: string) =>
          result(name, 'passed', {
            test: { testId: `unit::${file}::${name}`, suite: 'unit', module: file, name, file: null },
          })
        const runs: [string, number, [string, string][]][] = [
          [
            'd5',
            5,
            [
              ['a', 'a1'],
              ['s', 's1'],
            ],
          ],
          ['d4', 4, [['a', 'a2']]],
          [
            'd3',
            3,
            [
              ['a', 'a3'],
              ['b', 'b1'],
              ['b', 'b2'],
            ],
          ],
          ['d0', 0, [['c', 'c1']]],
        ]
        for (let d = 5; d >= 0; d--) await store.maintain(daysAgo(d))
        for (const [runId, d, tests] of runs) {
          await store.ingestReport(
            batch(
              runMeta(runId, iso(daysAgo(d))),
              tests.map(([f, n]) => inFile(f, n)),
            ),
          )
        }
        // Every row analysed and valid, as after a sweep.
        await store.rawQuery('UPDATE analyses SET valid_until = 9e15, lease_until = 0')
        const keys = await store.rawQuery<{ id: number }>("SELECT id FROM runs WHERE run_id IN ('d5', 'd4')")
        const sent: { text: string; values: unknown[] }[] = []
        const recorder = {
          query: (text: string, values: unknown[] = []) => {
            sent.push({ text, values })
            return client.query(text, values)
          },
        }
        await markRunsStalePg(
          recorder,
          keys.map((k) => k.id),
        )
        const stale = await store.rawQuery<{ name: string }>(
          'SELECT t.name FROM analyses a JOIN tests t ON t.id = a.test WHERE a.valid_until = 0 ORDER BY t.name',
        )
        expect(stale.map((r) => r.name)).toEqual(['a1', 'a2', 'a3', 's1'])
        // Each statement that reads results names only the partitions of days 5 and 4 in its plan: pruned when
        // planned, not at run time after a plan made for every day of the history.
        const own = new Set([5, 4].map((d) => partitionName('results', dayOf(daysAgo(d)))))
        const read = new Set<string>()
        for (const { text, values } of sent) {
          const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)).rows
            .map((r) => r['QUERY PLAN'])
            .join('\n')
          for (const m of plan.matchAll(/\bresults_(p\d{8}|default)\b/g)) read.add(m[0])
        }
        expect([...read].sort()).toEqual([...own].sort())
      } finally {
        await client.end()
        await store.close()
      }
    })

    it('waits for a writer of an old day before dropping it, and the writer’s rows go with the day', async () => {
      const url = db.fresh()
      const store = await openPostgresStore(url)
      const writer = await connectTo(url)
      try {
        await store.ingestReport(runOf('r', daysAgo(0), 3))
        // A day a week ago gets its partition, then a transaction holds it open while prune runs.
        await store.ingestReport(runOf('old', daysAgo(7), 3))
        await store.maintain(Date.now())
        await writer.query('BEGIN')
        await writer.query("UPDATE runs SET branch = 'x' WHERE run_id = 'old'")
        await writer.query('SELECT count(*) FROM results WHERE at = $1', [daysAgo(7)])
        const pruning = store.prune(daysAgo(1))
        await new Promise((r) => setTimeout(r, 300))
        await writer.query('COMMIT')
        expect(await pruning).toEqual({ runs: 1, results: 3 })
        expect(await store.rawQuery('SELECT run_id FROM runs')).toEqual([{ run_id: 'r' }])
      } finally {
        await writer.end()
        await store.close()
      }
    })

    it('has serve’s maintenance make a day that is missing, and stop with the app', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        const today = dayOf(Date.now())
        await store.rawQuery(`DROP TABLE ${partitionName('results', today)}, ${partitionName('attempts', today)}`)
        const reports: MaintenanceOutcome[] = []
        const maintenance = startMaintenance({
          store,
          now: Date.now,
          onReport: (o) => reports.push(o),
          firstAfterMs: 0,
        })
        for (let i = 0; i < 200 && reports.length === 0; i++) await new Promise((r) => setTimeout(r, 25))
        await maintenance.stop()
        expect(reports).toEqual([{ days: 1, moved: 0, failed: 0, error: null }])
        await store.ingestReport(runOf('r', daysAgo(0), 2))
        expect(await partitionsOf(store, 'results', 'r')).toEqual([partitionName('results', today)])
      } finally {
        await store.close()
      }
    })

    it('migrates a store made before partitions, keeping every row, and partitions its days', async () => {
      const url = db.fresh()
      const schema = new URL(url).searchParams.get('schema')!
      const before = POSTGRES_MIGRATIONS.findIndex((m) => m.id === '0017-partitions')
      const client = new pgModule.Client({ connectionString: withoutSchema(url) })
      await client.connect()
      try {
        await client.query(`CREATE SCHEMA ${schema}`)
        await client.query(`SET search_path = ${schema}`)
        const asPgClient = client as unknown as Parameters<typeof migratePostgres>[0]
        expect((await migratePostgres(asPgClient, schema, POSTGRES_MIGRATIONS.slice(0, before))).error).toBeUndefined()
        // Rows as the old schema held them: results keyed (run, test), attempts without `at`.
        await client.query(`
          INSERT INTO runs (run_id, suite, status, uploaded_at, at, total) VALUES
            ('old', 'unit', 'complete', 'x', ${daysAgo(400)}, 2),
            ('week', 'unit', 'complete', 'x', ${daysAgo(7)}, 2),
            ('today', 'unit', 'complete', 'x', ${daysAgo(0)}, 2);
          INSERT INTO tests (test_id, suite, module, name) VALUES ('unit::mod::a', 'unit', 'mod', 'a'),
            ('unit::mod::b', 'unit', 'mod', 'b');
          INSERT INTO results (at, failed_ms, test, run, attempts, failed_attempts, status, flaky, healing, position)
            SELECT r.at, 0, t.id, r.id, 2, 1, 0, true, false, t.id FROM runs r, tests t;
          INSERT INTO attempts (run, test, retry, status) SELECT run, test, g, CASE g WHEN 0 THEN 1 ELSE 0 END
            FROM results, generate_series(0, 1) g;
        `)
      } finally {
        await client.end()
      }
      const store = await openPostgresStore(url)
      try {
        expect(store.migrations.filter((m) => m.status === 'applied').map((m) => m.id)).toContain('0017-partitions')
        expect(await count(store, 'results')).toBe(6)
        expect(await count(store, 'attempts')).toBe(12)
        // Each run's rows in its day, the attempts with their run's time.
        expect(await partitionsOf(store, 'results', 'old')).toEqual([partitionName('results', dayOf(daysAgo(400)))])
        expect(await partitionsOf(store, 'attempts', 'week')).toEqual([partitionName('attempts', dayOf(daysAgo(7)))])
        expect(await store.rawQuery('SELECT 1 FROM attempts a JOIN runs r ON r.id = a.run WHERE a.at <> r.at')).toEqual(
          [],
        )
        expect((await store.getTestHistory('unit::mod::a'))!.entries.map((e) => e.run.runId)).toEqual([
          'old',
          'week',
          'today',
        ])
        expect(await store.getAttempts('unit::mod::b', 'week')).toHaveLength(2)
        // The keys hold on the new tables: the same rows again are refused.
        await expect(store.rawQuery('INSERT INTO results SELECT * FROM results LIMIT 1')).rejects.toThrow(/duplicate/)
        const idx = await sql<{ n: number }>(
          url,
          `SELECT count(*)::integer AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname LIKE 'results_p%' AND pg_get_indexdef(i.indexrelid) LIKE '%(test, at, run) INCLUDE%'`,
        )
        expect(idx[0]!.n).toBeGreaterThanOrEqual(3 + 8 - 1)
        expect(await store.prune(daysAgo(1))).toEqual({ runs: 2, results: 4 })
      } finally {
        await store.close()
      }
    })
  })
}

async function partitionCount(store: PostgresStore): Promise<number> {
  const rows = await store.rawQuery<{ n: number }>(
    `SELECT count(*)::integer AS n FROM pg_inherits WHERE inhparent IN (to_regclass('results'), to_regclass('attempts'))`,
  )
  return rows[0]!.n
}

/** Every test's history as plain values, in test order. */
async function sortedHistory(store: PostgresStore) {
  const out: { test: string; entries: { runId: string; at: number; status: string; attempts: number }[] }[] = []
  for await (const h of store.scanHistory({})) {
    out.push({
      test: h.test.testId,
      entries: h.entries.map((e) => ({ runId: e.run.runId, at: e.run.at, status: e.status, attempts: e.attempts })),
    })
  }
  return out.sort((a, b) => (a.test < b.test ? -1 : 1))
}
