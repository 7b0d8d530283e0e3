import { describe, expect, it } from 'vitest'
import { createForgiver, gate } from '../../src/quarantine/gate.js'
import { ruleCoverage } from '../../src/quarantine/rule-coverage.js'
import { compileRule, regexProblem, RULE_REGEX_MAX_LENGTH, validateRuleMatch } from '../../src/quarantine/rules.js'
import { suiteHints } from '../../src/quarantine/suite-hints.js'
import type { Result } from '../../src/model.js'
import type { QuarantineRule } from '../../src/store/store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'

const now = Date.parse('2026-01-15T00:00:00Z')

const rule = (id: string, match: QuarantineRule['match'], extra: Partial<QuarantineRule> = {}): QuarantineRule => ({
  id,
  match,
  reason: `reason of ${id}`,
  owner: 'team-infra',
  issueUrl: null,
  createdAt: '2026-01-01T00:00:00Z',
  createdBy: 'alice',
  expiresAt: '2026-01-30T00:00:00Z',
  ...extra,
})

const timeout = (name: string): Result =>
  result(name, 'failed', { message: 'Error: Timeout 30000ms exceeded.\n  at page.click' }, 'e2e')

const arm64 = { branch: 'main', env: { runner: 'arm64' } }
const amd64 = { branch: 'main', env: { runner: 'amd64' } }

describe('quarantine rules', () => {
  it('forgives timeouts on the arm64 runners until the 30th, and nothing else', () => {
    const rules = [rule('timeouts-arm64', { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } })]
    const other = result('b', 'failed', { message: 'expected 1 to be 2' }, 'e2e')
    const onArm = gate([timeout('a'), other], new Map(), { now, rules, runOf: () => arm64 })
    expect(onArm.quarantined).toMatchObject([{ test_id: 'e2e::mod::a', rule: 'timeouts-arm64', owner: 'team-infra' }])
    expect(onArm.blocking.map((b) => b.test_id)).toEqual(['e2e::mod::b'])
    // The same timeout on another runner, or after the 30th, is not forgiven.
    expect(gate([timeout('a')], new Map(), { now, rules, runOf: () => amd64 }).verdict).toBe('fail')
    const after = Date.parse('2026-01-30T00:00:01Z')
    expect(gate([timeout('a')], new Map(), { now: after, rules, runOf: () => arm64 }).verdict).toBe('fail')
  })

  it('matches test-id globs, file globs, title regexes and branches', () => {
    const t = (file: string | null, name = 'checkout > pays') =>
      result(name, 'failed', {
        test: { testId: `e2e::${file ?? 'mod'}::${name}`, suite: 'e2e', module: file ?? 'mod', name, file },
      })
    const subject = (r: Result, branch: string | null = 'main') => ({ ...r, branch, env: {} })
    const byId = compileRule(rule('r', { testId: 'e2e::checkout/**' }))
    expect(byId.matches(subject(t('checkout/pay.spec.ts')))).toBe(true)
    expect(byId.matches(subject(t('cart/pay.spec.ts')))).toBe(false)
    const byFile = compileRule(rule('r', { file: 'legacy/**/*.spec.ts' }))
    expect(byFile.matches(subject(t('legacy/a/b.spec.ts')))).toBe(true)
    expect(byFile.matches(subject(t('modern/b.spec.ts')))).toBe(false)
    const byTitle = compileRule(rule('r', { title: '^checkout > ' }))
    expect(byTitle.matches(subject(t('x.ts')))).toBe(true)
    expect(byTitle.matches(subject(t('x.ts', 'cart > adds')))).toBe(false)
    const byBranch = compileRule(rule('r', { testId: '**', branch: 'release/*' }))
    expect(byBranch.matches(subject(t('x.ts'), 'release/1.2'))).toBe(true)
    expect(byBranch.matches(subject(t('x.ts'), 'main'))).toBe(false)
    expect(byBranch.matches(subject(t('x.ts'), null))).toBe(false)
  })

  it('prefers a quarantine of the test itself, and names the first rule by id otherwise', () => {
    const rules = [rule('z-rule', { testId: 'e2e::**' }), rule('a-rule', { testId: 'e2e::mod::*' })]
    const forgiver = createForgiver(new Map(), { now, rules, runOf: () => amd64 })
    expect(forgiver(timeout('a'))?.rule).toBe('a-rule')
  })

  it('refuses catastrophic, long, invalid or unselective patterns', () => {
    expect(regexProblem('(a+)+$')).toMatch(/backtrack/)
    expect(regexProblem('(')).toMatch(/not a valid regular expression/)
    expect(regexProblem('a'.repeat(RULE_REGEX_MAX_LENGTH + 1))).toMatch(/longer than 200/)
    expect(regexProblem('Timeout \\d+ms exceeded')).toBeNull()
    expect(() => validateRuleMatch({ message: '(x*)*' })).toThrow(/message: may backtrack/)
    expect(() => validateRuleMatch({ env: { runner: 'arm64' } })).toThrow(/needs test_id, file, title or message/)
    expect(() => validateRuleMatch({ branch: 'main' })).toThrow(/needs test_id/)
  })

  it('reports which tests each rule covered in the stored history, failures only', async () => {
    const store = await openSqliteStore(':memory:')
    const msg = { message: 'Timeout 5000ms exceeded' }
    const runs = [
      batch(runMeta('r1', '2026-01-01T00:00:00Z', { env: { runner: 'arm64' } }), [
        result('a', 'failed', msg),
        result('b', 'passed'),
      ]),
      batch(runMeta('r2', '2026-01-02T00:00:00Z', { env: { runner: 'amd64' } }), [
        result('a', 'failed', msg),
        result('b', 'failed', msg),
      ]),
      batch(runMeta('r3', '2026-01-03T00:00:00Z', { env: { runner: 'arm64' } }), [result('b', 'failed', msg)]),
    ]
    for (const b of runs) await store.ingestReport(b)
    const cov = await ruleCoverage(store.scanHistory(), [
      rule('timeouts-arm64', { message: 'Timeout', env: { runner: 'arm64' } }),
      rule('nothing', { title: '^never$' }),
    ])
    await store.close()
    expect(cov).toEqual([
      { ruleId: 'timeouts-arm64', tests: 2, failures: 2, testIds: ['unit::mod::a', 'unit::mod::b'] },
      { ruleId: 'nothing', tests: 0, failures: 0, testIds: [] },
    ])
  })
})

describe('suite hints', () => {
  const blocking = (id: string) => ({ test_id: id, name: 'n', status: 'failed' as const, message: null })

  it('says when a quarantined id differs from a failing one only by its suite, and names the fix', () => {
    const hints = suiteHints({
      reportSuites: new Set(['default']),
      knownSuites: new Set(['unit']),
      knownFrom: 'the store',
      quarantinedIds: ['unit::m::q'],
      blocking: [blocking('default::m::q')],
    })
    expect(hints).toHaveLength(2)
    expect(hints[0]).toMatch(/suite "default", but the store knows only "unit".*--suite <name>/)
    expect(hints[1]).toMatch(/default::m::q is not quarantined, but unit::m::q is .*FLAKEWATCH_SUITE/)
  })

  it('says nothing when the suites agree', () => {
    const input = {
      reportSuites: new Set(['unit']),
      knownSuites: new Set(['unit', 'e2e']),
      knownFrom: 'the store',
      quarantinedIds: ['unit::m::q'],
      blocking: [blocking('unit::m::b')],
    }
    expect(suiteHints(input)).toEqual([])
  })
})
