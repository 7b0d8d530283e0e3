import {
  MAX_TEST_NAMES_PAGE,
  testNameFromRow,
  testNameWhere,
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
}
