import { InputError } from '../errors.js'
import type { AuditLogInput } from './audit-chain.js'
import type { CarryOutcome } from './merge-carry.js'

/**
 * The names a test was seen under (issue 27, item 5): each name a report gave that ingest matched to a test the
 * store already knew, and each test whose module is only a label (jest-junit's default output), so that what one
 * command decided holds for the next and `show` can list them. A concern of its own in each backend.
 */

/** Where a name's link to its test came from. */
export type TestNameSource = 'ingest' | 'merge' | 'split'

export interface TestName {
  /** The id the report's own name would have given (`suite::module::name`). */
  nameId: string
  suite: string
  /** The test it is; for a `split` name, the name itself (it is kept apart from the test it was matched to). */
  testId: string
  /** The reported module was only a label, not a file or class (see `TestRef.moduleIsLabel`). */
  moduleIsLabel: boolean
  source: TestNameSource
  /** When the link was made (ISO 8601). */
  at: string
}

/** Names listed per call, at most. */
export const MAX_TEST_NAMES_PAGE = 100_000

/** Names of one suite, of one test (`testId`), or one name (`nameId`); the filters combine. */
export interface TestNameFilter {
  suite?: string
  testId?: string
  nameId?: string
}

export interface TestNameStore {
  /**
   * Records names. An `ingest` name already recorded keeps its link (the first decision stands); a `merge` or
   * `split` replaces it, since a person decided.
   */
  recordNames(names: TestName[]): Promise<void>
  /** The names of one suite, or those of one test, in name order (at most {@link MAX_TEST_NAMES_PAGE}). */
  listNames(filter: TestNameFilter): Promise<TestName[]>
  /**
   * Merges test `from` into test `into` (same suite), with its audit line, in one transaction: `from`'s results and
   * attempts become `into`'s, `from`'s id becomes a name of `into` (and so do the names that were `from`'s), and
   * `from` is no longer a test. Its quarantine, ticket and heal fingerprints go with it (see `merge-carry.ts`). Refused (an `InputError`) when the two have results in the same run: they ran as
   * two tests there.
   */
  mergeTests(from: string, into: string, audit: NameAudit): Promise<MergeOutcome>
  /**
   * Keeps name `nameId` apart from the test it was matched to, with its audit line: reports that name it from now
   * on give a test of its own. Results stored before stay where they are. False when no test has that name.
   */
  splitName(nameId: string, audit: NameAudit): Promise<boolean>
}

/** Who merged or split, and why. */
export interface NameAudit {
  actor: string
  reason: string
  /** ISO 8601. */
  at: string
}

export interface MergeOutcome extends CarryOutcome {
  /** Results moved from `from` to `into`. */
  results: number
}

/** Refuses a merge of a test into itself or across suites (a suite is a separate set of tests). */
export function checkMergeable(from: string, into: string, fromSuite: string, intoSuite: string): void {
  if (from === into) throw new InputError(`cannot merge "${from}" into itself`)
  if (fromSuite !== intoSuite) {
    throw new InputError(
      `"${from}" is in suite "${fromSuite}" and "${into}" in "${intoSuite}": merge tests of one suite`,
    )
  }
}

/** Two tests with results in one run ran as two tests: merging them would lose one of those results. */
export function sharedRunError(from: string, into: string, runId: string): InputError {
  return new InputError(`"${from}" and "${into}" both have a result in run "${runId}": they ran as two tests`)
}

/** The audit line of a merge (`subject`: the id merged away). */
export function mergeAudit(from: string, into: string, a: NameAudit, outcome: MergeOutcome): AuditLogInput {
  return { kind: 'test', subject: from, action: 'merge', ...a, source: 'manual', data: { into, ...outcome } }
}

/** The audit line of a split (`subject`: the name kept apart). */
export function splitAudit(nameId: string, from: string, a: NameAudit): AuditLogInput {
  return { kind: 'test', subject: nameId, action: 'split', ...a, source: 'manual', data: { from } }
}

/**
 * The WHERE clause of a {@link TestNameFilter} for either backend, with its parameters; `slot(n)` writes the
 * n-th placeholder (`?` or `$n`).
 */
export function testNameWhere(filter: TestNameFilter, slot: (n: number) => string): { sql: string; params: string[] } {
  const params: string[] = []
  const where: string[] = []
  const columns = [
    ['suite', filter.suite],
    ['test_id', filter.testId],
    ['name_id', filter.nameId],
  ] as const
  for (const [column, value] of columns) {
    if (value !== undefined) where.push(`${column} = ${slot(params.push(value))}`)
  }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params }
}

/** A row of `test_names` as both backends read it. */
export interface TestNameRow {
  name_id: string
  suite: string
  test_id: string
  module_is_label: number | boolean
  source: string
  at: string
}

export function testNameFromRow(r: TestNameRow): TestName {
  return {
    nameId: r.name_id,
    suite: r.suite,
    testId: r.test_id,
    moduleIsLabel: r.module_is_label === true || r.module_is_label === 1,
    source: r.source as TestNameSource,
    at: r.at,
  }
}
