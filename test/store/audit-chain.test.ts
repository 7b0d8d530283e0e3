import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { AUDIT_GENESIS, auditHash, verifyAuditChain } from '../../src/store/audit-chain.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { QuarantineRecord, Store } from '../../src/store/store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { resolveTestPg, schemas, sql } from './pg-helpers.js'

const record = (testId: string, reason: string): QuarantineRecord => ({
  testId,
  reason,
  owner: 'team-a',
  issueUrl: null,
  createdAt: '2026-03-01T00:00:00.000Z',
  createdBy: 'ci',
  expiresAt: null,
  source: 'manual',
})

/** Three changes by two actors: quarantine, update, release. */
async function writeTrail(store: Store): Promise<void> {
  const at = (d: number) => new Date(Date.UTC(2026, 2, d)).toISOString()
  await store.putQuarantine(record('unit::m::a', 'flaky'), {
    action: 'quarantine',
    actor: 'ci',
    at: at(1),
    reason: 'flaky',
    source: 'manual',
  })
  await store.putQuarantine(record('unit::m::a', 'still flaky'), {
    action: 'update',
    actor: 'alice',
    at: at(2),
    reason: 'still flaky',
    source: 'manual',
  })
  await store.deleteQuarantine('unit::m::a', {
    action: 'release',
    actor: 'alice',
    at: at(3),
    reason: 'fixed',
    source: null,
  })
}

describe('audit chain (pure)', () => {
  const fields = {
    testId: 't',
    action: 'quarantine' as const,
    actor: 'ci',
    at: '2026-03-01T00:00:00.000Z',
    reason: 'r',
    source: 'manual' as const,
    record: null,
  }
  it('chains each hash to the previous one, so that a change anywhere breaks the next link', () => {
    const h1 = auditHash(AUDIT_GENESIS, fields)
    const h2 = auditHash(h1, { ...fields, action: 'release' })
    const entries = [
      { id: 1, ...fields, prevHash: AUDIT_GENESIS, hash: h1 },
      { id: 2, ...fields, action: 'release' as const, prevHash: h1, hash: h2 },
    ]
    expect(verifyAuditChain(entries)).toEqual({ ok: true, checked: 2, firstBad: null })
    expect(verifyAuditChain([entries[0]!, { ...entries[1]!, actor: 'mallory' }]).firstBad).toMatchObject({
      id: 2,
      problem: expect.stringMatching(/edited/),
    })
    expect(verifyAuditChain([entries[1]!]).firstBad).toMatchObject({ id: 2, problem: expect.stringMatching(/removed/) })
    // Key order in the stored record (PostgreSQL's jsonb reorders) does not change the hash.
    const rec = record('t', 'r')
    const reordered = Object.fromEntries(Object.entries(rec).reverse()) as unknown as QuarantineRecord
    expect(auditHash(AUDIT_GENESIS, { ...fields, record: rec })).toBe(
      auditHash(AUDIT_GENESIS, { ...fields, record: reordered }),
    )
  })
})

