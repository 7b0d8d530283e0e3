import { isFailure, type Result } from '../model.js'
import type { QuarantineRecord } from '../store/store.js'

export interface GateOptions {
  /** Fail the gate on tests that passed only on retry, too. */
  failOnFlaky?: boolean
  /** Now, for expiry checks (epoch ms). */
  now?: number
}

export interface GateEntry {
  test_id: string
  name: string
  status: Result['status']
  message: string | null
}

export interface QuarantinedEntry extends GateEntry {
  reason: string
  owner: string | null
  issue_url: string | null
  expires_at: string | null
}

/** The gate's decision, in the shape `flakewatch gate --json` prints. */
export interface GateResult {
  verdict: 'pass' | 'fail'
  blocking: GateEntry[]
  quarantined: QuarantinedEntry[]
  flaky: GateEntry[]
  totals: { tests: number; passed: number; failed: number; skipped: number }
}

/** A quarantine still in force at `now`: expired ones no longer forgive failures. */
export function isActive(q: QuarantineRecord, now: number): boolean {
  return !q.expiresAt || Date.parse(q.expiresAt) > now
}

const entry = (r: Result): GateEntry => ({
  test_id: r.test.testId,
  name: r.test.name,
  status: r.status,
  message: r.message,
})

/**
 * Decides a CI job's outcome: it passes if and only if every failed or errored test is quarantined. A test that
 * passed on retry passes unless `failOnFlaky`. Pure: the command reads reports and quarantines, this decides.
 * @example gate(results, new Map([['unit::a::b', record]])).verdict // 'pass' | 'fail'
 */
export function gate(
  results: Result[],
  quarantines: ReadonlyMap<string, QuarantineRecord>,
  opts: GateOptions = {},
): GateResult {
  const now = opts.now ?? Date.now()
  const out: GateResult = {
    verdict: 'pass',
    blocking: [],
    quarantined: [],
    flaky: [],
    totals: { tests: results.length, passed: 0, failed: 0, skipped: 0 },
  }
  for (const r of results) {
    if (r.status === 'passed') out.totals.passed++
    else if (r.status === 'skipped') out.totals.skipped++
    else out.totals.failed++
    const q = quarantines.get(r.test.testId)
    const forgiven = q && isActive(q, now) ? q : undefined
    if (isFailure(r.status)) {
      if (forgiven) {
        out.quarantined.push({
          ...entry(r),
          reason: forgiven.reason,
          owner: forgiven.owner,
          issue_url: forgiven.issueUrl,
          expires_at: forgiven.expiresAt,
        })
      } else out.blocking.push(entry(r))
    } else if (r.status === 'passed' && r.flakyOnRetry) {
      out.flaky.push(entry(r))
      if (opts.failOnFlaky && !forgiven) out.blocking.push(entry(r))
    }
  }
  out.verdict = out.blocking.length ? 'fail' : 'pass'
  return out
}
