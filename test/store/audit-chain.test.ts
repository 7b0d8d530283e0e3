import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import {
  AUDIT_GENESIS,
  auditHash,
  formatAuditHead,
  legacyAuditHash,
  parseAuditHead,
  readAuditChain,
  verifyAuditChain,
  type AuditLogInput,
  type ChainedAuditEntry,
} from '../../src/store/audit-chain.js'
import { legacyAuditEntries, legacyFields, type LegacyQuarantineAuditRow } from '../../src/store/legacy-audit.js'
import type { PgClient } from '../../src/store/postgres/driver.js'
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { SQLITE_MIGRATIONS, migrateSqlite } from '../../src/store/sqlite/migrations.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { QuarantineRecord, QuarantineRule, Store } from '../../src/store/store.js'
import { runCliHere as runCli, testdir } from '../helpers/run-cli.js'
import { connectTo, resolveTestPg, schemas, sql } from './pg-helpers.js'

const at = (d: number) => new Date(Date.UTC(2026, 2, d)).toISOString()

const record = (testId: string, reason: string): QuarantineRecord => ({
  testId,
  reason,
  owner: 'team-a',
  issueUrl: null,
  createdAt: at(1),
  createdBy: 'ci',
  expiresAt: null,
  source: 'manual',
})

const rule = (id: string, reason: string): QuarantineRule => ({
  id,
  match: { message: 'Timeout \\d+ms' },
  reason,
  owner: null,
  issueUrl: null,
  createdAt: at(1),
  createdBy: 'alice',
  expiresAt: null,
})

/** Five changes of both kinds by two actors: entry 1 quarantine, 2 rule, 3 update, 4 rule removal, 5 release. */
async function writeTrail(store: Store): Promise<void> {
  const q = (reason: string, action: 'quarantine' | 'update', d: number) =>
    store.putQuarantine(record('unit::m::a', reason), { action, actor: 'ci', at: at(d), reason, source: 'manual' })
  await q('flaky', 'quarantine', 1)
  await store.putQuarantineRule(rule('timeouts', 'slow runners'), {
    action: 'quarantine',
    actor: 'alice',
    at: at(2),
    reason: 'slow runners',
  })
  await q('still flaky', 'update', 3)
  await store.deleteQuarantineRule('timeouts', { action: 'release', actor: 'alice', at: at(4), reason: 'fixed' })
  await store.deleteQuarantine('unit::m::a', {
    action: 'release',
    actor: 'alice',
    at: at(5),
    reason: 'fixed',
    source: null,
  })
}

function chain(inputs: AuditLogInput[]): ChainedAuditEntry[] {
  let prev = AUDIT_GENESIS
  return inputs.map((e, i) => {
    const hash = auditHash(prev, e)
    const out = { ...e, id: i + 1, prevHash: prev, hash }
    prev = hash
    return out
  })
}

const entry = (n: number, kind: AuditLogInput['kind'] = 'quarantine'): AuditLogInput => ({
  kind,
  subject: `t${n}`,
  action: 'quarantine',
  actor: 'ci',
  at: at(n),
  reason: 'r',
  source: null,
  data: { n },
})

