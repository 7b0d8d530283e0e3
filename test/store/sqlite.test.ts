import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { storeContract } from './contract.js'
import { ticketStoreContract } from './tickets-contract.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-sqlite-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0

// A real file, not :memory:, so that WAL and the on-disk schema are exercised.
storeContract('sqlite', () => openSqliteStore(join(dir, `contract-${n++}.db`)))
ticketStoreContract('sqlite', async () => {
  const file = join(dir, `tickets-${n++}.db`)
  const first = await openSqliteStore(file)
  return [first, await openSqliteStore(file)]
})

describe('sqlite specifics', () => {
  it('creates the file with WAL and migrates once', async () => {
    const file = join(dir, 'nested', 'x.db')
    const a = await openSqliteStore(file)
    const b = await openSqliteStore(file)
    expect(a.rawQuery('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }])
    expect(a.rawQuery("SELECT value FROM schema_meta WHERE key = 'schema_version'")).toEqual([
      { value: String(SQLITE_MIGRATIONS.length) },
    ])
    await a.close()
    await b.close()
  })

  it('dates the runs of an older file as written when they were uploaded', async () => {
    const file = join(dir, 'written.db')
    const s = await openSqliteStore(file)
    await s.ingestReport(batch(runMeta('kept', '2026-01-01T00:00:00Z'), [result('a', 'passed')]))
    await s.ingestReport(batch(runMeta('odd', '2026-01-02T00:00:00Z'), [result('a', 'passed')]))
    // The file as it was before the migration, with one upload time that is not a date.
    s.rawRun('DROP INDEX runs_written')
    s.rawRun('ALTER TABLE runs DROP COLUMN written_at')
    s.rawRun("DELETE FROM schema_meta WHERE key = 'migration:0012-written-at'")
    s.rawRun("UPDATE runs SET uploaded_at = '2026-02-03T04:05:06.789Z' WHERE run_id = 'kept'")
    s.rawRun("UPDATE runs SET uploaded_at = 'yesterday' WHERE run_id = 'odd'")
    await s.close()
    const migrated = await openSqliteStore(file)
    expect(await migrated.runsWrittenSince(0, 10)).toEqual([
      { runId: 'kept', writtenAt: Date.parse('2026-02-03T04:05:06.789Z') },
      { runId: 'odd', writtenAt: 0 },
    ])
    await migrated.close()
  })

  it('sizes the page cache of each connection: 32 MB to write, 64 MB to read, or what the opener asks for', async () => {
    const file = join(dir, 'cache.db')
    const cacheKb = async (opts: Parameters<typeof openSqliteStore>[1]) => {
      const s = await openSqliteStore(file, opts)
      const [row] = s.rawQuery('PRAGMA cache_size') as { cache_size: number }[]
      await s.close()
      // Negative: KiB, not pages.
      return -row!.cache_size
    }
    expect(await cacheKb({})).toBe(32 * 1024)
    expect(await cacheKb({ readOnly: true })).toBe(64 * 1024)
    // The server's connections (SERVER_CACHE_MB), writer and reader alike.
    expect(await cacheKb({ cacheMb: 8 })).toBe(8 * 1024)
    expect(await cacheKb({ readOnly: true, cacheMb: 16 })).toBe(16 * 1024)
  })

  it('refuses edits to the audit and heal logs', async () => {
    const s = await openSqliteStore(join(dir, 'append.db'))
    await s.appendHeal({
      testId: 't',
      oldLocator: 'a',
      newLocator: 'b',
      score: 1,
      breakdown: {},
      url: null,
      at: 'x',
      runId: null,
    })
    expect(() => s.rawRun('DELETE FROM heal_log')).toThrow(/append-only/)
    await s.putQuarantineRule(
      {
        id: 'r',
        match: { testId: '**' },
        reason: 'x',
        owner: null,
        issueUrl: null,
        createdAt: 'x',
        createdBy: 'x',
        expiresAt: null,
      },
      { action: 'quarantine', actor: 'a', at: 'x', reason: 'x' },
    )
    expect(() => s.rawRun('DELETE FROM audit_log')).toThrow(/append-only/)
    expect(() => s.rawRun("UPDATE audit_log SET actor = 'mallory'")).toThrow(/append-only/)
    await s.close()
  })

  it('two connections writing one file both succeed (busy timeout, not failure)', async () => {
    const file = join(dir, 'shared.db')
    const a = await openSqliteStore(file)
    const b = await openSqliteStore(file)
    await Promise.all([
      a.ingestReport(batch(runMeta('ra', '2026-01-01T00:00:00Z'), [result('x', 'passed')])),
      b.ingestReport(batch(runMeta('rb', '2026-01-02T00:00:00Z'), [result('x', 'failed')])),
    ])
    expect((await a.stats()).results).toBe(2)
    await a.close()
    await b.close()
  })
})
