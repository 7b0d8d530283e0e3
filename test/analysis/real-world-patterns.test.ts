// The real-world patterns of issue 14, each as a small history that today's analysis got wrong.
import { describe, expect, it } from 'vitest'
import type { ChangeHint } from '../../src/analysis/types.js'
import { analyzeTest, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { DAY, HOUR, history } from './builders.js'

const cfg = resolveAnalysisConfig()

describe('branch-aware verdicts', () => {
  /** Main passes every run; fix/search, interleaved with it, fails every run from its third run on. */
  function branchBreakage(mainRuns = 30, branchRuns = 8, fixedAfter = 0) {
    const h = history('unit::search.test.ts::finds', 3 * HOUR)
    let b = 0
    for (let i = 0; i < mainRuns; i++) {
      h.pass({ revision: `main${i}` })
      if (i % 3 === 1 && b < branchRuns + fixedAfter) {
        const broken = b >= 2 && b < branchRuns
        if (broken) h.fail({ branch: 'fix/search', revision: `abc${b}`, message: 'expected 3 results, got 0' })
        else h.pass({ branch: 'fix/search', revision: `abc${b}` })
        b++
      }
    }
    return h
  }

  it('calls a test that fails on every run of one feature branch healthy on main, with a branch hint', () => {
    const h = branchBreakage()
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.flipRate).toBe(0)
    expect(a.branchBreakageRuns).toBe(6)
    const hint = a.hints.find((x) => x.kind === 'branch_breakage')
    expect(hint).toMatchObject({ branch: 'fix/search', revision: 'abc2', runs: 6, ongoing: true })
    expect(hint!.message).toMatch(/^fails on every run of fix\/search since abc2/)
  })

  it('also when the branch was fixed there afterwards', () => {
    const h = branchBreakage(30, 6, 3)
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.hints.find((x) => x.kind === 'branch_breakage')).toMatchObject({ runs: 4, ongoing: false })
  })

  it('still takes a pass and a fail on one revision of that branch as proof', () => {
    const h = branchBreakage()
    h.pass({ branch: 'fix/search', revision: 'abc7' })
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.evidence[0]).toMatchObject({ kind: 'same_revision_pass_and_fail', revision: 'abc7' })
  })

  it('keeps every result when the test never runs on the default branch', () => {
    const h = history().seq('....FFFFF', { branch: 'release/2' })
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('broken')
  })
})