describe('audit chain (pure)', () => {
  const five = chain([1, 2, 3, 4, 5].map((n) => entry(n, n % 2 ? 'quarantine' : 'rule')))
  const head = (n: number) => ({ count: n, hash: n ? five[n - 1]!.hash : AUDIT_GENESIS })

  it('chains each hash to the previous one, so that a change anywhere breaks the next link', async () => {
    expect(await verifyAuditChain(five, { recorded: head(5) })).toMatchObject({ ok: true, checked: 5, head: head(5) })
    const edited = five.map((e) => (e.id === 2 ? { ...e, actor: 'mallory' } : e))
    expect((await verifyAuditChain(edited)).firstBad).toMatchObject({ id: 2, kind: 'rule', problem: /edited/ })
    expect((await verifyAuditChain(five.slice(1))).firstBad).toMatchObject({ id: 2, problem: /removed/ })
    // Key order in the stored data does not change the hash.
    const data = { a: 1, b: { c: 2, d: 3 } }
    const reordered = { b: { d: 3, c: 2 }, a: 1 }
    expect(auditHash(AUDIT_GENESIS, { ...entry(1), data })).toBe(
      auditHash(AUDIT_GENESIS, { ...entry(1), data: reordered }),
    )
  })

  it('finds entries removed from the end by the recorded head, and by an anchored head', async () => {
    // The store recorded five entries; the last, or all, are gone.
    const lastGone = await verifyAuditChain(five.slice(0, 4), { recorded: head(5) })
    expect(lastGone).toMatchObject({ ok: false, firstBad: null, endProblem: /1 entries were removed from its end/ })
    expect((await verifyAuditChain([], { recorded: head(5) })).endProblem).toMatch(/5 entries were removed/)
    // Whoever removed them also rewound the recorded head: only the head anchored outside the store shows it.
    expect((await verifyAuditChain(five.slice(0, 4), { recorded: head(4) })).ok).toBe(true)
    const anchored = await verifyAuditChain(five.slice(0, 4), { recorded: head(4), expect: head(5) })
    expect(anchored).toMatchObject({ ok: false, endProblem: /has 4 entries, but the anchored head .* counts 5/ })
    // Entries appended after the anchor are fine; a rewritten prefix is not.
    expect((await verifyAuditChain(five, { recorded: head(5), expect: head(3) })).ok).toBe(true)
    expect((await verifyAuditChain(five, { expect: head(0) })).ok).toBe(true)
    const rewritten = chain([1, 2, 3, 4, 5].map((n) => ({ ...entry(n), reason: n === 2 ? 'other' : 'r' })))
    expect((await verifyAuditChain(rewritten, { expect: head(3) })).firstBad).toMatchObject({
      id: 3,
      problem: /anchored head .* was rewritten/,
    })
  })

  it('reads and writes heads as <count>:<hash>', () => {
    const h = { count: 42, hash: 'ab'.repeat(32) }
    expect(parseAuditHead(formatAuditHead(h))).toEqual(h)
    expect(() => parseAuditHead('42')).toThrow(/expected <count>:<sha256 hex>/)
    expect(() => parseAuditHead(`x:${h.hash}`)).toThrow(/audit head/)
  })

  it('moves the older trails into the chain in time order, and passes on an old chain that was already broken', async () => {
    const legacy = (id: number, d: number, reason: string, prev: string): LegacyQuarantineAuditRow => {
      const row = {
        id,
        test_id: 't',
        action: 'quarantine',
        actor: 'ci',
        at: at(d),
        reason,
        source: 'auto',
        record: null,
      }
      return {
        ...row,
        prev_hash: prev,
        hash: legacyAuditHash(prev, legacyFields({ ...row, prev_hash: null, hash: null })),
      }
    }
    const q1 = legacy(1, 1, 'a', AUDIT_GENESIS)
    const q2 = legacy(2, 3, 'b', q1.hash!)
    const r1 = { id: 1, rule_id: 'x', action: 'quarantine', actor: 'al', at: at(2), reason: 'r', rule: '{"id":"x"}' }
    const moved = legacyAuditEntries([q1, q2], [r1], at(9))
    expect(moved.map((e) => `${e.kind}:${e.subject}`)).toEqual([
      'quarantine:t',
      'rule:x',
      'quarantine:t',
      'audit:audit_log',
    ])
    expect(moved[1]!.data).toEqual({ id: 'x' })
    expect((await verifyAuditChain(chain(moved))).ok).toBe(true)
    const broken = legacyAuditEntries([q1, { ...q2, reason: 'edited before the move' }], [], at(9))
    expect((await verifyAuditChain(chain(broken))).firstBad).toMatchObject({
      kind: 'audit',
      problem: /already broken at its entry 2/,
    })
    expect(legacyAuditEntries([], [], at(9))).toEqual([])
  })
})

