import { asOfTime } from '../analysis/as-of.js'
import type { TestAnalysis } from '../analysis/types.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import type { TestHistory, TestRef } from '../model.js'
import type { AuditEntry, QuarantineRecord, Store } from '../store/store.js'
import { analyzeStore } from './analyze-store.js'
import { findTest } from './find-test.js'

/** Everything `flakewatch show` says about one test. */
export interface TestExplanation {
  analysis: TestAnalysis
  owners: string[]
  history: TestHistory
  quarantine: QuarantineRecord | null
  audit: AuditEntry[]
  trailingPasses: number
  /** The other ids its reports named it by, matched at ingest or merged by hand (see `store/test-names.ts`). */
  names: string[]
}

/** Other tests of the shown test's file read for its order-dependency hint: a file rarely has more. */
export const EXPLAIN_FILE_PEERS = 2000

/** Other names an explanation lists, at most. */
export const EXPLAIN_NAMES = 50

/** Audit lines an explanation carries, newest first. */
export const EXPLAIN_AUDIT_LINES = 20

export interface ExplainOptions {
  /** Ends every analysis window here (default: the newest run of the whole store, as `analyze`). */
  asOf?: number
  ownersOf?: (test: TestRef) => string[]
}

/**
 * One test explained, as `show`, the MCP server's `explain_test` and a tracker ticket tell it: its analysis
 * (verdict, evidence, failure modes, hints) at the same as-of time as `analyze`, its history, owners, quarantine
 * and audit. Reads the test and the other tests of its file by index (their order matters to its hints), never
 * the whole store. Null for a test with no results.
 * @example const e = await explainTest(store, config, 'unit::src/cart.test.ts::adds an item')
 */
export async function explainTest(
  store: Store,
  config: Pick<ResolvedConfig, 'analysis' | 'successRate' | 'defaultBranch'>,
  requested: string,
  opts: ExplainOptions = {},
): Promise<TestExplanation | null> {
  let found: TestExplanation | undefined
  // A name the test was seen under shows the test.
  const named = await findTest(store, requested)
  const testId = named.kind === 'found' ? named.ref.testId : requested
  // The as-of time is the newest run of the whole store, not of this one test, so that the verdict is the one
  // `analyze` lists.
  const now = opts.asOf ?? asOfTime(await store.runSummaries({}), undefined, Date.now())
  const ref = await store.getTest(testId)
  const peers = ref ? await store.listTests({ search: `${ref.suite}::${ref.module}::`, limit: EXPLAIN_FILE_PEERS }) : []
  const testIds = [testId, ...peers.map((p) => p.testId).filter((id) => id !== testId)]
  await analyzeStore(store, {
    config: analysisOptions(config),
    now,
    filter: { testIds },
    onTest: (history, analysis) => {
      if (history.test.testId !== testId) return
      found = {
        analysis,
        owners: [],
        history,
        quarantine: null,
        audit: [],
        trailingPasses: analysis.trailingPasses,
        names: [],
      }
    },
  })
  if (!found) return null
  found.owners = opts.ownersOf?.(found.history.test) ?? []
  found.quarantine = await store.getQuarantine(testId)
  found.audit = await store.listAudit({ testId, limit: EXPLAIN_AUDIT_LINES })
  found.names = (await store.testNames().listNames({ testId }))
    .filter((n) => n.nameId !== testId && n.source !== 'split')
    .slice(0, EXPLAIN_NAMES)
    .map((n) => n.nameId)
  return found
}

/** Tests whose id has the unknown id's last part, for "did you mean". */
export async function similarTests(store: Store, testId: string, limit = 5): Promise<string[]> {
  return (await store.listTests({ search: testId.split('::').pop(), limit })).map((t) => t.testId)
}
