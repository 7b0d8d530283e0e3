/**
 * flakewatch's library API. Explicit named exports only: what is not here is internal and may change.
 * @example
 * import { openStore, ingestFiles, analyzeStore } from 'flakewatch'
 * const store = await openStore()
 * await ingestFiles({ store, inputs: ['reports/'], context: { suite: 'unit' } })
 * const flaky = (await analyzeStore(store)).filter((a) => a.verdict === 'flaky')
 */
export type {
  Attempt,
  EnvFacets,
  Evidence,
  HistoryEntry,
  Result,
  ResultStatus,
  Run,
  RunInfo,
  RunMeta,
  RunStatus,
  TestHistory,
  TestRef,
  Verdict,
  VerdictKind,
} from './model.js'
export { makeTestId, isFailure } from './model.js'
export {
  AuthError,
  ConfigError,
  ExitError,
  FlakewatchError,
  InputError,
  InternalError,
  NotFoundError,
  ReportParseError,
  StoreError,
} from './errors.js'

export { openStore, resolveDbLocation, DEFAULT_DB, type OpenStoreOptions } from './store/open.js'
export type {
  AuditEntry,
  HistoryFilter,
  QuarantineRecord,
  ReportBatch,
  RunOutcome,
  Store,
  StoreStats,
} from './store/store.js'

export {
  verifyAuditChain,
  readAuditChain,
  formatAuditHead,
  parseAuditHead,
  type AuditHead,
  type AuditKind,
  type AuditLogInput,
  type AuditVerification,
  type ChainedAuditEntry,
} from './store/audit-chain.js'

export { parseReport, PARSERS, FORMATS, sourceFromFile, sourceFromBuffer, type Format } from './ingest/index.js'
export type { ParsedCase, ParsedReport, ReportSource } from './ingest/types.js'
export { ingestFiles, ingestBuffer, type IngestSummary } from './pipeline/ingest-files.js'
export { buildReportBatch } from './pipeline/build-batch.js'
export { ciRunContext, envRunContext, type RunContext } from './pipeline/run-context.js'

export { analyzeStore, type AnalyzeStoreOptions } from './pipeline/analyze-store.js'
export {
  analyzeTest,
  analyzeHistories,
  ewmaFlipRate,
  flipRate,
  classifyFlipRate,
  normalizeMessage,
  passRateClass,
  resolveAnalysisConfig,
  successRateMap,
  toAnalysisJson,
  type AnalysisConfigOptions,
  type ResolvedAnalysisConfig,
  type TestAnalysis,
  type TestAnalysisJson,
} from './analysis/index.js'

export { gate, type GateResult, type GateOptions } from './quarantine/gate.js'
export { decideQuarantine, type PolicyTest, type QuarantinePolicy } from './quarantine/policy.js'
export { createQuarantineManager, QuarantineManager, type AutoUpdateResult } from './quarantine/manager.js'
export { TestTracker, type RecordRunOptions, type TrackedRun } from './tracker.js'
export { loadConfig, resolveConfig, type ResolvedConfig } from './config/load.js'
export { VERSION } from './version.js'

export { writeBundle, bundleChunks, type BundleExportOptions, type BundleSummary } from './export/write-bundle.js'
export { importBundle, parseBundle, type ImportSummary } from './export/import-bundle.js'
export { publishToGitlab, type PublishGitlabOptions, type PublishResult } from './export/publish-gitlab.js'
export { analysesToCsv } from './export/analysis-csv.js'
export { bundleSchemaErrors } from './export/bundle-schema.js'