/** One backend, as the tamper tests see it. */
interface Backend {
  name: string
  open(): Promise<{ store: Store; db: string }>
  /** Raw SQL, run outside flakewatch, as someone with access to the database would. */
  raw(db: string, text: string): Promise<unknown>
  /** SQL that turns the chain's guards off (only the owner can). */
  disarm: string
}

const pg = await resolveTestPg()
const made = pg.url ? schemas(pg.url) : undefined
afterAll(async () => made?.dropAll())

const BACKENDS: Backend[] = [
  {
    name: 'SQLite',
    async open() {
      const db = join(testdir({}, 'audit-'), 'fw.db')
      return { store: await openSqliteStore(db), db }
    },
    // eslint-disable-next-line @typescript-eslint/require-await -- rejects like the PostgreSQL one
    async raw(db, text) {
      const d = new Database(db)
      try {
        d.exec(text)
      } finally {
        d.close()
      }
    },
    disarm: `DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete; DROP TRIGGER audit_head_follows;`,
  },
  ...(pg.url
    ? [
        {
          name: 'PostgreSQL',
          async open() {
            const db = made!.fresh()
            return { store: await openPostgresStore(db), db }
          },
          raw: (db: string, text: string) => sql(db, text),
          disarm: `ALTER TABLE audit_log DISABLE TRIGGER USER; ALTER TABLE audit_head DISABLE TRIGGER USER;`,
        },
      ]
    : []),
]

if (pg.skip) it.skip(`audit chain on PostgreSQL (skipped: ${pg.skip})`, () => undefined)

