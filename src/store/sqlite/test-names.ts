import { markTestsStaleSqlite } from './analyses.js'
import { NotFoundError } from '../../errors.js'
import { carryTestState, type CarryAnswer, type CarryOutcome, type CarryStep } from '../merge-carry.js'
import { appendSqliteAudit } from './audit-log.js'
import {
  MAX_TEST_NAMES_PAGE,
  testNameFromRow,
  testNameWhere,
  checkMergeable,
  mergeAudit,
  sharedRunError,
  splitAudit,
  type MergeOutcome,
  type NameAudit,
  type TestName,
  type TestNameRow,
  type TestNameStore,
  type TestNameFilter,
} from '../test-names.js'
import type { SqliteDb } from './driver.js'

/** The names tests were seen under, in a SQLite store; writes go through the store's queue of this process's writes. */
export class SqliteTestNameStore implements TestNameStore {
  constructor(
    private readonly db: SqliteDb,
    private readonly serial: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {}

  recordNames(names: TestName[]): Promise<void> {
    if (names.length === 0) return Promise.resolve()
    return this.serial(() => {
      const insert = this.db.prepare(
        `INSERT INTO test_names (name_id, suite, test_id, module_is_label, source, at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name_id) DO UPDATE SET test_id = excluded.test_id, module_is_label = excluded.module_is_label,
           source = excluded.source, at = excluded.at
         WHERE excluded.source <> 'ingest'`,
      )
      this.db.transaction(() => {
        for (const n of names) insert.run(n.nameId, n.suite, n.testId, n.moduleIsLabel ? 1 : 0, n.source, n.at)
      })()
      return Promise.resolve()
    })
  }

  listNames(filter: TestNameFilter): Promise<TestName[]> {
    const where = testNameWhere(filter, () => '?')
    const rows = this.db
      .prepare(`SELECT * FROM test_names ${where.sql} ORDER BY name_id LIMIT ?`)
      .all(...where.params, MAX_TEST_NAMES_PAGE) as TestNameRow[]
    return Promise.resolve(rows.map(testNameFromRow))
  }

  mergeTests(from: string, into: string, audit: NameAudit): Promise<MergeOutcome> {
    return this.serial(() => {
      const db = this.db
      const outcome = db
        .transaction(() => {
          const idOf = (testId: string) => {
            const row = db.prepare('SELECT id, suite FROM tests WHERE test_id = ?').get(testId) as
              { id: number; suite: string } | undefined
            if (!row) throw new NotFoundError(`no test "${testId}"`)
            return row
          }
          const f = idOf(from)
          const i = idOf(into)
          checkMergeable(from, into, f.suite, i.suite)
          const shared = db
            .prepare(
              `SELECT r.run_id AS runId FROM results a JOIN results b ON a.run = b.run JOIN runs r ON r.id = a.run
               WHERE a.test = ? AND b.test = ? LIMIT 1`,
            )
            .get(f.id, i.id) as { runId: string } | undefined
          if (shared) throw sharedRunError(from, into, shared.runId)
          const moved = db.prepare('UPDATE results SET test = ? WHERE test = ?').run(i.id, f.id).changes
          db.prepare('UPDATE attempts SET test = ? WHERE test = ?').run(i.id, f.id)
          // The runs changed: a server comparing what was written since it last looked reads them again.
          db.prepare(
            `UPDATE runs SET written_at = max(?, (SELECT coalesce(max(written_at), 0) + 1 FROM runs))
             WHERE id IN (SELECT DISTINCT run FROM results WHERE test = ?)`,
          ).run(Date.now(), i.id)
          markTestsStaleSqlite(db, [f.id, i.id])
          db.prepare('DELETE FROM analyses WHERE test = ?').run(f.id)
          db.prepare('DELETE FROM tests WHERE id = ?').run(f.id)
          db.prepare('UPDATE test_names SET test_id = ? WHERE test_id = ?').run(into, from)
          db.prepare(
            `INSERT INTO test_names (name_id, suite, test_id, module_is_label, source, at) VALUES (?, ?, ?, 0, 'merge', ?)
             ON CONFLICT (name_id) DO UPDATE SET test_id = excluded.test_id, source = 'merge', at = excluded.at`,
          ).run(from, f.suite, into, audit.at)
          const outcome = { results: moved, ...carry(db, carryTestState(from, into, audit, Date.now())) }
          appendSqliteAudit(db, mergeAudit(from, into, audit, outcome))
          return outcome
        })
        .immediate()
      return Promise.resolve(outcome)
    })
  }

  splitName(nameId: string, audit: NameAudit): Promise<boolean> {
    return this.serial(() => {
      const db = this.db
      const done = db
        .transaction(() => {
          const row = db
            .prepare("SELECT suite, test_id AS testId FROM test_names WHERE name_id = ? AND source <> 'split'")
            .get(nameId) as { suite: string; testId: string } | undefined
          if (!row) return false
          db.prepare(
            "UPDATE test_names SET test_id = name_id, source = 'split', module_is_label = 0, at = ? WHERE name_id = ?",
          ).run(audit.at, nameId)
          appendSqliteAudit(db, splitAudit(nameId, row.testId, audit))
          return true
        })
        .immediate()
      return Promise.resolve(done)
    })
  }
}

/** Runs a merge's carry steps on SQLite, inside the caller's transaction. */
function carry(db: SqliteDb, steps: Generator<CarryStep, CarryOutcome, CarryAnswer>): CarryOutcome {
  let next = steps.next()
  while (!next.done) {
    const step = next.value
    let answer: CarryAnswer = { rows: [], changes: 0 }
    if ('audit' in step) appendSqliteAudit(db, step.audit)
    else {
      // `$n` is a named parameter to SQLite (better-sqlite3 has no numbered ones): bound by the name `n`.
      const stmt = db.prepare(step.sql)
      const params = Object.fromEntries(step.params.map((v, i) => [String(i + 1), v]))
      answer = /^\s*SELECT/i.test(step.sql)
        ? { rows: stmt.all(params) as Record<string, unknown>[], changes: 0 }
        : { rows: [], changes: stmt.run(params).changes }
    }
    next = steps.next(answer)
  }
  return next.value
}