describe('fixed means fixed', () => {
  /** Four runs a day: bursts of a day or two that fail often, between clean stretches of two weeks. */
  it('does not call a bursty test fixed in the middle of a clean stretch shorter than its earlier gaps', () => {
    const h = history('unit::sync.test.ts::syncs', 6 * HOUR)
    h.seq('.'.repeat(10)).seq('FFF.FFF').seq('.'.repeat(56)).seq('FFFF.FF').seq('.'.repeat(45))
    const a = analyzeTest(h.build(), { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 60 } }, { now: h.now })
    expect(a.verdict).toBe('flaky')
    // Its 12 failures are 2 bursts: the clean stretch is judged at the rate bursts begin, 2 in 68 runs outside them.
    const hint = a.hints.find((x): x is ChangeHint => x.kind === 'maybe_fixed')
    expect(hint?.requirements?.find((r) => r.where === 'counting bursts, not failures')).toMatchObject({
      failures: 2,
      runs: 68,
      clean: 45,
    })
    expect(hint?.message).toContain('2 bursts began in 68 runs outside bursts before')
  })

  it('calls a low-rate flaky test fixed only once its clean stretch is improbable at its old rate', () => {
    // One failure in ten runs: 6 failures in the 54 runs up to the last one. The old rule called it fixed after 40
    // clean runs (a cap), which a test still failing 10% of the time passes 1.5% of the time, and 5% of the time
    // at a 7% rate: no evidence. Now the rate is taken as its 90% lower bound (5.9% from 6 of 54), and a clean
    // stretch that long in any of its 7 stretches, 7 · (1 − 0.059)^j ≤ 0.01, asks for 107 clean runs.
    // The rate rule alone here (fixedEpisodeRuns 1 turns the one-short-episode rule off; see the test below it).
    const rateOnly = { ...cfg, verdict: { ...cfg.verdict, fixedEpisodeRuns: 1 } }
    const pattern = '....F.....'.repeat(3) + '.F........'.repeat(2) + '...F......'
    const early = history('unit::cart.test.ts::adds', 4 * HOUR).seq(pattern + '.'.repeat(51))
    const a = analyzeTest(early.build(), rateOnly, { now: early.now })
    expect(a.verdict).toBe('flaky')
    expect(a.hints).toContainEqual(
      expect.objectContaining({ kind: 'maybe_fixed', runsAfter: 57, missing: 'needs 50 more clean runs' }),
    )
    const h = history('unit::cart.test.ts::adds', 4 * HOUR).seq(pattern + '.'.repeat(101))
    const b = analyzeTest(h.build(), rateOnly, { now: h.now })
    expect(b.verdict).toBe('healthy')
    expect(b.reason).toMatch(/^fixed: no failures in the last 107 runs/)
    expect(b.reason).toContain(
      '6 of 54 runs failed before (rate ≥ 5.9%, 90% lower bound): 107 clean runs in a row, in any of its 7 clean stretches, happen by chance with probability 0.00997 (a fix needs ≤ 0.01)',
    )
    const fixed = b.hints.find((x) => x.kind === 'fixed')
    expect(fixed).toMatchObject({ alpha: 0.01 })
    expect((fixed as { chance: number }).chance).toBeLessThanOrEqual(0.01)
  })

  it('does not let a failure rate taken from two runs override proof of flakiness', () => {
    const h = history().pass({ revision: 'abc' }).fail({ revision: 'abc' }).seq('.'.repeat(12))
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.evidence[0]!.kind).toBe('same_revision_pass_and_fail')
  })
})

describe('recommendations follow the verdict and the policy', () => {
  it('recommends quarantine for a flaky test the policy would quarantine, whatever its score', () => {
    const h = history('unit::m.test.ts::r', 8 * HOUR).seq('..R.....R...R....R..R..')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.score).toBeLessThan(cfg.scoring.quarantineThreshold)
    expect(a.recommendation.action).toBe('quarantine')
    expect(a.recommendation.reason).toMatch(/quarantine policy/)
  })

  it('recommends quarantine until the clean streak has earned a fix, and not after', () => {
    // 11 clean runs after 5 passes on retry in 21 runs: once "the release rule" (10 passes), now not a fix (a
    // test still failing at that rate would have them by chance), so the recommendation stays quarantine.
    const early = history('unit::m.test.ts::r', 8 * HOUR).seq('..R.....R...R....R..R' + '.'.repeat(11))
    const a = analyzeTest(early.build(), cfg, { now: early.now + DAY })
    expect(a.trailingPasses).toBe(11)
    expect(a.recommendation.action).toBe('quarantine')
    // 5 of 21 runs ask for 50 clean runs, more than the 19 runs its failures span: one short episode, so the fix
    // waits until 220 runs have passed since the first, 201 clean ones.
    const long = { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }
    const mid = history('unit::m.test.ts::r', 8 * HOUR).seq('..R.....R...R....R..R' + '.'.repeat(200))
    expect(analyzeTest(mid.build(), long, { now: mid.now + DAY }).recommendation.action).toBe('quarantine')
    const h = history('unit::m.test.ts::r', 8 * HOUR).seq('..R.....R...R....R..R' + '.'.repeat(201))
    const b = analyzeTest(h.build(), long, { now: h.now + DAY })
    expect(b.verdict).toBe('healthy')
    expect(b.recommendation.action).not.toBe('quarantine')
  })
})
