import type { TestAnalysis } from '../analysis/index.js'
import type { Attempt, HistoryEntry, Run, TestRef } from '../model.js'
import { isActive } from '../quarantine/gate.js'
import type { AuditEntry, QuarantineRecord, RunSummary } from '../store/store.js'
import type {
  AttemptJson,
  AuditJson,
  HistoryEntryJson,
  LeaderboardRow,
  QuarantineJson,
  RunCountsJson,
  RunJson,
  TestRefJson,
} from './api-types.js'

/** Conversions from the model's camelCase to the API's snake_case; one function per shape. */

export const iso = (at: number): string => new Date(at).toISOString()

export function countsToJson(s: RunSummary | undefined): RunCountsJson | null {
  return s ? { total: s.total, passed: s.passed, failed: s.failed, skipped: s.skipped, flaky: s.flaky } : null
}

export function runToJson(r: Run, counts: RunSummary | undefined): RunJson {
  return {
    run_id: r.runId,
    suite: r.suite,
    branch: r.branch,
    revision: r.revision,
    pipeline_id: r.pipelineId,
    pipeline_url: r.pipelineUrl,
    job_id: r.jobId,
    job_url: r.jobUrl,
    artifacts_url: r.artifactsUrl,
    job_status: r.jobStatus,
    pipeline_status: r.pipelineStatus,
    runner_id: r.runnerId,
    env: r.env,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    duration_ms: r.durationMs,
    status: r.status,
    uploaded_at: r.uploadedAt,
    counts: countsToJson(counts),
  }
}

export function testRefToJson(t: TestRef): TestRefJson {
  return { test_id: t.testId, suite: t.suite, module: t.module, name: t.name, file: t.file }
}

export function quarantineToJson(q: QuarantineRecord, now: number): QuarantineJson {
  return {
    test_id: q.testId,
    reason: q.reason,
    owner: q.owner,
    issue_url: q.issueUrl,
    created_at: q.createdAt,
    created_by: q.createdBy,
    expires_at: q.expiresAt,
    source: q.source,
    active: isActive(q, now),
  }
}

export function auditToJson(a: AuditEntry): AuditJson {
  return { id: a.id, test_id: a.testId, action: a.action, actor: a.actor, at: a.at, reason: a.reason, source: a.source }
}

export function attemptToJson(a: Attempt): AttemptJson {
  return { retry: a.retry, status: a.status, duration_ms: a.durationMs, message: a.message, stack: a.stack }
}

export function entryToJson(e: HistoryEntry): HistoryEntryJson {
  return {
    run_id: e.run.runId,
    at: iso(e.run.at),
    suite: e.run.suite,
    branch: e.run.branch,
    revision: e.run.revision,
    pipeline_id: e.run.pipelineId,
    pipeline_url: e.run.pipelineUrl,
    artifacts_url: e.run.artifactsUrl,
    run_status: e.run.status,
    env: e.run.env,
    status: e.status,
    flaky_on_retry: e.flakyOnRetry,
    duration_ms: e.durationMs,
    attempts: e.attempts,
    failed_attempts: e.failedAttempts,
    error_type: e.errorType,
    message: e.message,
    healing_occurred: e.healingOccurred,
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4

/** A leaderboard row but its `quarantined` flag, which is read per request. */
export function leaderboardRowBase(a: TestAnalysis): Omit<LeaderboardRow, 'quarantined'> {
  return {
    test_id: a.testId,
    name: a.test.name,
    module: a.test.module,
    suite: a.test.suite,
    runs: a.runs,
    passes: a.passes,
    failures: a.failures,
    pass_rate: a.passRate === null ? null : round(a.passRate),
    last_status: a.lastStatus,
    pass_rate_class: a.passRateClass,
    flip_rate_class: a.flipRateClass,
    verdict: a.verdict,
    reason: a.reason,
    score: round(a.score),
    confidence: round(a.confidence),
    flip_rate: round(a.flipRate),
    evidence: a.evidence.map((e) => ({
      kind: e.kind,
      detail: e.detail,
      ...(e.runIds ? { run_ids: e.runIds.slice(0, 20) } : {}),
      ...(e.revision !== undefined ? { revision: e.revision } : {}),
    })),
    recommendation: { ...a.recommendation },
  }
}
