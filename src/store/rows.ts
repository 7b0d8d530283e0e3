import {
  isFailure,
  type Attempt,
  type EnvFacets,
  type Result,
  type Run,
  type RunInfo,
  type RunStatus,
} from '../model.js'
import type { AuditKind, AuditLogInput, ChainedAuditEntry } from './audit-chain.js'
import type {
  AuditAction,
  AuditEntry,
  AuditInput,
  QuarantineRecord,
  QuarantineRule,
  QuarantineSource,
  RuleAuditEntry,
  RuleAuditInput,
  RuleMatch,
} from './store.js'

/**
 * Row shapes and conversions shared by the SQLite and PostgreSQL stores, so that both backends turn the same
 * columns into the same objects.
 */

/** The columns of `runs`, as both backends name them. */
export interface RunRow {
  run_id: string
  suite: string
  branch: string | null
  revision: string | null
  pipeline_id: string | null
  pipeline_url: string | null
  job_id: string | null
  job_url: string | null
  artifacts_url: string | null
  job_status: string | null
  pipeline_status: string | null
  runner_id: string | null
  env: string | EnvFacets
  started_at: string | null
  finished_at: string | null
  duration_ms: number | string | null
  status: RunStatus
  uploaded_at: string
  at: number | string
}

function parseEnv(env: string | EnvFacets | null): EnvFacets {
  if (env == null) return {}
  return typeof env === 'string' ? (JSON.parse(env) as EnvFacets) : env
}

export function runFromRow(r: RunRow): Run {
  return {
    runId: r.run_id,
    suite: r.suite,
    branch: r.branch,
    revision: r.revision,
    pipelineId: r.pipeline_id,
    pipelineUrl: r.pipeline_url,
    jobId: r.job_id,
    jobUrl: r.job_url,
    artifactsUrl: r.artifacts_url,
    jobStatus: r.job_status,
    pipelineStatus: r.pipeline_status,
    runnerId: r.runner_id,
    env: parseEnv(r.env),
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms == null ? null : Number(r.duration_ms),
    status: r.status,
    uploadedAt: r.uploaded_at,
  }
}

export function runInfoFromRow(r: RunRow): RunInfo {
  return {
    runId: r.run_id,
    suite: r.suite,
    at: Number(r.at),
    branch: r.branch,
    revision: r.revision,
    pipelineId: r.pipeline_id,
    jobStatus: r.job_status,
    pipelineStatus: r.pipeline_status,
    runnerId: r.runner_id,
    env: parseEnv(r.env),
    status: r.status,
    pipelineUrl: r.pipeline_url,
    artifactsUrl: r.artifacts_url,
  }
}

/**
 * The execution position to store: a non-negative integer or null. Parsers give ranks, but a library caller's
 * `Result` may carry anything, and the column is an integer on both backends.
 */
export function storedPosition(result: Result): number | null {
  const p = result.position
  return typeof p === 'number' && Number.isSafeInteger(p) && p >= 0 && p <= 0x7fffffff ? p : null
}

/** The per-result attempt summary the analysis reads without loading attempt rows. */
export function attemptSummary(result: Result): { attempts: number; failed: number; failedMs: number } {
  if (result.attempts.length === 0) {
    const failed = isFailure(result.status) ? 1 : 0
    return { attempts: 1, failed, failedMs: failed ? (result.durationMs ?? 0) : 0 }
  }
  let failed = 0
  let failedMs = 0
  for (const a of result.attempts) {
    if (isFailure(a.status)) {
      failed++
      failedMs += a.durationMs ?? 0
    }
  }
  return { attempts: result.attempts.length, failed, failedMs }
}

/**
 * Attempt rows are stored when they carry something the result row does not: several attempts, or a failure
 * with its stack. A single passing attempt is implied by its result, which keeps the common case cheap.
 */
export function attemptsToStore(result: Result): Attempt[] {
  if (result.attempts.length > 1) return result.attempts
  const only = result.attempts[0]
  if (only && (isFailure(only.status) || only.stack)) return result.attempts
  if (!only && isFailure(result.status)) {
    return [{ retry: 0, status: result.status, durationMs: result.durationMs, message: result.message, stack: null }]
  }
  return []
}

export interface QuarantineRow {
  test_id: string
  reason: string
  owner: string | null
  issue_url: string | null
  created_at: string
  created_by: string
  expires_at: string | null
  source: 'auto' | 'manual'
}

export function quarantineFromRow(r: QuarantineRow): QuarantineRecord {
  return {
    testId: r.test_id,
    reason: r.reason,
    owner: r.owner,
    issueUrl: r.issue_url,
    createdAt: r.created_at,
    createdBy: r.created_by,
    expiresAt: r.expires_at,
    source: r.source,
  }
}

/** The columns of `audit_log`, the one chain of every audited action, as both backends name them. */
export interface AuditLogRow {
  id: number | string
  kind: AuditKind
  subject: string
  action: string
  actor: string
  at: string
  reason: string
  source: string | null
  data: string | null
  prev_hash: string
  hash: string
}

export function auditLogFromRow(r: AuditLogRow): ChainedAuditEntry {
  return {
    id: Number(r.id),
    kind: r.kind,
    subject: r.subject,
    action: r.action,
    actor: r.actor,
    at: r.at,
    reason: r.reason,
    source: r.source,
    data: r.data === null ? null : JSON.parse(r.data),
    prevHash: r.prev_hash,
    hash: r.hash,
  }
}

/** The chain entry of a quarantine change. */
export function quarantineAuditInput(testId: string, a: AuditInput, record: QuarantineRecord | null): AuditLogInput {
  return { kind: 'quarantine', subject: testId, ...a, data: record }
}

/** The chain entry of a rule change. */
export function ruleAuditInput(ruleId: string, a: RuleAuditInput, rule: QuarantineRule | null): AuditLogInput {
  return { kind: 'rule', subject: ruleId, ...a, source: null, data: rule }
}

/** A quarantine's audit line, from its entry in the chain. */
export function quarantineAuditFromEntry(e: ChainedAuditEntry): AuditEntry {
  return {
    id: e.id,
    testId: e.subject,
    action: e.action as AuditAction,
    actor: e.actor,
    at: e.at,
    reason: e.reason,
    source: e.source as QuarantineSource | null,
    record: e.data as QuarantineRecord | null,
  }
}

/** A rule's audit line, from its entry in the chain. */
export function ruleAuditFromEntry(e: ChainedAuditEntry): RuleAuditEntry {
  return {
    id: e.id,
    ruleId: e.subject,
    action: e.action as AuditAction,
    actor: e.actor,
    at: e.at,
    reason: e.reason,
    rule: e.data as QuarantineRule | null,
  }
}

export interface RuleRow {
  id: string
  match: string
  reason: string
  owner: string | null
  issue_url: string | null
  created_at: string
  created_by: string
  expires_at: string | null
}

export function ruleFromRow(r: RuleRow): QuarantineRule {
  return {
    id: r.id,
    match: JSON.parse(r.match) as RuleMatch,
    reason: r.reason,
    owner: r.owner,
    issueUrl: r.issue_url,
    createdAt: r.created_at,
    createdBy: r.created_by,
    expiresAt: r.expires_at,
  }
}

/** The row values of a rule, in the column order both stores insert them. */
export function ruleToRow(r: QuarantineRule): unknown[] {
  return [r.id, JSON.stringify(r.match), r.reason, r.owner, r.issueUrl, r.createdAt, r.createdBy, r.expiresAt]
}
