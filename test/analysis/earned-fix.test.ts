import { describe, expect, it } from 'vitest'
import { analyzeTest, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { rateLowerBound } from '../../src/analysis/rate-bound.js'
import type { AssociationHint, ChangeHint } from '../../src/analysis/types.js'
import { HOUR, history, windowFlake } from './builders.js'

const cfg = resolveAnalysisConfig()

describe('the conservative rate', () => {
  it('is the exact one-sided lower confidence bound', () => {
    // Clopper–Pearson: P(X ≥ k | n, p_L) = 1 − confidence.
    expect(rateLowerBound(10, 109, 0.9)).toBeCloseTo(0.0578, 3)
    expect(rateLowerBound(1, 2, 0.9)).toBeCloseTo(0.0513, 3)
    expect(rateLowerBound(0, 50, 0.9)).toBe(0)
    expect(rateLowerBound(5, 5, 0.9)).toBeCloseTo(Math.pow(0.1, 1 / 5), 10)
  })
})

describe('a fix is earned under the condition the test failed in', () => {
  /** 200 runs five hours apart; every tenth on the rare runner, where every other run fails. */
  function rareRunner(cleanRuns: number, rareInStretch: number) {
    const h = history('unit::pay.test.ts::refunds', 5 * HOUR)
    for (let i = 0; i < 181; i++) {
      const rare = i % 10 === 0
      if (rare && i % 20 === 0) h.fail({ runner: 'ci-rare' })
      else h.pass({ runner: rare ? 'ci-rare' : `ci-${i % 3}` })
    }
    const every = Math.floor(cleanRuns / (rareInStretch + 1))
    for (let i = 1; i <= cleanRuns; i++)
      h.pass({ runner: rareInStretch > 0 && i % every === 0 && i / every <= rareInStretch ? 'ci-rare' : 'ci-1' })
    return analyzeTest(h.build(), { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }, { now: h.now })
  }

  it('does not call it fixed after clean runs elsewhere, and says what is missing', () => {
    // 300 clean runs beat the overall rate (10 of 181 runs, rate ≥ 3.5%: 11 · 0.965^j ≤ 0.01 asks for 199), but
    // only 3 ran on ci-rare, where 10 of 19 runs failed (rate ≥ 36%): 16 clean runs there are needed.
    const a = rareRunner(300, 3)
    expect(a.verdict).toBe('flaky')
    const hint = a.hints.find((h): h is ChangeHint => h.kind === 'maybe_fixed')
    expect(hint?.missing).toBe('needs 13 more clean runs, 13 of them on runner ci-rare')
    expect(hint?.requirements?.[1]).toMatchObject({
      where: 'on runner ci-rare',
      runs: 19,
      failures: 10,
      clean: 3,
      needed: 16,
    })
  })

  it('calls it fixed once the rare runner has run it cleanly often enough', () => {
    const a = rareRunner(300, 18)
    expect(a.verdict).toBe('healthy')
    expect(a.reason).toMatch(/^fixed: no failures in the last 300 runs/)
    expect(a.reason).toContain(
      '18 clean runs on runner ci-rare in a row, in any of its 11 clean stretches, happen by chance with probability 0.00378',
    )
  })

  it('asks a worker-count flake for clean runs at that worker count', () => {
    const h = history('unit::q.test.ts::drains', 5 * HOUR)
    const workers = ['1', '2', '4', '8']
    for (let i = 0; i < 160; i++) {
      const w = workers[i % 4]!
      if (w === '8' && i % 8 === 3) h.fail({ env: { workers: w } })
      else h.pass({ env: { workers: w } })
    }
    // 160 clean runs, all with 1 or 2 workers.
    for (let i = 0; i < 160; i++) h.pass({ env: { workers: i % 2 === 0 ? '1' : '2' } })
    const a = analyzeTest(h.build(), { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }, { now: h.now })
    expect(a.verdict).toBe('flaky')
    const hint = a.hints.find((x): x is ChangeHint => x.kind === 'maybe_fixed')
    expect(hint?.missing).toMatch(/^needs \d+ more clean runs, \d+ of them with workers (≥ 8|=8)$/)
  })

  it('asks a time-window flake for clean runs inside its window', () => {
    // Hourly runs for ten days; it fails at 10–13 o'clock on alternate days. Then ten more days, all clean, but
    // never between 10:00 and 14:00: those runs prove nothing about the window.
    const h = windowFlake('unit::report.test.ts::renders', 240, 10, 4)
    const lookback = { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }
    const at = (i: number) => Date.UTC(2025, 0, 1) + i * HOUR
    for (let i = 240; i < 480; i++) if (i % 24 < 10 || i % 24 >= 14) h.pass({ at: at(i) })
    const a = analyzeTest(h.build(), lookback, { now: at(480) })
    expect(a.verdict).toBe('flaky')
    const hint = a.hints.find((x): x is ChangeHint => x.kind === 'maybe_fixed')
    expect(hint?.missing).toMatch(/^needs \d+ more clean runs, \d+ of them between 10:00 and 14:00 UTC$/)
    // Ten more days with the window included: now the window has run cleanly often enough.
    for (let i = 480; i < 720; i++) h.pass({ at: at(i) })
    const b = analyzeTest(h.build(), lookback, { now: at(720) })
    expect(b.verdict).toBe('healthy')
    expect(b.reason).toContain('clean runs between 10:00 and 14:00 UTC in a row')
  })
})

describe('a rare condition', () => {
  /**
   * 110 runs two hours apart: every eleventh on ci-rare (9%), the rest on eight common runners, with a shard of
   * eight, an os of two and a build number new on every run. It fails on 4 of the 10 runs of ci-rare, nowhere else.
   */
  function rareFlake() {
    const h = history('unit::pay.test.ts::settles', 2 * HOUR)
    for (let i = 0; i < 110; i++) {
      const env = { shard: String(i % 8), os: i % 3 === 0 ? 'windows' : 'linux', build: String(4000 + i) }
      if (i % 11 === 5) {
        if (i % 22 === 5 && i < 90) h.fail({ runner: 'ci-rare', env })
        else h.pass({ runner: 'ci-rare', env })
      } else h.pass({ runner: `ci-${i % 8}`, env })
    }
    // A few clean runs to end on, none on ci-rare.
    for (let i = 0; i < 5; i++) h.pass({ runner: 'ci-1', env: { shard: '0', os: 'linux', build: String(5000 + i) } })
    return h
  }

  it('is found from 4 failures of 4, by an exact test that pays only for the values that could be significant', () => {
    const h = rareFlake()
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.failures).toBe(4)
    expect(a.verdict).toBe('flaky')
    expect(a.recommendation.action).toBe('quarantine')
    const hint = a.hints.find((x): x is AssociationHint => x.kind === 'facet_association')
    // Hypergeometric: C(10, 4) / C(115, 4) ≈ 3.1e-5, times the runners that could reach it. A Bonferroni over
    // every value seen (the 115 build numbers too) would have lost it: p ≈ 0.004 > 0.003.
    expect(hint).toMatchObject({ facet: 'runner', value: 'ci-rare', failures: 4, executions: 10 })
    expect(hint!.pValue).toBeLessThan(0.001)
    expect(hint!.message).toMatch(
      /^100% of failures \(4 of 4\) on runner ci-rare, which ran 9% of executions \(p = [\d.e-]+; \d+ values tested\)$/,
    )
    expect(a.evidence.some((e) => e.kind === 'runner_association' && e.detail === hint!.message)).toBe(true)
  })

  it('is not called fixed while the rare runner has hardly run it since', () => {
    const h = rareFlake()
    // 600 clean runs (more than the overall rate asks), 3 of them on ci-rare: 6 there since the last failure.
    for (let i = 0; i < 600; i++) {
      const rare = i % 200 === 100
      h.pass({
        runner: rare ? 'ci-rare' : `ci-${i % 8}`,
        env: { shard: String(i % 8), os: 'linux', build: String(6000 + i) },
      })
    }
    const lookback = { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }
    const a = analyzeTest(h.build(), lookback, { now: h.now })
    expect(a.verdict).toBe('flaky')
    const hint = a.hints.find((x): x is ChangeHint => x.kind === 'maybe_fixed')
    expect(hint?.missing).toMatch(/^needs \d+ more clean runs, \d+ of them on runner ci-rare$/)
    expect(hint?.requirements?.find((r) => r.where === 'on runner ci-rare')).toMatchObject({ failures: 4, clean: 6 })
  })
})

