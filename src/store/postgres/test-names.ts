import type { PgClient, PgQueryable } from './driver.js'
import {
  MAX_TEST_NAMES_PAGE,
  testNameFromRow,
  testNameWhere,
  type TestName,
  type TestNameRow,
  type TestNameStore,
  type TestNameFilter,
} from '../test-names.js'

/** The names tests were seen under, in a PostgreSQL store. */
export class PostgresTestNameStore implements TestNameStore {
  constructor(
    private readonly db: PgQueryable,
    private readonly transaction: <T>(fn: (client: PgClient) => Promise<T>) => Promise<T>,
  ) {}

  async recordNames(names: TestName[]): Promise<void> {
    if (names.length === 0) return
    await this.transaction(async (client) => {
      // One statement for the lot, from arrays: no parameter list that grows with the names.
      await client.query(
        `INSERT INTO test_names (name_id, suite, test_id, module_is_label, source, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[])
         ON CONFLICT (name_id) DO UPDATE SET test_id = excluded.test_id, module_is_label = excluded.module_is_label,
           source = excluded.source, at = excluded.at
         WHERE excluded.source <> 'ingest'`,
        [
          names.map((n) => n.nameId),
          names.map((n) => n.suite),
          names.map((n) => n.testId),
          names.map((n) => n.moduleIsLabel),
          names.map((n) => n.source),
          names.map((n) => n.at),
        ],
      )
    })
  }

  async listNames(filter: TestNameFilter): Promise<TestName[]> {
    const where = testNameWhere(filter, (n) => `$${n}`)
    const { rows } = await this.db.query<TestNameRow>(
      `SELECT * FROM test_names ${where.sql} ORDER BY name_id COLLATE "C" LIMIT $${where.params.length + 1}`,
      [...where.params, MAX_TEST_NAMES_PAGE],
    )
    return rows.map(testNameFromRow)
  }
}
