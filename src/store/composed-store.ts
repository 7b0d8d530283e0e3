import type { Attempt, Run, RunTiming, TestHistory, TestRef } from '../model.js'
import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from './audit-chain.js'
import type { AnalysisStore } from './analyses.js'
import type { NotificationStore } from './notifications.js'
import type { TicketStore } from './tickets.js'
import type { TestNameStore } from './test-names.js'
import type {
  AuditEntry,
  AuditInput,
  AuditStore,
  Fingerprint,
  HealFilter,
  HealRecord,
  HealStore,
  HeatCell,
  HistoryFilter,
  HistoryStore,
  IngestOptions,
  MaintenanceOutcome,
  QuarantineRecord,
  QuarantineRule,
  QuarantineStore,
  ReportBatch,
  ReportStream,
  ResultStore,
  RetentionStore,
  RuleAuditEntry,
  RuleAuditInput,
  RuleStore,
  RunFilter,
  RunOutcome,
  RunStore,
  RunSummary,
  Store,
  StoreStats,
  TestFilter,
  WrittenRun,
} from './store.js'

/** One backend's module per concern of the {@link Store} interface. */
export interface StoreParts {
  ingest: ResultStore
  history: HistoryStore
  runs: RunStore
  quarantine: QuarantineStore
  rules: RuleStore
  audit: AuditStore
  heal: HealStore
  retention: RetentionStore
  analyses: AnalysisStore
}

/**
 * A store made of one module per concern: each method hands over to the module that owns it, so that a backend
 * is its connection plus those modules (see `sqlite/` and `postgres/`).
 */
export abstract class ComposedStore implements Store {
  abstract readonly kind: Store['kind']
  abstract readonly location: string

  constructor(protected readonly parts: StoreParts) {}

  abstract notifications(): NotificationStore
  abstract tickets(): TicketStore
  abstract testNames(): TestNameStore
  abstract close(): Promise<void>

  analyses(): AnalysisStore {
    return this.parts.analyses
  }

  // Results

  ingestReport(batch: ReportBatch, opts?: IngestOptions): Promise<RunOutcome[]> {
    return this.parts.ingest.ingestReport(batch, opts)
  }

  ingestStream(stream: ReportStream, opts?: IngestOptions): Promise<RunOutcome[]> {
    return this.parts.ingest.ingestStream(stream, opts)
  }

  // History

  scanHistory(filter?: HistoryFilter): AsyncIterable<TestHistory> {
    return this.parts.history.scanHistory(filter)
  }

  testsInRuns(runIds: string[]): Promise<string[]> {
    return this.parts.history.testsInRuns(runIds)
  }

  heatCells(testIds: string[], runIds: string[]): Promise<HeatCell[]> {
    return this.parts.history.heatCells(testIds, runIds)
  }

  getTestHistory(testId: string, opts?: { limit?: number }): Promise<TestHistory | null> {
    return this.parts.history.getTestHistory(testId, opts)
  }

  getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    return this.parts.history.getAttempts(testId, runId)
  }

  // Runs and tests

  listRuns(filter?: RunFilter): Promise<Run[]> {
    return this.parts.runs.listRuns(filter)
  }

  getRun(runId: string): Promise<Run | null> {
    return this.parts.runs.getRun(runId)
  }

  getRunTimings(runId: string): Promise<RunTiming[]> {
    return this.parts.runs.getRunTimings(runId)
  }

  runSummaries(filter?: RunFilter): Promise<RunSummary[]> {
    return this.parts.runs.runSummaries(filter)
  }

  runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    return this.parts.runs.runsWrittenSince(sinceMs, limit)
  }

  listTests(filter?: TestFilter): Promise<TestRef[]> {
    return this.parts.runs.listTests(filter)
  }

  getTest(testId: string): Promise<TestRef | null> {
    return this.parts.runs.getTest(testId)
  }

  stats(): Promise<StoreStats> {
    return this.parts.runs.stats()
  }

  // Quarantine and audit

  listQuarantines(): Promise<QuarantineRecord[]> {
    return this.parts.quarantine.listQuarantines()
  }

  getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    return this.parts.quarantine.getQuarantine(testId)
  }

  putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    return this.parts.quarantine.putQuarantine(record, audit)
  }

  deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    return this.parts.quarantine.deleteQuarantine(testId, audit)
  }

  listAudit(filter?: { testId?: string; limit?: number }): Promise<AuditEntry[]> {
    return this.parts.quarantine.listAudit(filter)
  }

  // Rules

  listQuarantineRules(): Promise<QuarantineRule[]> {
    return this.parts.rules.listQuarantineRules()
  }

  putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    return this.parts.rules.putQuarantineRule(rule, audit)
  }

  deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    return this.parts.rules.deleteQuarantineRule(id, audit)
  }

  listRuleAudit(filter?: { ruleId?: string; limit?: number }): Promise<RuleAuditEntry[]> {
    return this.parts.rules.listRuleAudit(filter)
  }

  // The audit chain

  appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    return this.parts.audit.appendAudit(entry)
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return this.parts.audit.listAuditLog(filter)
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return this.parts.audit.auditChainPage(afterId, limit)
  }

  auditHead(): Promise<AuditHead> {
    return this.parts.audit.auditHead()
  }

  // Heal data

  putFingerprint(fp: Fingerprint): Promise<void> {
    return this.parts.heal.putFingerprint(fp)
  }

  getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    return this.parts.heal.getFingerprint(testId, locator)
  }

  appendHeal(heal: HealRecord): Promise<void> {
    return this.parts.heal.appendHeal(heal)
  }

  listHeals(filter?: HealFilter): Promise<HealRecord[]> {
    return this.parts.heal.listHeals(filter)
  }

  // Retention

  prune(before: number, opts?: { batchSize?: number }): Promise<{ runs: number; results: number }> {
    return this.parts.retention.prune(before, opts)
  }

  maintain(now: number): Promise<MaintenanceOutcome> {
    return this.parts.retention.maintain(now)
  }
}