describe('one short episode', () => {
  const long = { ...cfg, scoring: { ...cfg.scoring, lookbackDays: 365 } }
  const maybe = (a: ReturnType<typeof analyzeTest>) => a.hints.find((x): x is ChangeHint => x.kind === 'maybe_fixed')

  it('keeps a bursty flake after its first burst maybe fixed, and says what is still needed', () => {
    // 8 failures in the 9 runs of one burst, then 22 clean runs: at its rate (8 of 19, ≥ 26%) 23 clean runs would
    // do, but the failures span 9 runs, fewer than the 23 they ask for: its quiet gap is unknown.
    const h = history('unit::sync.test.ts::burst', 2 * HOUR).seq('.'.repeat(10) + 'FFF.FFFFF' + '.'.repeat(23))
    const a = analyzeTest(h.build(), long, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(maybe(a)?.missing).toBe(
      'needs 188 more clean runs, one short episode (failures over 9 runs, fewer than the 23 clean runs they ask for, as a first burst is): a fix waits for 220 runs since the first failure',
    )
    expect(a.recommendation.action).toBe('quarantine')
    // Its next burst 60 runs later finds it still quarantined and flaky: one quarantine, no release.
    h.seq('.'.repeat(37) + 'FF.FFF')
    expect(analyzeTest(h.build(), long, { now: h.now }).verdict).toBe('flaky')
  })

  it('releases it once the runs since its first failure reach 220', () => {
    const h = history('unit::sync.test.ts::burst', 2 * HOUR).seq('.'.repeat(10) + 'FFF.FFFFF' + '.'.repeat(210))
    expect(analyzeTest(h.build(), long, { now: h.now }).verdict).toBe('flaky')
    h.pass()
    const a = analyzeTest(h.build(), long, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.reason).toMatch(/^fixed: no failures in the last 211 runs/)
  })

  it('leaves a real fix after a long flaky stretch to the rate rule, well within the 220-run bound', () => {
    // 24 failures over 120 runs (every fifth): the span, 116 runs, is longer than the 48 clean runs the rate asks.
    const h = history('unit::cart.test.ts::fixed', 2 * HOUR).seq('....F'.repeat(24) + '.'.repeat(47))
    const a = analyzeTest(h.build(), long, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(maybe(a)?.missing).toBe('needs 1 more clean run')
    h.pass()
    const b = analyzeTest(h.build(), long, { now: h.now })
    expect(b.verdict).toBe('healthy')
    expect(b.reason).toMatch(/^fixed: no failures in the last 48 runs/)
  })

  it('releases a short flake fixed for real within the bound: 220 runs from its first failure', () => {
    // 4 failures in 8 runs ask for 23 clean runs at their rate; they span 8: the fix waits for 212.
    const h = history('unit::cart.test.ts::short', 2 * HOUR).seq('F.F..F.F' + '.'.repeat(211))
    const a0 = analyzeTest(h.build(), long, { now: h.now })
    expect(a0.verdict).toBe('flaky')
    expect(maybe(a0)?.missing).toMatch(
      /^needs 1 more clean run, one short episode \(failures over 8 runs, fewer than the 23 /,
    )
    h.pass()
    const a = analyzeTest(h.build(), long, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.hints.find((x) => x.kind === 'fixed')).toMatchObject({ runsAfter: 212 })
  })
})