describe('audit trail on SQLite', () => {
  it('refuses replace, update and delete; audit verify names the first edited entry', async () => {
    const dir = testdir({}, 'audit-')
    const file = join(dir, 'fw.db')
    const store = await openSqliteStore(file)
    await writeTrail(store)
    expect(verifyAuditChain(await store.listAuditChain())).toMatchObject({ ok: true, checked: 3 })
    await store.close()

    const db = new Database(file)
    const row = db.prepare('SELECT * FROM quarantine_audit WHERE id = 2').get() as Record<string, unknown>
    const cols = Object.keys(row)
    const replace = db.prepare(
      `INSERT OR REPLACE INTO quarantine_audit (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    )
    expect(() => replace.run(...cols.map((c) => (c === 'actor' ? 'mallory' : row[c])))).toThrow(/append-only/)
    expect(() =>
      db
        .prepare(
          `REPLACE INTO quarantine_audit (id, test_id, action, actor, at, reason) VALUES (1, 'x', 'release', 'm', 'now', 'r')`,
        )
        .run(),
    ).toThrow(/append-only/)
    expect(() => db.prepare(`UPDATE quarantine_audit SET actor = 'mallory' WHERE id = 2`).run()).toThrow(/append-only/)
    expect(() => db.prepare('DELETE FROM quarantine_audit WHERE id = 2').run()).toThrow(/append-only/)

    const ok = await runCli(['audit', 'verify', '--db', file, '--json'])
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout)).toEqual({ ok: true, checked: 3, first_bad: null })

    // Someone with the file drops the trigger and rewrites who made the second change.
    db.exec(`DROP TRIGGER quarantine_audit_no_update; UPDATE quarantine_audit SET actor = 'mallory' WHERE id = 2`)
    db.close()
    const bad = await runCli(['audit', 'verify', '--db', file, '--json'])
    expect(bad.exitCode).toBe(1)
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, checked: 2, first_bad: { id: 2, test_id: 'unit::m::a' } })
    const human = await runCli(['audit', 'verify', '--db', file])
    expect(human.exitCode).toBe(1)
    expect(human.stdout).toMatch(/TAMPERED: entry 2 .*edited/)
  }, 30_000)
})

const pg = await resolveTestPg()

describe.skipIf(pg.skip)(`audit trail on PostgreSQL${pg.skip ? ` (skipped: ${pg.skip})` : ''}`, () => {
  const made = pg.url ? schemas(pg.url) : undefined
  const roles: string[] = []
  afterAll(async () => {
    await made?.dropAll()
    for (const r of roles) await sql(pg.url!, `DROP ROLE IF EXISTS ${r}`)
  })

  it('chains entries and reports a tampered one', async () => {
    const url = made!.fresh()
    const store = await openPostgresStore(url)
    await writeTrail(store)
    expect(verifyAuditChain(await store.listAuditChain())).toMatchObject({ ok: true, checked: 3 })
    await expect(sql(url, `UPDATE quarantine_audit SET actor = 'mallory' WHERE id = 2`)).rejects.toThrow(/append-only/)
    await expect(
      sql(
        url,
        `INSERT INTO quarantine_audit (id, test_id, action, actor, at, reason) OVERRIDING SYSTEM VALUE VALUES (1, 'x', 'release', 'm', 'now', 'r')`,
      ),
    ).rejects.toThrow(/append-only/)
    await sql(
      url,
      `ALTER TABLE quarantine_audit DISABLE TRIGGER USER; UPDATE quarantine_audit SET reason = 'nothing to see' WHERE id = 3`,
    )
    expect(verifyAuditChain(await store.listAuditChain()).firstBad).toMatchObject({ id: 3 })
    await store.close()
  })

  it('the application role can write data and append audit lines, but cannot edit the audit or disable its triggers', async () => {
    const { postgresRoleGrants } = await import('../../src/store/postgres/roles.js')
    const suffix = Math.random().toString(36).slice(2, 10)
    const migrator = `fw_migrator_${suffix}`
    const app = `fw_app_${suffix}`
    roles.push(app, migrator)
    const url = made!.fresh()
    const schema = new URL(url).searchParams.get('schema')!
    await sql(
      pg.url!,
      `CREATE ROLE ${migrator} LOGIN; CREATE ROLE ${app} LOGIN; GRANT CREATE ON DATABASE test TO ${migrator}`,
    )
    const as = (role: string) => {
      const u = new URL(url)
      u.username = role
      return u.toString()
    }
    // The migration role creates the schema and owns every table and trigger.
    const owner = await openPostgresStore(as(migrator))
    await owner.close()
    await sql(as(migrator), postgresRoleGrants({ schema, appRole: app }).join(';\n'))

    const store = await openPostgresStore(as(app))
    // Ingest (COPY through temp tables) works as the application role.
    const outcomes = await store.ingestReport(batch(runMeta('r1', '2026-03-01T00:00:00Z'), [result('a', 'passed')]))
    expect(outcomes.map((o) => o.outcome)).toEqual(['ingested'])
    await writeTrail(store)
    expect(verifyAuditChain(await store.listAuditChain())).toMatchObject({ ok: true, checked: 3 })
    await expect(sql(as(app), `UPDATE quarantine_audit SET actor = 'mallory'`)).rejects.toThrow(/permission denied/)
    await expect(sql(as(app), `DELETE FROM quarantine_audit`)).rejects.toThrow(/permission denied/)
    await expect(sql(as(app), `ALTER TABLE quarantine_audit DISABLE TRIGGER USER`)).rejects.toThrow(/must be owner/)
    await expect(sql(as(app), `DROP TRIGGER quarantine_audit_append_only ON quarantine_audit`)).rejects.toThrow(
      /must be owner/,
    )
    await expect(sql(as(app), `TRUNCATE quarantine_audit`)).rejects.toThrow(/permission denied|append-only/)
    await expect(sql(as(app), `CREATE TABLE evil (x int)`)).rejects.toThrow(/permission denied/)
    const grants = await sql<{ privilege_type: string }>(
      as(app),
      `SELECT privilege_type FROM information_schema.role_table_grants
       WHERE grantee = $1 AND table_schema = $2 AND table_name = 'quarantine_audit' ORDER BY 1`,
      [app, schema],
    )
    expect(grants.map((g) => g.privilege_type)).toEqual(['INSERT', 'SELECT'])
    // Every table the migrations make append-only by trigger is append-only by grant too.
    const { APPEND_ONLY_TABLES } = await import('../../src/store/postgres/roles.js')
    const guarded = await sql<{ table: string }>(
      as(app),
      `SELECT DISTINCT c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE n.nspname = $1 AND p.proname = 'fw_append_only' ORDER BY 1`,
      [schema],
    )
    expect(guarded.map((g) => g.table)).toEqual([...APPEND_ONLY_TABLES].sort())
    const appendOnlyGrants = await sql<{ table_name: string; privileges: string }>(
      as(app),
      `SELECT table_name, string_agg(privilege_type, ',' ORDER BY privilege_type) AS privileges
       FROM information_schema.role_table_grants WHERE grantee = $1 AND table_schema = $2 AND table_name = ANY($3)
       GROUP BY table_name ORDER BY table_name`,
      [app, schema, [...APPEND_ONLY_TABLES]],
    )
    expect(appendOnlyGrants).toEqual(
      [...APPEND_ONLY_TABLES].sort().map((table_name) => ({ table_name, privileges: 'INSERT,SELECT' })),
    )
    await store.putQuarantineRule(
      {
        id: 'timeouts',
        match: { message: 'timeout' },
        reason: 'r',
        owner: null,
        issueUrl: null,
        createdAt: '2026-03-01T00:00:00.000Z',
        createdBy: 'ci',
        expiresAt: null,
      },
      { action: 'quarantine', actor: 'ci', at: '2026-03-01T00:00:00.000Z', reason: 'r' },
    )
    await expect(sql(as(app), `UPDATE quarantine_rule_audit SET actor = 'mallory'`)).rejects.toThrow(
      /permission denied/,
    )
    await expect(sql(as(app), `DELETE FROM quarantine_rule_audit`)).rejects.toThrow(/permission denied/)
    await store.close()
    await sql(pg.url!, `DROP SCHEMA ${schema} CASCADE; REVOKE ALL ON DATABASE test FROM ${migrator}`)
    await sql(pg.url!, `DROP OWNED BY ${app}; DROP OWNED BY ${migrator}`)
  }, 30_000)
})
