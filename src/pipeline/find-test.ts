import { SuiteIdentities } from '../ingest/test-identity.js'
import { TEST_ID_SEPARATOR, type TestRef } from '../model.js'
import type { Store } from '../store/store.js'

/** What a test id a person typed names in the store. */
export type FoundTest =
  /** A stored test: the id itself (`how: 'id'`), a name it was seen under, or a name ingest would match to it. */
  | { kind: 'found'; ref: TestRef; how: 'id' | 'name' | 'match' }
  /** A name that fits several stored tests (the first few listed): ingest keeps it apart, and so does a command. */
  | { kind: 'ambiguous'; candidates: string[] }
  | { kind: 'unknown' }

export interface FindTestOptions {
  /**
   * Also match the name as ingest matches a report's names (the same title in the same file, seen from another
   * folder or reporter; see `ingest/test-identity.ts`). It reads the suite's tests, so only a command a person
   * runs asks for it.
   */
  match?: boolean
}

/**
 * The stored test a typed id means: the test of that id; else the test a recorded name of it was matched to
 * (`test_names`, what ingest and `tests merge` decided); else, with `match`, the one test ingest would match
 * the name to. Names a person split from their test are not followed.
 * @example const found = await findTest(store, 'unit::Auth::Auth expires', { match: true })
 */
export async function findTest(store: Store, requested: string, opts: FindTestOptions = {}): Promise<FoundTest> {
  const own = await store.getTest(requested)
  if (own) return { kind: 'found', ref: own, how: 'id' }
  const named = (await store.testNames().listNames({ nameId: requested })).find((n) => n.source !== 'split')
  const target = named ? await store.getTest(named.testId) : null
  if (target) return { kind: 'found', ref: target, how: 'name' }
  if (!opts.match || named) return { kind: 'unknown' }
  const [suite, module, ...rest] = requested.split(TEST_ID_SEPARATOR)
  if (suite === undefined || module === undefined || rest.length === 0) return { kind: 'unknown' }
  const [tests, names] = await Promise.all([store.listTests({ suite }), store.testNames().listNames({ suite })])
  const ref: TestRef = { testId: requested, suite, module, name: rest.join(TEST_ID_SEPARATOR), file: null }
  const r = new SuiteIdentities(tests, names).resolve(ref)
  if (r.kind === 'ambiguous') return { kind: 'ambiguous', candidates: r.candidates }
  // A match is one of the stored tests, never a name made up for a new one.
  const matched = r.kind === 'alias' ? await store.getTest(r.ref.testId) : null
  return matched ? { kind: 'found', ref: matched, how: 'match' } : { kind: 'unknown' }
}
