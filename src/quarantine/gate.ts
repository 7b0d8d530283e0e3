import { isFailure, type EnvFacets, type Result } from '../model.js'
import type { QuarantineRecord, QuarantineRule } from '../store/store.js'
import { compileRules, findRule } from './rules.js'

/** The run a result belongs to, as far as rules care. */
export interface RunScope {
  branch: string | null
  env: EnvFacets
}

export interface GateOptions {
  /** Fail the gate on tests that passed only on retry, too. */
  failOnFlaky?: boolean
  /** Now, for expiry checks (epoch ms). */
  now?: number
  /** Quarantine rules; those expired at `now` forgive nothing. */
  rules?: readonly QuarantineRule[]
  /** The run of each result, for rules on branch and facets. Default: no branch, no facets. */
  runOf?: (result: Result) => RunScope
  /**
   * The job's counts, when `results` holds only the results that can matter to the decision (failed, errored,
   * passed on retry; see `ReportTally`). Default: counted from `results`.
   */
  totals?: GateTotals
}

export interface GateTotals {
  tests: number
  passed: number
  failed: number
  skipped: number
}

export interface GateEntry {
  test_id: string
  name: string
  status: Result['status']
  message: string | null
}

export interface QuarantinedEntry extends GateEntry {
  /** The rule that forgave this failure, or null for a quarantine of this one test. */
  rule: string | null
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
  totals: GateTotals
  /** How many failures each rule forgave, by rule id: a rule that forgives far more than expected shows here. */
  rules: RuleTally[]
  /** Plain-language warnings about the inputs (a suite mismatch, a rule that forgives nothing), said next to the verdict. */
  hints: string[]
}

export interface RuleTally {
  id: string
  forgave: number
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

const NO_SCOPE: RunScope = { branch: null, env: {} }

/** What forgives a failure: a quarantine of the test itself, else the first rule (by id) that matches it. */
export type Forgiver = Pick<QuarantinedEntry, 'rule' | 'reason' | 'owner' | 'issue_url' | 'expires_at'>

/**
 * A function that says what forgives a result, if anything: the one place where single quarantines and rules meet,
 * for the gate, the `run` wrapper and the native reporters.
 * @example createForgiver(quarantines, { rules, now })(result)?.rule
 */
export function createForgiver(
  quarantines: ReadonlyMap<string, QuarantineRecord>,
  opts: Pick<GateOptions, 'now' | 'rules' | 'runOf'> = {},
): (r: Result) => Forgiver | undefined {
  const now = opts.now ?? Date.now()
  const rules = compileRules(opts.rules ?? [], now)
  const runOf = opts.runOf ?? (() => NO_SCOPE)
  return (r) => {
    const q = quarantines.get(r.test.testId)
    if (q && isActive(q, now)) {
      return { rule: null, reason: q.reason, owner: q.owner, issue_url: q.issueUrl, expires_at: q.expiresAt }
    }
    if (rules.length === 0) return undefined
    const run = runOf(r)
    const rule = findRule(rules, { test: r.test, status: r.status, message: r.message, ...run })
    if (!rule) return undefined
    return {
      rule: rule.id,
      reason: rule.reason,
      owner: rule.owner,
      issue_url: rule.issueUrl,
      expires_at: rule.expiresAt,
    }
  }
}

function tallyRules(quarantined: readonly QuarantinedEntry[]): RuleTally[] {
  const counts = new Map<string, number>()
  for (const q of quarantined) if (q.rule !== null) counts.set(q.rule, (counts.get(q.rule) ?? 0) + 1)
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, forgave]) => ({ id, forgave }))
}

/** How many results passed, failed (or errored) and were skipped. */
export function countTotals(results: readonly Result[]): GateTotals {
  const totals = { tests: results.length, passed: 0, failed: 0, skipped: 0 }
  for (const r of results) {
    if (r.status === 'passed') totals.passed++
    else if (r.status === 'skipped') totals.skipped++
    else totals.failed++
  }
  return totals
}

/**
 * Decides a CI job's outcome: it passes if and only if every failed or errored test is quarantined, on its own or
 * by a rule. A test that passed on retry passes unless `failOnFlaky`. Pure: the command reads reports and
 * quarantines, this decides.
 * @example gate(results, new Map([['unit::a::b', record]])).verdict // 'pass' | 'fail'
 */
export function gate(
  results: Result[],
  quarantines: ReadonlyMap<string, QuarantineRecord>,
  opts: GateOptions = {},
): GateResult {
  const forgiverOf = createForgiver(quarantines, opts)
  const out: GateResult = {
    verdict: 'pass',
    blocking: [],
    quarantined: [],
    flaky: [],
    totals: opts.totals ? { ...opts.totals } : countTotals(results),
    rules: [],
    hints: compileRules(opts.rules ?? [], opts.now ?? Date.now()).flatMap((r) => (r.problem ? [r.problem] : [])),
  }
  for (const r of results) {
    if (isFailure(r.status)) {
      const forgiven = forgiverOf(r)
      if (forgiven) out.quarantined.push({ ...entry(r), ...forgiven })
      else out.blocking.push(entry(r))
    } else if (r.status === 'passed' && r.flakyOnRetry) {
      out.flaky.push(entry(r))
      if (opts.failOnFlaky && !forgiverOf(r)) out.blocking.push(entry(r))
    }
  }
  out.verdict = out.blocking.length ? 'fail' : 'pass'
  out.rules = tallyRules(out.quarantined)
  return out
}
