import { describe, expect, it } from 'vitest'
import { foldAttempts } from '../../src/fold-attempts.js'
import { isFailure, type Attempt, type Result, type ResultStatus } from '../../src/model.js'
import { countTotals, gate, type RunScope } from '../../src/quarantine/gate.js'
import { ReportTally } from '../../src/quarantine/report-tally.js'
import type { QuarantineRecord } from '../../src/store/store.js'
import { result } from '../helpers/builders.js'

/** A small deterministic generator (mulberry32), so that a failing case can be replayed from its seed. */
function random(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const STATUSES: ResultStatus[] = ['passed', 'passed', 'passed', 'failed', 'error', 'skipped']

interface Case {
  result: Result
  runId: string
}

/** A report of repeated tests in two runs: some passed, some failed, some passed on retry, some with a file. */
function report(seed: number, n: number): Case[] {
  const next = random(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!
  const cases: Case[] = []
  for (let i = 0; i < n; i++) {
    const name = `t${Math.floor(next() * (n / 3))}`
    const status = pick(STATUSES)
    const attempts: Attempt[] = []
    if (next() < 0.3) {
      for (let a = Math.floor(next() * 3); a >= 0; a--) {
        const s = a === 0 ? status : pick(STATUSES)
        attempts.push({
          retry: attempts.length,
          status: s,
          durationMs: 1,
          message: isFailure(s) ? `m${i}.${a}` : null,
          stack: null,
        })
      }
    }
    const flakyOnRetry = status === 'passed' && attempts.some((a) => isFailure(a.status))
    const r = result(name, status, {
      flakyOnRetry,
      message: isFailure(status) ? `boom ${i}` : flakyOnRetry ? `flaked ${i}` : null,
      errorType: isFailure(status) ? `E${i}` : null,
      attempts,
    })
    if (next() < 0.2) r.test = { ...r.test, file: `f${i}.ts` }
    cases.push({ result: r, runId: next() < 0.5 ? 'run-a' : 'run-b' })
  }
  return cases
}

/** The reference: every result kept and folded as ingest folds them (by run, then test, in first-execution order). */
function foldedWhole(cases: Case[]): { results: Result[]; runOf: Map<Result, string> } {
  const runs = new Map<string, Map<string, Result[]>>()
  for (const c of cases) {
    let tests = runs.get(c.runId)
    if (!tests) runs.set(c.runId, (tests = new Map()))
    const list = tests.get(c.result.test.testId) ?? []
    list.push(c.result)
    tests.set(c.result.test.testId, list)
  }
  const results: Result[] = []
  const runOf = new Map<Result, string>()
  for (const [runId, tests] of runs) {
    for (const group of tests.values()) {
      const file = group.find((r) => r.test.file !== null)?.test.file ?? null
      // As ingest folds them: a Result has no stack of its own.
      const { stack: _stack, ...folded } = foldAttempts(group)
      const r = group.length === 1 ? group[0]! : { ...group[0]!, ...folded, test: { ...group[0]!.test, file } }
      results.push(r)
      runOf.set(r, runId)
    }
  }
  return { results, runOf }
}

/** What the gate and the comment read of a result. */
const seen = (r: Result) => ({
  test: r.test,
  status: r.status,
  flakyOnRetry: r.flakyOnRetry,
  message: r.message,
  errorType: r.errorType,
})

function tally(cases: Case[], keepAll = false) {
  const t = new ReportTally(keepAll, true)
  cases.forEach((c, i) => t.add(c.result, c.runId, i))
  const totals = { tests: 0, passed: 0, failed: 0, skipped: 0 }
  const results: Result[] = []
  const scopes = new Map<Result, RunScope>()
  t.end((runId) => ({ branch: runId, env: {} }), totals, results, scopes)
  return { tally: t, totals, results, scopes }
}

describe('ReportTally', () => {
  it('keeps exactly the failures and passes on retry of the folded results, in order, with the same counts', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const cases = report(seed, 60)
      const whole = foldedWhole(cases)
      const { totals, results, scopes } = tally(cases)
      expect(totals, `seed ${seed}`).toEqual(countTotals(whole.results))
      const matter = whole.results.filter((r) => isFailure(r.status) || r.flakyOnRetry)
      expect(results.map(seen), `seed ${seed}`).toEqual(matter.map(seen))
      expect(results.map((r) => scopes.get(r)!.branch)).toEqual(matter.map((r) => whole.runOf.get(r)))
    }
  })

  it('decides as the gate decides on every result, and finds each case’s test again by its place', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const cases = report(seed, 40)
      const whole = foldedWhole(cases)
      const { tally: t, totals, results } = tally(cases)
      const quarantined = new Map<string, QuarantineRecord>()
      for (const r of whole.results.filter((_, i) => i % 2 === 0)) {
        const record = { testId: r.test.testId, reason: 'known', owner: null, issueUrl: null, expiresAt: null }
        quarantined.set(r.test.testId, { ...record, createdAt: '', createdBy: 'alice', source: 'manual' })
      }
      for (const failOnFlaky of [false, true]) {
        const expected = gate(whole.results, quarantined, { failOnFlaky })
        expect(gate(results, quarantined, { failOnFlaky, totals }), `seed ${seed}`).toEqual(expected)
      }
      cases.forEach((c, i) => {
        const r = t.resultAt(i)
        const same = whole.results.find(
          (w) => w.test.testId === c.result.test.testId && whole.runOf.get(w) === c.runId,
        )!
        expect(r && seen(r)).toEqual(isFailure(same.status) || same.flakyOnRetry ? seen(same) : undefined)
      })
      expect(t.caseCount).toBe(cases.length)
    }
  })

  it('keeps every folded result with keepAll, unchanged', () => {
    const cases = report(7, 200)
    const whole = foldedWhole(cases)
    expect(tally(cases, true).results).toEqual(whole.results)
  })

  it('a repeat that fails after passes is a failure; one that passes after a failure passed on retry', () => {
    const pass = result('a', 'passed')
    const { totals, results } = tally([
      { result: pass, runId: 'r' },
      { result: pass, runId: 'r' },
      { result: result('a', 'failed'), runId: 'r' },
      { result: result('b', 'failed'), runId: 'r' },
      { result: result('b', 'skipped'), runId: 'r' },
      { result: result('b', 'passed'), runId: 'r' },
    ])
    expect(totals).toEqual({ tests: 2, passed: 1, failed: 1, skipped: 0 })
    expect(results.map((r) => [r.test.name, r.status, r.flakyOnRetry, r.message])).toEqual([
      ['a', 'failed', false, 'expected 1 to be 2 in a'],
      ['b', 'passed', true, 'expected 1 to be 2 in b'],
    ])
  })
})
