import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from './audit-chain.js'
import type { AnalysisStore } from './analyses.js'
import type { NotificationStore } from './notifications.js'
import type { TicketStore } from './tickets.js'
import type { TestNameStore } from './test-names.js'
import type { Attempt, Result, ResultStatus, Run, RunMeta, RunTiming, TestHistory, TestRef } from '../model.js'
import type { AnyRunBatch } from './packed-results.js'

/** The results of one run that one report file contributes. */
export interface RunBatch {
  run: RunMeta
  results: Result[]
}

/**
 * Everything one report file yields. A report is stored in one transaction: all of it or none of it.
 * A report usually holds one run; a Playwright report with several projects holds one run per project.
 */
export interface ReportBatch {
  /** The file name (or upload name), kept for provenance. */
  file: string
  /** sha256 of the report's bytes: the same content for the same run is a duplicate. */
  contentHash: string
  runs: RunBatch[]
}

export interface IngestOptions {
  /** Overwrite the results this report gives for a run already stored, instead of reporting a duplicate. */
  replace?: boolean
  /**
   * Attempts one result may reach when repeats of a test in one report are folded together (default
   * `DEFAULT_MAX_ATTEMPTS_PER_RESULT`); over it the report is refused with a `ReportLimitError`.
   */
  maxAttemptsPerResult?: number
}

/**
 * One report, streamed: the store writes each chunk as it comes, inside the report's one transaction (SQLite) or
 * COPY stream (PostgreSQL), so memory follows the chunk, never the report. All of it or none of it is stored.
 */
export interface ReportStream<Batch extends AnyRunBatch = AnyRunBatch> {
  /** The file name (or upload name), kept for provenance. */
  file: string
  /** sha256 of the report's bytes: the same content for the same run is a duplicate. */
  contentHash: string
  /**
   * The results in report order, a chunk at a time. Each run batch names its run with what is known of it so
   * far; the first chunk naming a run id creates (or finds) that run. A test repeated within one run of the
   * report, in the same chunk or a later one, is folded into one result with all the attempts. A batch may come
   * packed as columns (from the parse worker), with the same meaning.
   */
  chunks: AsyncIterable<Batch[]>
  /**
   * Called once `chunks` is exhausted: every run of the report in report order, with its final metadata (a
   * report may state its start time after its first test). Runs no chunk named (a report without results)
   * are created here.
   */
  runs(): RunMeta[]
}

export interface RunOutcome {
  runId: string
  outcome: 'ingested' | 'duplicate' | 'replaced'
  tests: number
  results: number
  attempts: number
}

/** Narrows a history scan. Times are epoch milliseconds. */
export interface HistoryFilter {
  suite?: string
  branch?: string
  since?: number
  until?: number
  /** Only these tests, read by index (the cost follows their results, not the store's). */
  testIds?: string[]
  /** Only the newest N runs (by time) of the selection. */
  lastRuns?: number
  /**
   * Only these runs' results (a selection's, at most `SELECTION_MAX_SCANNED_RUNS`): read by run, not every result
   * of their time span.
   */
  runIds?: string[]
}

export interface RunFilter {
  suite?: string
  branch?: string
  since?: number
  until?: number
  limit?: number
  offset?: number
}

export interface TestFilter {
  suite?: string
  /** Only tests of these modules (files), so that a caller after one file's tests is not sent a whole suite. */
  modules?: string[]
  /** Case-insensitive substring of the test id. */
  search?: string
  limit?: number
  offset?: number
}

export interface StoreStats {
  runs: number
  tests: number
  results: number
  attempts: number
  oldestRunAt: number | null
  newestRunAt: number | null
}

/** Per-run counts, for the infra-failure guard and the run views. */
export interface RunSummary {
  runId: string
  at: number
  total: number
  passed: number
  failed: number
  skipped: number
  /** Results that passed only on retry. */
  flaky: number
}

/** A run and when it was last written, by the store's clock (see {@link Store.runsWrittenSince}). */
export interface WrittenRun {
  runId: string
  /** Epoch ms. */
  writtenAt: number
}

/** Most runs one {@link Store.runsWrittenSince} returns, whatever limit it is given. */
export const WRITTEN_RUNS_MAX = 1000

export type QuarantineSource = 'auto' | 'manual'

export interface QuarantineRecord {
  testId: string
  reason: string
  owner: string | null
  issueUrl: string | null
  createdAt: string
  createdBy: string
  expiresAt: string | null
  source: QuarantineSource
}

export type AuditAction = 'quarantine' | 'update' | 'release' | 'expire' | 'import'

/** A quarantine's line in the audit chain (kind `quarantine`): who did what, when and why. */
export interface AuditEntry {
  id: number
  testId: string
  action: AuditAction
  actor: string
  at: string
  reason: string
  source: QuarantineSource | null
  /** The record after the change (null after a release), for a full trail. */
  record: QuarantineRecord | null
}

export type AuditInput = Omit<AuditEntry, 'id' | 'testId' | 'record'>

