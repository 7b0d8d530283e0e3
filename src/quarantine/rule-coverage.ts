import { isFailure, type TestHistory } from '../model.js'
import type { QuarantineRule } from '../store/store.js'
import { compileRule } from './rules.js'

/** How far back `quarantine list` looks for what each rule forgave. */
export const RULE_COVERAGE_DAYS = 14
/** Test ids kept per rule; the count goes on. */
export const RULE_COVERAGE_MAX_IDS = 20

export interface RuleCoverage {
  ruleId: string
  /** Distinct tests with a failure the rule matches in the window. */
  tests: number
  /** Failures (results) the rule matches in the window. */
  failures: number
  /** The first tests, by id. */
  testIds: string[]
}

/**
 * Which tests each rule covered lately: the failures in the histories that each rule matches, whether or not the
 * rule existed then, so that a new rule shows at once what it will forgive. Pure; the caller picks the window.
 * @example await ruleCoverage(store.scanHistory({ since }), rules)
 */
export async function ruleCoverage(
  histories: AsyncIterable<TestHistory> | Iterable<TestHistory>,
  rules: readonly QuarantineRule[],
): Promise<RuleCoverage[]> {
  const compiled = rules.map(compileRule)
  const ids = compiled.map(() => new Set<string>())
  const failures = compiled.map(() => 0)
  for await (const h of histories) {
    for (const e of h.entries) {
      if (!isFailure(e.status)) continue
      const subject = { test: h.test, status: e.status, message: e.message, branch: e.run.branch, env: e.run.env }
      compiled.forEach((c, i) => {
        if (!c.matches(subject)) return
        failures[i]!++
        ids[i]!.add(h.test.testId)
      })
    }
  }
  return compiled.map((c, i) => ({
    ruleId: c.rule.id,
    tests: ids[i]!.size,
    failures: failures[i]!,
    testIds: [...ids[i]!].sort().slice(0, RULE_COVERAGE_MAX_IDS),
  }))
}
