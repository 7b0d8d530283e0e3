import { markTestsStalePg } from './analyses.js'
import { NotFoundError } from '../../errors.js'
import { carryTestState, type CarryAnswer, type CarryOutcome, type CarryStep } from '../merge-carry.js'
import { appendPostgresAudit } from './audit-log.js'
import type { PgClient, PgQueryable } from './driver.js'
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

  async mergeTests(from: string, into: string, audit: NameAudit): Promise<MergeOutcome> {
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ id: number; suite: string; test_id: string }>(
        'SELECT id, suite, test_id FROM tests WHERE test_id = ANY($1::text[]) ORDER BY id FOR UPDATE',
        [[from, into]],
      )
      const idOf = (testId: string) => {
        const row = rows.find((r) => r.test_id === testId)
        if (!row) throw new NotFoundError(`no test "${testId}"`)
        return row
      }
      const f = idOf(from)
      const i = idOf(into)
      checkMergeable(from, into, f.suite, i.suite)
      const shared = await client.query<{ run_id: string }>(
        `SELECT r.run_id FROM results a JOIN results b ON a.run = b.run AND a.at = b.at JOIN runs r ON r.id = a.run
         WHERE a.test = $1 AND b.test = $2 LIMIT 1`,
        [f.id, i.id],
      )
      if (shared.rows[0]) throw sharedRunError(from, into, shared.rows[0].run_id)
      const moved = (await client.query('UPDATE results SET test = $1 WHERE test = $2', [i.id, f.id])).rowCount ?? 0
      await client.query('UPDATE attempts SET test = $1 WHERE test = $2', [i.id, f.id])
      // The runs changed: a server comparing what was written since it last looked reads them again.
      await client.query(
        `UPDATE runs SET written_at = greatest(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
           (SELECT coalesce(max(written_at), 0) + 1 FROM runs))
         WHERE id IN (SELECT DISTINCT run FROM results WHERE test = $1)`,
        [i.id],
      )
      await markTestsStalePg(
        client,
        [f.id, i.id].sort((a, b) => a - b),
      )
      await client.query('DELETE FROM analyses WHERE test = $1', [f.id])
      await client.query('DELETE FROM tests WHERE id = $1', [f.id])
      await client.query('UPDATE test_names SET test_id = $1 WHERE test_id = $2', [into, from])
      await client.query(
        `INSERT INTO test_names (name_id, suite, test_id, module_is_label, source, at) VALUES ($1, $2, $3, false, 'merge', $4)
         ON CONFLICT (name_id) DO UPDATE SET test_id = excluded.test_id, source = 'merge', at = excluded.at`,
        [from, f.suite, into, audit.at],
      )
      const outcome = { results: moved, ...(await carry(client, carryTestState(from, into, audit, Date.now()))) }
      await appendPostgresAudit(client, mergeAudit(from, into, audit, outcome))
      return outcome
    })
  }

  async splitName(nameId: string, audit: NameAudit): Promise<boolean> {
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ test_id: string }>(
        "SELECT test_id FROM test_names WHERE name_id = $1 AND source <> 'split' FOR UPDATE",
        [nameId],
      )
      if (!rows[0]) return false
      await client.query(
        "UPDATE test_names SET test_id = name_id, source = 'split', module_is_label = false, at = $1 WHERE name_id = $2",
        [audit.at, nameId],
      )
      await appendPostgresAudit(client, splitAudit(nameId, rows[0].test_id, audit))
      return true
    })
  }
}

/** Runs a merge's carry steps on PostgreSQL, inside the caller's transaction. */
async function carry(client: PgClient, steps: Generator<CarryStep, CarryOutcome, CarryAnswer>): Promise<CarryOutcome> {
  let next = steps.next()
  while (!next.done) {
    const step = next.value
    let answer: CarryAnswer = { rows: [], changes: 0 }
    if ('audit' in step) await appendPostgresAudit(client, step.audit)
    else {
      const r = await client.query<Record<string, unknown>>(step.sql, step.params)
      answer = { rows: r.rows, changes: r.rowCount ?? 0 }
    }
    next = steps.next(answer)
  }
  return next.value
}
