import { afterAll, describe, expect, it } from 'vitest'
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { storeContract } from './contract.js'
import { ticketStoreContract } from './tickets-contract.js'
import { connectTo, resolveTestPg, schemas, sql } from './pg-helpers.js'

const pg = await resolveTestPg()

/** Waits until some flakewatch connection is blocked on a row lock. */
async function waitForLockWait(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const rows = await sql(
      url,
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'flakewatch' AND wait_event_type = 'Lock'",
    )
    if (rows.length) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('no connection ever waited for the lock')
}

if (pg.skip !== undefined) {
  console.warn(`PostgreSQL tests skipped: ${pg.skip}`)
  describe.skip(`postgres store (skipped: ${pg.skip})`, () => {
    it('runs the store contract against PostgreSQL', () => undefined)
  })
} else {
  const db = schemas(pg.url)
  afterAll(() => db.dropAll())

  // Each test gets its own schema, so tests never see each other's rows and the migrations run every time.
  storeContract('postgres', () => openPostgresStore(db.fresh()))
  ticketStoreContract('postgres', async () => {
    const url = db.fresh()
    const first = await openPostgresStore(url)
    return [first, await openPostgresStore(url)]
  })

  describe('postgres specifics', () => {
    it('migrates exactly once when 5 stores open a fresh schema at once', async () => {
      const url = db.fresh()
      const stores = await Promise.all(Array.from({ length: 5 }, () => openPostgresStore(url)))
      try {
        const applied = stores.flatMap((s) => s.migrations.filter((m) => m.status === 'applied'))
        const ids = POSTGRES_MIGRATIONS.map((m) => m.id)
        expect(applied.map((m) => m.id).sort()).toEqual(ids)
        expect(stores.flatMap((s) => s.migrations).filter((m) => m.status === 'skipped')).toHaveLength(4 * ids.length)
        const meta = await sql<{ key: string; value: string }>(url, 'SELECT key, value FROM schema_meta ORDER BY key')
        expect(meta.map((m) => m.key)).toEqual([...ids.map((id) => `migration:${id}`), 'schema_version'])
        expect(meta.at(-1)!.value).toBe(String(ids.length))
        // Every store works on the schema the winner created.
        const report = (i: number) => batch(runMeta(`r${i}`, '2026-01-01T00:00:00Z'), [result('a', 'passed')])
        await Promise.all(stores.map((s, i) => s.ingestReport(report(i))))
        expect((await stores[0]!.stats()).results).toBe(5)
      } finally {
        await Promise.all(stores.map((s) => s.close()))
      }
    })

    it('keeps at most 8M characters of message text in memory, however long the messages', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        // 600 failures with a different message each, 16,384 characters long (the stored maximum): 9.8M in all.
        const long = (i: number) => `${String(i).padStart(5, '0')} ${'x'.repeat(16_378)}`
        await store.ingestReport(
          batch(
            runMeta('r1', '2026-01-01T00:00:00Z'),
            Array.from({ length: 600 }, (_, i) => result(`t${i}`, 'failed', { message: long(i) })),
          ),
        )
        let read = 0
        for await (const h of store.scanHistory({})) {
          // Every text reaches its reader whole, cached or not.
          expect(h.entries[0]!.message).toBe(long(Number(h.test.name.slice(1))))
          read++
        }
        expect(read).toBe(600)
        const cache = (
          store as unknown as { parts: { history: { messageTexts: Map<number, string>; messageTextChars: number } } }
        ).parts.history
        let held = 0
        for (const text of cache.messageTexts.values()) held += text.length
        expect(held).toBe(cache.messageTextChars)
        expect(held).toBeGreaterThan(0)
        expect(held).toBeLessThanOrEqual(8_000_000)
      } finally {
        await store.close()
      }
    })

    it('keeps every table inside the schema the URL names', async () => {
      const url = db.fresh()
      const store = await openPostgresStore(url)
      await store.close()
      const schema = new URL(url).searchParams.get('schema')
      // Partitions apart: those are checked below.
      const tables = await sql<{ table_name: string; partition: boolean }>(
        url,
        `SELECT c.relname AS table_name, c.relispartition AS partition FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
        [schema],
      )
      const partitions = tables.filter((t) => t.partition).map((t) => t.table_name)
      expect(partitions).toContain('results_default')
      expect(partitions).toContain('attempts_default')
      // Today's and the next seven days' partitions, made by the migration.
      expect(partitions.filter((p) => /^results_p\d{8}$/.test(p)).length).toBeGreaterThanOrEqual(8)
      expect(tables.filter((t) => !t.partition).map((t) => t.table_name)).toEqual([
        'analyses',
        'attempts',
        'audit_head',
        'audit_log',
        'fingerprints',
        'heal_log',
        'messages',
        'notification_rule_state',
        'notification_state',
        'quarantine',
        'quarantine_rules',
        'reports',
        'results',
        'run_timings',
        'runs',
        'schema_meta',
        'test_names',
        'tests',
        'ticket_state',
        'tickets',
        'webhook_deliveries',
      ])
      expect(store.location).toBe(url)
    })

    it('refuses edits to the audit and heal logs, TRUNCATE included, and moving a run in time', async () => {
      const store = await openPostgresStore(db.fresh())
      try {
        const heal = { testId: 't', oldLocator: 'a', newLocator: 'b', score: 1, breakdown: {}, at: 'x' }
        await store.appendHeal({ ...heal, url: null, runId: null })
        const record = { testId: 't', reason: 'r', owner: null, issueUrl: null, createdAt: 'x', createdBy: 'x' }
        await store.putQuarantine(
          { ...record, expiresAt: null, source: 'auto' },
          { action: 'quarantine', actor: 'x', at: 'x', reason: 'r', source: 'auto' },
        )
        await expect(store.rawQuery('DELETE FROM heal_log')).rejects.toThrow(/heal_log is append-only/)
        await expect(store.rawQuery("UPDATE heal_log SET url = 'y'")).rejects.toThrow(/append-only/)
        await expect(store.rawQuery('TRUNCATE heal_log')).rejects.toThrow(/append-only/)
        await expect(store.rawQuery("UPDATE audit_log SET actor = 'mallory'")).rejects.toThrow(
          /audit_log is append-only/,
        )
        await expect(store.rawQuery('TRUNCATE audit_log')).rejects.toThrow(/append-only/)
        await store.putQuarantineRule(
          { id: 'r', match: { testId: '**' }, ...record, expiresAt: null },
          { action: 'quarantine', actor: 'x', at: 'x', reason: 'r' },
        )
        await expect(store.rawQuery("DELETE FROM audit_log WHERE kind = 'rule'")).rejects.toThrow(
          /audit_log is append-only/,
        )
        await store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [result('a', 'passed')]))
        await expect(store.rawQuery('UPDATE runs SET at = at + 1')).rejects.toThrow(/cannot change/)
        expect(await store.listHeals()).toHaveLength(1)
      } finally {
        await store.close()
      }
    })

    it('dates the runs of an older schema as written when they were uploaded', async () => {
      const url = db.fresh()
      const store = await openPostgresStore(url)
      await store.ingestReport(batch(runMeta('kept', '2026-01-01T00:00:00Z'), [result('a', 'passed')]))
      await store.ingestReport(batch(runMeta('odd', '2026-01-02T00:00:00Z'), [result('a', 'passed')]))
      await store.close()
      // The schema as it was before the migration, with one upload time that is not a date.
      await sql(
        url,
        `ALTER TABLE runs DROP COLUMN written_at;
         DELETE FROM schema_meta WHERE key = 'migration:0012-written-at';
         UPDATE runs SET uploaded_at = CASE run_id WHEN 'kept' THEN '2026-02-03T04:05:06.789Z' ELSE 'yesterday' END`,
      )
      const migrated = await openPostgresStore(url)
      try {
        expect(await migrated.runsWrittenSince(0, 10)).toEqual([
          { runId: 'kept', writtenAt: Date.parse('2026-02-03T04:05:06.789Z') },
          { runId: 'odd', writtenAt: 0 },
        ])
      } finally {
        await migrated.close()
      }
    })

    it('merges two different reports of one run ingested at once, storing each result once', async () => {
      const url = db.fresh()
      const [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)])
      try {
        const run = runMeta('job-1', '2026-01-01T00:00:00Z')
        const names = Array.from({ length: 300 }, (_, i) => `t${i}`)
        const [[oa], [ob]] = await Promise.all([
          a.ingestReport(
            batch(
              run,
              names.slice(0, 200).map((n) => result(n, 'passed')),
              'file-1',
            ),
          ),
          b.ingestReport(
            batch(
              run,
              names.slice(100).map((n) => result(n, 'failed')),
              'file-2',
            ),
          ),
        ])
        expect([oa!.outcome, ob!.outcome]).toEqual(['ingested', 'ingested'])
        // The overlap (t100..t199) is stored by whichever report committed first, exactly once.
        expect(oa!.results + ob!.results).toBe(300)
        expect((await a.stats()).results).toBe(300)
        const dups = await a.rawQuery('SELECT test FROM results GROUP BY test, run HAVING count(*) > 1')
        expect(dups).toEqual([])
      } finally {
        await a.close()
        await b.close()
      }
    })

    it('recreates a run that a prune deletes while another file of it is being merged', async () => {
      const url = db.fresh()
      const store = await openPostgresStore(url)
      const pruner = await connectTo(url)
      try {
        const run = runMeta('job-1', '2026-01-01T00:00:00Z')
        await store.ingestReport(batch(run, [result('a', 'passed')], 'file-1'))
        // The pruner holds the run locked and deleted, as prune does, while the second file arrives.
        await pruner.query('BEGIN')
        await pruner.query("SELECT id FROM runs WHERE run_id = 'job-1' FOR UPDATE")
        await pruner.query('DELETE FROM results')
        await pruner.query('DELETE FROM reports')
        await pruner.query('DELETE FROM runs')
        const merging = store.ingestReport(batch(run, [result('b', 'failed')], 'file-2'))
        await waitForLockWait(url)
        await pruner.query('COMMIT')
        expect((await merging)[0]).toMatchObject({ outcome: 'ingested', results: 1 })
        const orphans = await store.rawQuery('SELECT run FROM results WHERE run NOT IN (SELECT id FROM runs)')
        expect(orphans).toEqual([])
        expect((await store.getRun('job-1'))!.runId).toBe('job-1')
      } finally {
        await pruner.end()
        await store.close()
      }
    })

    it('returns the scan connection to the pool when the consumer stops early', async () => {
      const store = await openPostgresStore(db.fresh(), { poolSize: 1 })
      try {
        const run = runMeta('r1', '2026-01-01T00:00:00Z')
        await store.ingestReport(batch(run, [result('a', 'passed'), result('b', 'failed')]))
        for (let i = 0; i < 3; i++) {
          for await (const h of store.scanHistory()) {
            expect(h.entries).toHaveLength(1)
            break
          }
        }
        // With a pool of one, a leaked scan connection would make this wait forever.
        expect((await store.stats()).results).toBe(2)
      } finally {
        await store.close()
      }
    })

    it('streams a history bigger than one cursor page, grouped by test', async () => {
      // A pool of one: a scan stopped while its next page is being read must still give its connection back.
      const store: PostgresStore = await openPostgresStore(db.fresh(), { poolSize: 1 })
      try {
        const names = Array.from({ length: 5000 }, (_, i) => `t${String(i).padStart(4, '0')}`)
        for (let r = 0; r < 5; r++) {
          const day = new Date(Date.UTC(2026, 0, 1 + r)).toISOString()
          const results = names.map((n, i) => result(n, (i + r) % 7 ? 'passed' : 'failed'))
          await store.ingestReport(batch(runMeta(`r${r}`, day), results))
        }
        let tests = 0
        let entries = 0
        for await (const h of store.scanHistory()) {
          tests++
          entries += h.entries.length
          expect(h.entries.map((e) => e.run.runId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4'])
        }
        expect([tests, entries]).toEqual([5000, 25_000])
        for (let i = 0; i < 3; i++) {
          for await (const h of store.scanHistory()) {
            expect(h.entries).toHaveLength(5)
            break
          }
        }
        expect((await store.stats()).results).toBe(25_000)
      } finally {
        await store.close()
      }
    })

    it('fails with a store error naming the server when it cannot connect', async () => {
      const opening = openPostgresStore('postgres://nobody:secret@127.0.0.1:1/none', { connectTimeoutMs: 2000 })
      await expect(opening).rejects.toThrow(/cannot connect to PostgreSQL at postgres:\/\/nobody@127\.0\.0\.1:1\/none/)
    })
  })
}