/** What a quarantine rule matches on; every matcher given must match (see `quarantine/rules.ts`). */
export interface RuleMatch {
  /** Glob over the test id (`unit::src/cart/**`). */
  testId?: string
  /** Glob over the test's file (or its module when the report names no file). */
  file?: string
  /** Regex over the test's name. */
  title?: string
  /** Regex over the failure message: only failures with this message are forgiven. */
  message?: string
  /** The run's branch (a glob: `release/*`). */
  branch?: string
  /** Facets the run must have, each an exact value (`{ runner: 'arm64' }`). */
  env?: Record<string, string>
  /** The rule is meant to select every test or failure (in its branch and facets): refused without it. */
  allowBroad?: true
}

/**
 * A quarantine by pattern: it forgives every failure its matchers select (see `quarantine/rules.ts`), with the
 * same reason, owner, issue and expiry as a single quarantine. Rules are always a human decision.
 */
export interface QuarantineRule {
  /** A short name (`timeouts-arm64`), unique in the store. */
  id: string
  match: RuleMatch
  reason: string
  owner: string | null
  issueUrl: string | null
  createdAt: string
  createdBy: string
  expiresAt: string | null
}

/** A rule's line in the audit chain (kind `rule`). */
export interface RuleAuditEntry {
  id: number
  ruleId: string
  action: AuditAction
  actor: string
  at: string
  reason: string
  /** The rule after the change (null after a removal). */
  rule: QuarantineRule | null
}

export type RuleAuditInput = Omit<RuleAuditEntry, 'id' | 'ruleId' | 'rule'>

/** A learned element, as the healer stores it. `data` is the heal module's own shape. */
export interface Fingerprint {
  testId: string
  locator: string
  data: unknown
  updatedAt: string
}

/** One heal, appended and never changed. */
export interface HealRecord {
  id?: number
  testId: string
  oldLocator: string
  newLocator: string
  score: number
  breakdown: Record<string, number>
  url: string | null
  at: string
  runId: string | null
}

export interface HealFilter {
  testId?: string
  since?: string
  limit?: number
}

/** Storing reports: one report, one transaction (see `ReportStream`). */
export interface ResultStore {
  /** Stores one report held in memory, in one transaction (a wrapper over {@link Store.ingestStream}). */
  ingestReport(batch: ReportBatch, opts?: IngestOptions): Promise<RunOutcome[]>

  /** Stores one streamed report in one transaction; outcomes in the order of `stream.runs()`. */
  ingestStream(stream: ReportStream, opts?: IngestOptions): Promise<RunOutcome[]>
}

/** One cell of {@link HistoryStore.heatCells}: a test's result in a run. */
export interface HeatCell {
  testId: string
  runId: string
  status: ResultStatus
  /** Passed on a retry. */
  flakyOnRetry: boolean
}

/** Most tests and most runs one {@link HistoryStore.heatCells} call reads. */
export const HEAT_CELLS_MAX = 10_000

/** Reading results back: the analysis scan and one test's history. */
export interface HistoryStore {
  /**
   * Streams every test's history, one test at a time, each with its entries oldest first. Tests come grouped,
   * in no promised order. This is the analysis scan: no query per test. Do not call other methods of the same
   * store while iterating: the scan may hold the connection.
   */
  scanHistory(filter?: HistoryFilter): AsyncIterable<TestHistory>
  /** The ids of the tests with a result in any of these runs (read by index: the cost follows those runs). */
  testsInRuns(runIds: string[]): Promise<string[]>
  /**
   * The heatmap's cells: the result of each of these tests (at most {@link HEAT_CELLS_MAX}) in each of these runs
   * that has one, read by an index range per test over the runs' times (only their status and flaky flag).
   */
  heatCells(testIds: string[], runIds: string[]): Promise<HeatCell[]>
  /** One test's history (newest `limit` entries, returned oldest first), or null if the test is unknown. */
  getTestHistory(testId: string, opts?: { limit?: number }): Promise<TestHistory | null>
  /** Every attempt of one test in one run, in retry order. */
  getAttempts(testId: string, runId: string): Promise<Attempt[]>
}

/** Runs and tests as catalogues, without their results. */
export interface RunStore {
  /** Runs, newest first. */
  listRuns(filter?: RunFilter): Promise<Run[]>
  getRun(runId: string): Promise<Run | null>
  /** The run's suite or package timings (see `RunMeta.timings`), slowest first; empty when its reports gave none. */
  getRunTimings(runId: string): Promise<RunTiming[]>
  /** Per-run result counts (one aggregate query), newest first. */
  runSummaries(filter?: RunFilter): Promise<RunSummary[]>
  /**
   * Runs written at or after `sinceMs` (created, merged into by another report, or replaced), latest write first,
   * at most `limit` (and {@link WRITTEN_RUNS_MAX}). Times come from the store's clock, the database's on PostgreSQL
   * and the writer's on SQLite, so that server instances sharing a store can ask which runs the others wrote
   * since they last looked. A deleted run is not listed.
   */
  runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]>
  /** Tests in test-id order. */
  listTests(filter?: TestFilter): Promise<TestRef[]>
  getTest(testId: string): Promise<TestRef | null>
  stats(): Promise<StoreStats>
}

