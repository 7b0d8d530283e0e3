import { describe, expect, it } from 'vitest'
import { createForgiver, gate } from '../../src/quarantine/gate.js'
import { ruleCoverage } from '../../src/quarantine/rule-coverage.js'
import {
  compileRule,
  regexProblem,
  RULE_MESSAGE_MATCH_CHARS,
  RULE_REGEX_MAX_LENGTH,
  validateRuleMatch,
} from '../../src/quarantine/rules.js'
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
    const byBranch = compileRule(rule('r', { testId: '**', branch: 'release/*', allowBroad: true }))
    expect(byBranch.matches(subject(t('x.ts'), 'release/1.2'))).toBe(true)
    expect(byBranch.matches(subject(t('x.ts'), 'main'))).toBe(false)
    expect(byBranch.matches(subject(t('x.ts'), null))).toBe(false)
  })

  it('prefers a quarantine of the test itself, and names the first rule by id otherwise', () => {
    const rules = [rule('z-rule', { testId: 'e2e::**' }), rule('a-rule', { testId: 'e2e::mod::*' })]
    const forgiver = createForgiver(new Map(), { now, rules, runOf: () => amd64 })
    expect(forgiver(timeout('a'))?.rule).toBe('a-rule')
  })

  it('refuses long or invalid patterns, and what RE2 cannot match in linear time, with the reason', () => {
    expect(regexProblem('(')).toMatch(/linear time .*missing closing \)/)
    expect(regexProblem('(?!x)a')).toMatch(/no lookaround.*\(\?!/)
    expect(regexProblem('(a)\\1')).toMatch(/no backreferences.*\\1/)
    expect(regexProblem('a'.repeat(RULE_REGEX_MAX_LENGTH + 1))).toMatch(/longer than 200/)
    expect(regexProblem('Timeout \\d+ms exceeded')).toBeNull()
    expect(() => validateRuleMatch({ message: '(?=x)' })).toThrow(/rule: message: not a pattern .* linear time/)
    expect(() => validateRuleMatch({ test_id: 'a{b,{c,{d,{e,{f,{g,{h,{i,{j}}}}}}}}}' } as never)).toThrow()
    expect(() => validateRuleMatch({ testId: 'x/[z-a]' })).toThrow(/test_id: not a valid glob/)
  })

  // The patterns of issue 33: alternatives that overlap, which the old syntactic check let through. A backtracking
  // engine doubles its work with each character of `111…1!`; RE2 reads the message once. Each check runs over a
  // message at the length cap, a thousand times: with backtracking a single one would not finish.
  it.each(['(\\w|\\d)+$', '(a|a)*$', '(a+)+$', '(x*)*y', '(\\d|\\d\\d)+!x', '^(\\w+\\s?)*$'])(
    'matches %s in linear time against messages at the length cap',
    (pattern) => {
      expect(regexProblem(pattern)).toBeNull()
      // allow_broad: `(a|a)*$` matches every message (the empty string at its end), and is still matched here.
      const r = compileRule(rule('r', { message: pattern, allowBroad: true }))
      const message = `${'1'.repeat(RULE_MESSAGE_MATCH_CHARS - 1)}!`
      const subject = { ...timeout('a'), message, branch: null, env: {} }
      let forgiven = 0
      for (let i = 0; i < 1000; i++) if (r.matches(subject)) forgiven++
      // (a|a)*$ matches the empty string at the end; the others cannot match a run of digits that ends in `!`.
      expect(forgiven).toBe(pattern === '(a|a)*$' ? 1000 : 0)
    },
  )

  it('matches globs with many stars in linear time too', () => {
    const r = compileRule(rule('r', { testId: `${'*a'.repeat(60)}b` }))
    const test = { testId: 'a'.repeat(RULE_MESSAGE_MATCH_CHARS), name: 'n', module: 'm', file: null }
    expect(r.matches({ test, status: 'failed', message: null, branch: null, env: {} })).toBe(false)
  })

  it.each([
    [{ testId: '**' }, /test_id "\*\*" selects any value/],
    [{ testId: '{*,**}' }, /selects any value/],
    [{ file: '**' }, /file "\*\*"/],
    [{ message: '.*' }, /message "\.\*"/],
    [{ title: '' }, /title/],
    [{ testId: '**', message: '.' }, /test_id "\*\*" and message "\."/],
    [{}, /needs test_id, file, title or message/],
    [{ branch: 'main' }, /needs test_id.*--allow-broad/],
    [{ env: { runner: 'arm64' } }, /needs test_id/],
  ] as [QuarantineRule['match'], RegExp][])('refuses a rule that forgives everything: %j', (match, why) => {
    expect(() => validateRuleMatch(match)).toThrow(why)
    // Allowed when asked for, and then kept with the rule.
    if (Object.values(match).every((v) => v !== '')) {
      expect(validateRuleMatch({ ...match, allowBroad: true })).toEqual({ ...match, allowBroad: true })
    }
  })

  it('keeps rules that narrow: a glob under a suite, a message, or ** with a message', () => {
    for (const match of [
      { testId: 'e2e::**' },
      { testId: '*' },
      { message: 'Timeout' },
      { testId: '**', message: 'x' },
    ])
      expect(validateRuleMatch(match)).toEqual(match)
  })

  it('lets a broad or uncompilable rule stored before these checks forgive nothing, and says so', () => {
    const results = [timeout('a')]
    const old = [rule('all', { testId: '**' }), rule('ahead', { message: '(?=Timeout)' })]
    const g = gate(results, new Map(), { now, rules: old })
    expect(g.verdict).toBe('fail')
    expect(g.hints).toEqual([
      expect.stringMatching(/^rule ahead forgives nothing: message: .*\(\?=/),
      expect.stringMatching(/^rule all forgives nothing: matches every failure/),
    ])
  })

  it('counts the failures each rule forgave', () => {
    const rules = [rule('timeouts', { message: 'Timeout' }), rule('bees', { testId: '**::b' })]
    const g = gate([timeout('a'), timeout('c'), result('b', 'failed')], new Map(), { now, rules })
    expect(g.rules).toEqual([
      { id: 'bees', forgave: 1 },
      { id: 'timeouts', forgave: 2 },
    ])
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