describe.each(BACKENDS)('audit chain on $name', (b) => {
  const verify = async (db: string, ...extra: string[]) => {
    const r = await runCli(['audit', 'verify', '--db', db, '--json', ...extra])
    return { exitCode: r.exitCode, json: JSON.parse(r.stdout || 'null') as Record<string, unknown>, stderr: r.stderr }
  }

  it('chains quarantines and rules in one chain, and the database refuses every edit', async () => {
    const { store, db } = await b.open()
    await writeTrail(store)
    const entries: ChainedAuditEntry[] = []
    for await (const e of readAuditChain(store, 2)) entries.push(e)
    expect(entries.map((e) => `${e.kind} ${e.subject} ${e.action}`)).toEqual([
      'quarantine unit::m::a quarantine',
      'rule timeouts quarantine',
      'quarantine unit::m::a update',
      'rule timeouts release',
      'quarantine unit::m::a release',
    ])
    expect(await store.auditHead()).toEqual({ count: 5, hash: entries[4]!.hash })
    // The typed views read the same chain.
    expect((await store.listAudit({ testId: 'unit::m::a' })).map((a) => a.action)).toEqual([
      'release',
      'update',
      'quarantine',
    ])
    expect((await store.listRuleAudit()).map((a) => [a.ruleId, a.action, a.rule?.reason ?? null])).toEqual([
      ['timeouts', 'release', null],
      ['timeouts', 'quarantine', 'slow runners'],
    ])
    await store.close()

    const refused = [
      `UPDATE audit_log SET actor = 'mallory' WHERE id = 2`,
      `DELETE FROM audit_log WHERE id = 5`,
      `DELETE FROM audit_log`,
      `UPDATE audit_head SET count = 4`,
      `DELETE FROM audit_head`,
      // An entry that does not chain to the head.
      `INSERT INTO audit_log (kind, subject, action, actor, at, reason, prev_hash, hash)
       VALUES ('rule', 'x', 'quarantine', 'm', 'now', 'r', '${AUDIT_GENESIS}', 'f')`,
    ]
    if (b.name === 'SQLite') {
      refused.push(
        `INSERT OR REPLACE INTO audit_log SELECT 2, kind, subject, action, 'mallory', at, reason, source, data, prev_hash, hash FROM audit_log WHERE id = 2`,
        `INSERT OR REPLACE INTO audit_head (one, count, hash) VALUES (1, 4, 'x')`,
      )
    } else {
      refused.push(
        `TRUNCATE audit_log`,
        `TRUNCATE audit_head`,
        `INSERT INTO audit_log OVERRIDING SYSTEM VALUE SELECT 2, kind, subject, action, 'mallory', at, reason, source, data, prev_hash, hash FROM audit_log WHERE id = 5`,
      )
    }
    for (const text of refused) {
      await expect(b.raw(db, text), text).rejects.toThrow(
        /append-only|chain to the head|moves only with audit_log|cannot be replaced/,
      )
    }
    const ok = await verify(db)
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(ok.json).toMatchObject({ ok: true, checked: 5, head: `5:${entries[4]!.hash}`, first_bad: null })
    const head = await runCli(['audit', 'head', '--db', db])
    expect(head.stdout.trim()).toBe(`5:${entries[4]!.hash}`)
  }, 60_000)

  it('names the first edited entry of each kind, with exit 1', async () => {
    const { store, db } = await b.open()
    await writeTrail(store)
    await store.close()
    await b.raw(db, `${b.disarm} UPDATE audit_log SET actor = 'mallory' WHERE id = 4`)
    const rule = await verify(db)
    expect(rule.exitCode).toBe(1)
    expect(rule.json).toMatchObject({ ok: false, checked: 4, first_bad: { id: 4, kind: 'rule', subject: 'timeouts' } })
    await b.raw(db, `UPDATE audit_log SET reason = 'nothing to see' WHERE id = 3`)
    const quarantine = await verify(db)
    expect(quarantine.json).toMatchObject({
      first_bad: { id: 3, kind: 'quarantine', problem: expect.stringMatching(/edited/) },
    })
    const human = await runCli(['audit', 'verify', '--db', db])
    expect(human.exitCode).toBe(1)
    expect(human.stdout).toMatch(/TAMPERED: entry 3 \(quarantine unit::m::a, .*edited/)
  }, 60_000)

  it('finds entries removed from the end: by the recorded head, and by an anchored one when the head was rewound', async () => {
    const { store, db } = await b.open()
    await writeTrail(store)
    await store.close()
    const anchor = (await runCli(['audit', 'head', '--db', db])).stdout.trim()
    await b.raw(db, `${b.disarm} DELETE FROM audit_log WHERE id = 5`)
    const last = await verify(db)
    expect(last.exitCode).toBe(1)
    expect(last.json).toMatchObject({
      ok: false,
      first_bad: null,
      end_problem: expect.stringMatching(/1 entries were removed/),
    })
    await b.raw(db, `DELETE FROM audit_log`)
    const all = await verify(db)
    expect(all.exitCode).toBe(1)
    expect(all.json).toMatchObject({ checked: 0, end_problem: expect.stringMatching(/5 entries were removed/) })
    // Whoever emptied the chain also reset the recorded head: the anchored head still tells.
    await b.raw(db, `UPDATE audit_head SET count = 0, hash = '${AUDIT_GENESIS}'`)
    expect((await verify(db)).exitCode).toBe(0)
    const anchored = await verify(db, '--expect', anchor)
    expect(anchored.exitCode).toBe(1)
    expect(anchored.json).toMatchObject({
      end_problem: expect.stringMatching(/has 0 entries, but the anchored head .* counts 5/),
    })
    const bad = await runCli(['audit', 'verify', '--db', db, '--expect', 'nonsense'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/expected <count>:<sha256 hex>/)
  }, 60_000)

  it('passes through an anchored head while new entries are appended after it', async () => {
    const { store, db } = await b.open()
    await writeTrail(store)
    const anchor = formatAuditHead(await store.auditHead())
    await store.putQuarantine(record('unit::m::b', 'new'), {
      action: 'quarantine',
      actor: 'ci',
      at: at(6),
      reason: 'new',
      source: 'auto',
    })
    await store.close()
    const v = await verify(db, '--expect', anchor)
    expect(v.exitCode, JSON.stringify(v.json)).toBe(0)
    expect(v.json).toMatchObject({ ok: true, checked: 6 })
  }, 60_000)
})

describe('moving the older trails into the chain (migration 0013)', () => {
  it('on SQLite: keeps every entry of both trails in order, and the result verifies', async () => {
    const file = join(testdir({}, 'audit-'), 'old.db')
    const d = new Database(file)
    const before = SQLITE_MIGRATIONS.findIndex((m) => m.id === '0013-audit-chain')
    expect(migrateSqlite(d, SQLITE_MIGRATIONS.slice(0, before)).error).toBeUndefined()
    let prev = AUDIT_GENESIS
    for (const [id, d0] of [
      [1, 1],
      [2, 3],
    ] as const) {
      const fields = {
        testId: 't',
        action: 'quarantine',
        actor: 'ci',
        at: at(d0),
        reason: `r${id}`,
        source: 'auto',
        record: null,
      }
      const hash = legacyAuditHash(prev, fields)
      d.prepare(
        `INSERT INTO quarantine_audit (test_id, action, actor, at, reason, source, record, prev_hash, hash) VALUES ('t', 'quarantine', 'ci', ?, ?, 'auto', NULL, ?, ?)`,
      ).run(at(d0), `r${id}`, prev, hash)
      prev = hash
    }
    d.prepare(
      `INSERT INTO quarantine_rule_audit (rule_id, action, actor, at, reason, rule) VALUES ('x', 'quarantine', 'al', ?, 'r', '{"id":"x"}')`,
    ).run(at(2))
    d.close()
    const store = await openSqliteStore(file)
    expect((await store.listAuditLog({ kind: 'audit' })).map((e) => e.reason)).toEqual([
      'moved 2 quarantine and 1 rule audit entries into one chain',
    ])
    expect((await store.listAudit()).map((a) => a.reason)).toEqual(['r2', 'r1'])
    expect((await store.listRuleAudit()).map((a) => a.ruleId)).toEqual(['x'])
    await store.close()
    const v = await runCli(['audit', 'verify', '--db', file, '--json'])
    expect(v.exitCode, v.stdout).toBe(0)
    expect(JSON.parse(v.stdout)).toMatchObject({ checked: 4 })
  }, 30_000)
})

describe.skipIf(pg.skip)('audit chain on PostgreSQL: roles and triggers', () => {
  const roles: string[] = []
  // Whatever the test's database is called (FLAKEWATCH_TEST_PG may name any), and however the test ended: a role
  // that still holds a grant or owns an object cannot be dropped, so each loses both first.
  afterAll(async () => {
    for (const r of roles) {
      await sql(
        pg.url!,
        `DO $$ BEGIN
           IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${r}') THEN
             EXECUTE format('REVOKE ALL ON DATABASE %I FROM %I', current_database(), '${r}');
             EXECUTE format('DROP OWNED BY %I', '${r}');
             EXECUTE format('DROP ROLE %I', '${r}');
           END IF;
         END $$`,
      )
    }
    const left = await sql<{ n: number }>(pg.url!, `SELECT count(*)::int AS n FROM pg_roles WHERE rolname = ANY($1)`, [
      roles,
    ])
    expect(left).toEqual([{ n: 0 }])
  })

  it('has the same triggers as SQLite, name for name (PostgreSQL adds TRUNCATE guards)', async () => {
    const url = made!.fresh()
    const store = await openPostgresStore(url)
    await store.close()
    const schema = new URL(url).searchParams.get('schema')!
    const pgTriggers = await sql<{ name: string }>(
      url,
      `SELECT DISTINCT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname IN ('audit_log', 'audit_head') AND NOT t.tgisinternal ORDER BY 1`,
      [schema],
    )
    const file = join(testdir({}, 'audit-'), 'fw.db')
    await (await openSqliteStore(file)).close()
    const d = new Database(file)
    const sqliteTriggers = d
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('audit_log', 'audit_head') ORDER BY 1`,
      )
      .pluck()
      .all()
    d.close()
    expect(pgTriggers.map((t) => t.name).filter((n) => !n.endsWith('_no_truncate'))).toEqual(sqliteTriggers)
    expect(sqliteTriggers).toHaveLength(8)
  }, 30_000)

  it('lets the application role append, but neither edit the chain nor move its head', async () => {
    const { postgresRoleGrants } = await import('../../src/store/postgres/roles.js')
    const suffix = Math.random().toString(36).slice(2, 10)
    const migrator = `fw_migrator_${suffix}`
    const app = `fw_app_${suffix}`
    roles.push(app, migrator)
    const url = made!.fresh()
    const schema = new URL(url).searchParams.get('schema')!
    await sql(
      pg.url!,
      `CREATE ROLE ${migrator} LOGIN; CREATE ROLE ${app} LOGIN;
       DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO ${migrator}', current_database()); END $$`,
    )
    const as = (role: string) => {
      const u = new URL(url)
      u.username = role
      return u.toString()
    }
    await (await openPostgresStore(as(migrator))).close()
    await sql(as(migrator), postgresRoleGrants({ schema, appRole: app }).join(';\n'))
    const store = await openPostgresStore(as(app))
    await writeTrail(store)
    await store.close()
    for (const text of [
      `UPDATE audit_log SET actor = 'mallory'`,
      `DELETE FROM audit_log`,
      `TRUNCATE audit_log`,
      `UPDATE audit_head SET count = 0`,
      `ALTER TABLE audit_log DISABLE TRIGGER USER`,
    ]) {
      await expect(sql(as(app), text), text).rejects.toThrow(/permission denied|must be owner|append-only/)
    }
    const v = await runCli(['audit', 'verify', '--db', as(app), '--json'])
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, checked: 5 })
    await sql(
      pg.url!,
      `DROP SCHEMA ${schema} CASCADE;
       DO $$ BEGIN EXECUTE format('REVOKE ALL ON DATABASE %I FROM ${migrator}', current_database()); END $$`,
    )
    await sql(pg.url!, `DROP OWNED BY ${app}; DROP OWNED BY ${migrator}`)
  }, 60_000)

  it('moves the older trails of an existing PostgreSQL schema into the chain', async () => {
    const url = made!.fresh()
    const before = POSTGRES_MIGRATIONS.findIndex((m) => m.id === '0013-audit-chain')
    const { migratePostgres } = await import('../../src/store/postgres/migrations.js')
    const client = await connectTo(url)
    const schema = new URL(url).searchParams.get('schema')!
    const asPgClient = Object.assign(client, { release: () => undefined }) as unknown as PgClient
    expect((await migratePostgres(asPgClient, schema, POSTGRES_MIGRATIONS.slice(0, before))).error).toBeUndefined()
    const hash = legacyAuditHash(AUDIT_GENESIS, {
      testId: 't',
      action: 'quarantine',
      actor: 'ci',
      at: at(1),
      reason: 'r',
      source: 'auto',
      record: null,
    })
    await client.query(
      `INSERT INTO quarantine_audit (test_id, action, actor, at, reason, source, record, prev_hash, hash) VALUES ('t', 'quarantine', 'ci', $1, 'r', 'auto', NULL, $2, $3)`,
      [at(1), AUDIT_GENESIS, hash],
    )
    await client.query(
      `INSERT INTO quarantine_rule_audit (rule_id, action, actor, at, reason, rule) VALUES ('x', 'quarantine', 'al', $1, 'r', NULL)`,
      [at(2)],
    )
    await client.end()
    const store = await openPostgresStore(url)
    expect((await store.listAudit()).map((a) => a.testId)).toEqual(['t'])
    expect((await store.listRuleAudit()).map((a) => a.ruleId)).toEqual(['x'])
    await store.close()
    const v = await runCli(['audit', 'verify', '--db', url, '--json'])
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, checked: 3 })
  }, 30_000)
})
