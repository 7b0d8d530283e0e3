import type { ResolvedConfig } from '../config/load.js'
import type { TestRef, VerdictKind } from '../model.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { QuarantineManager } from '../quarantine/manager.js'
import type { Store } from '../store/store.js'

/** What `list_tests` filters and sorts on, for one test: from the server's snapshot, or a scan of the store. */
export interface TestSummary extends TestRef {
  verdict: VerdictKind
  score: number
  passRate: number | null
  flipRate: number
  runs: number
  failures: number
  lastFailureAt: number | null
}

/** What `list_tests` narrows to, for a source of summaries that can narrow by it (see `McpContext.summaries`). */
export interface SummaryFilter {
  verdicts?: readonly VerdictKind[]
  suite?: string
  /** Case-insensitive part of the test id. */
  search?: string
  /** Only these tests. */
  testIds?: readonly string[]
}

/**
 * Everything the MCP tools need, the same over stdio (the local store) and over HTTP (one project of `serve`).
 */
export interface McpContext {
  store: Store
  config: ResolvedConfig
  /** The project key on a multi-project server (it goes into dashboard links); null otherwise. */
  project: string | null
  /** The dashboard's address, for links to test pages (`notifications.serverUrl`, or the server's own). */
  serverUrl: string | null
  /**
   * The tests' summaries, most harmful first (`analyze`'s order), kept fresh by the caller: at least those that
   * match `filter` (a source that can narrow by it does, with an indexed query; the caller filters again).
   */
  summaries(filter?: SummaryFilter): Promise<readonly TestSummary[]>
  /**
   * How many tests' stored analyses were not current when the summaries were read (a read-only server over rows
   * nobody refreshed): those show as last analysed, or not at all if never analysed. Absent: none.
   */
  pending?(): Promise<number>
  ownersOf: OwnerLookup
  quarantine: QuarantineManager
  /**
   * Who a write is audited as: the write token's name over HTTP, the local user over stdio. Null: this client
   * may only read, and every tool that writes refuses.
   */
  actor: string | null
  /**
   * The folder `triage_report` and `setup_plan` may read files under (stdio: the working directory). Null over
   * HTTP: a remote client sends the content instead, and the server reads none of its own files for it.
   */
  localRoot: string | null
  /** Called after a write, so that cached answers are dropped. */
  afterWrite?: () => void
  now: () => number
}