/** Single-test quarantines, each change with its line in the audit chain. */
export interface QuarantineStore {
  listQuarantines(): Promise<QuarantineRecord[]>
  getQuarantine(testId: string): Promise<QuarantineRecord | null>
  /** Creates or replaces a quarantine and appends its audit line, in one transaction. */
  putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void>
  /** Ends a quarantine and appends its audit line. Returns false when the test was not quarantined. */
  deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean>
  /** Audit lines, newest first. */
  listAudit(filter?: { testId?: string; limit?: number }): Promise<AuditEntry[]>
}

/** Quarantines by pattern and their audit trail. */
export interface RuleStore {
  /** Quarantine rules, in id order. */
  listQuarantineRules(): Promise<QuarantineRule[]>
  /** Creates or replaces a rule and appends its audit line, in one transaction. */
  putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void>
  /** Removes a rule and appends its audit line. Returns false when there was no such rule. */
  deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean>
  /** Rule audit lines, newest first. */
  listRuleAudit(filter?: { ruleId?: string; limit?: number }): Promise<RuleAuditEntry[]>
}

/** The one audit chain of every audited action (see `audit-chain.ts`). */
export interface AuditStore {
  /**
   * Appends an audited action to the one chain (see `audit-chain.ts`), in a transaction of its own. A change
   * that writes other rows appends its entry in its own transaction instead (each backend's `audit-log.ts`).
   */
  appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry>
  /** Entries of one kind (and subject), newest first. */
  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]>
  /** The chain, oldest first: up to `limit` entries after entry `afterId` (see `readAuditChain`). */
  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]>
  /** Where the store recorded the chain's end at its last append: its count and last hash. */
  auditHead(): Promise<AuditHead>
}

/** What self-healing locators learn and do. */
export interface HealStore {
  putFingerprint(fp: Fingerprint): Promise<void>
  getFingerprint(testId: string, locator: string): Promise<Fingerprint | null>
  appendHeal(heal: HealRecord): Promise<void>
  /** Heals, newest first. */
  listHeals(filter?: HealFilter): Promise<HealRecord[]>
}

/** Retention. */
export interface RetentionStore {
  /**
   * Deletes runs that started before `before` (epoch ms), with their results and attempts, in batches so that
   * concurrent writers are not blocked for long. Quarantines, audit lines, fingerprints and heals are kept.
   */
  prune(before: number, opts?: { batchSize?: number }): Promise<{ runs: number; results: number }>
  /**
   * Upkeep that keeps retention cheap, run by `serve` daily and after `prune`: on PostgreSQL, the time partitions
   * of the days ahead are made and rows waiting in the default partition move into days of their own
   * (docs/scaling.md). SQLite has nothing to do.
   */
  maintain(now: number): Promise<MaintenanceOutcome>
}

/** What one maintenance did. */
export interface MaintenanceOutcome {
  /** Days given partitions of their own. */
  days: number
  /** Rows moved out of the default partition into them. */
  moved: number
  /** Days that could not be made this time (another transaction held a lock, or the role may not create tables). */
  failed: number
  /** The first failure's reason. */
  error: string | null
}

/**
 * The one storage interface. SQLite (embedded default) and PostgreSQL (team server) both implement it, and one
 * contract suite runs against both. Every method is async so that both fit; operations are domain-level so that
 * the rest of flakewatch never writes SQL. Each concern is an interface of its own, implemented by a module of
 * its own in each backend.
 */
export interface Store
  extends ResultStore, HistoryStore, RunStore, QuarantineStore, RuleStore, AuditStore, HealStore, RetentionStore {
  readonly kind: 'sqlite' | 'postgres'
  /** A human description of where data lives, without secrets. */
  readonly location: string

  /** Notification state and the webhook outbox (see `notify/`). */
  notifications(): NotificationStore

  /** Tickets in trackers, one per test, and what the ticket sync last saw (see `tickets/`). */
  tickets(): TicketStore

  /** The names tests were seen under, matched at ingest or by hand (see `test-names.ts`). */
  testNames(): TestNameStore

  /** Each test's analysis, persisted and kept up to date by writers and a sweep (see `analyses.ts`). */
  analyses(): AnalysisStore

  close(): Promise<void>
}

/**
 * A report held in memory as a stream of one chunk, for {@link Store.ingestReport}.
 * @example await store.ingestStream(streamOfBatch(batch))
 */
export function streamOfBatch(batch: ReportBatch): ReportStream {
  // eslint-disable-next-line @typescript-eslint/require-await -- an async iterable of one chunk already in memory
  async function* chunks(): AsyncGenerator<RunBatch[], void, undefined> {
    yield batch.runs
  }
  return {
    file: batch.file,
    contentHash: batch.contentHash,
    chunks: chunks(),
    runs: () => batch.runs.map((r) => r.run),
  }
}
