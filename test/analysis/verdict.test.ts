import { describe, expect, it } from 'vitest'
import { analyzeTest, infraRunIds, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { DAY, HOUR, history } from './builders.js'

const cfg = resolveAnalysisConfig()

describe('verdict: flaky is caught early with proof', () => {
  it('calls a pass and a fail on the same revision flaky after two runs', () => {
    const h = history().pass({ revision: 'abc' }).fail({ revision: 'abc' })
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.reason).toContain('same revision abc')
    expect(a.evidence[0]).toMatchObject({ kind: 'same_revision_pass_and_fail', revision: 'abc', runIds: ['r0', 'r1'] })
  })

  it('calls a pass on retry flaky after one run', () => {
    const h = history().retryPass(2)
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.evidence.map((e) => e.kind)).toEqual(['pass_on_retry'])
  })

  it('needs the minimum sample for a verdict without proof', () => {
    const h = history().seq('.F.F')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('insufficient_data')
    const more = history().seq('.F.F.')
    const a = analyzeTest(more.build(), cfg, { now: more.now })
    expect(a.verdict).toBe('flaky')
    expect(a.evidence.map((e) => e.kind)).toContain('high_flip_rate')
  })

  it('calls a single failure episode healthy, not flaky', () => {
    const h = history().seq('..........FF..........')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.reason).toContain('single episode')
  })

  it('is insufficient_data without countable runs', () => {
    const h = history().seq('SSS')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('insufficient_data')
  })
})

describe('verdict: broken is never called flaky', () => {
  it('calls a regression broken, with the revision where it started', () => {
    const h = history().seq('.'.repeat(30)).fail({ revision: 'bad1' }).seq('FFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('broken')
    expect(a.reason).toMatch(/failed the last 4 runs in a row since revision bad1/)
    expect(a.evidence).toEqual([expect.objectContaining({ kind: 'consecutive_failures', revision: 'bad1' })])
    expect(a.hints).toContainEqual(expect.objectContaining({ kind: 'broken_since', revision: 'bad1' }))
  })

  it('calls a regression broken after three failures', () => {
    const h = history().seq('.'.repeat(20) + 'FFF')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('broken')
  })

  it('calls a regression broken even when the test was proven flaky before', () => {
    const h = history()
      .pass({ revision: 'x' })
      .fail({ revision: 'x' })
      .retryPass(1)
      .seq('.'.repeat(20) + 'FFFFFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('broken')
    expect(a.evidence.map((e) => e.kind)).not.toContain('same_revision_pass_and_fail')
  })

  it('calls a test that never passed broken', () => {
    const h = history().seq('FFF')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('broken')
  })

  it('does not take a flaky test’s short unlucky streak for a breakage', () => {
    const h = history().seq('.F.FF..F.F.FF.F..F.FFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
  })
})

describe('verdict: a streak inside a time window or a burst is not a breakage', () => {
  /** Hourly runs for 12 days: inside 10:00–14:00 it fails about two runs in three, outside never. */
  function windowTest() {
    const h = history('unit::report.test.ts::renders', HOUR)
    const patterns = ['FFF.', '.F.F', 'F.FF']
    for (let i = 0; i < 12 * 24; i++) {
      const hour = i % 24
      const inWindow = hour >= 10 && hour < 14
      if (inWindow && patterns[Math.floor(i / 24) % 3]![hour - 10] === 'F') h.fail()
      else h.pass()
    }
    return h
  }

  it('keeps a time-window flake flaky through four failures in a row inside its window', () => {
    // Day 13, 10:00–13:00: four failures in a row, after a clean night. The 20 runs before were clean, so the
    // recent rate alone (0.024^4) called it broken; inside the window the test fails 2 of 3 times.
    const h = windowTest().seq('.'.repeat(10) + 'FFFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.hints).toContainEqual(expect.objectContaining({ kind: 'time_of_day', fromHour: 10, hours: 4 }))
  })

  it('calls it broken once the streak goes on outside the window', () => {
    const h = windowTest().seq('.'.repeat(10) + 'FFFFFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('broken')
    expect(a.reason).toMatch(/^failed the last 6 runs in a row/)
  })

  /** Three earlier bursts with passes inside, 40 clean runs apart (2 hours apart). */
  const bursts = ('.'.repeat(40) + 'FF.F.FFF.F').repeat(3) + '.'.repeat(40)

  it('keeps a bursty flake flaky when a new burst starts with a streak', () => {
    const h = history('unit::sync.test.ts::merges', 2 * HOUR).seq(bursts + 'FFFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.hints).toContainEqual(expect.objectContaining({ kind: 'burst' }))
  })

  it('still calls a streak broken that is long for the failure rate inside the bursts (21 of 30 runs: 40 in a row)', () => {
    const h = history('unit::sync.test.ts::merges', 2 * HOUR).seq(bursts + 'F'.repeat(40))
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('broken')
  })

  it('keeps a test flaky when a new burst begins after an earlier pair, too few failures for the burst hint', () => {
    // Two failures 30 runs in, then 70 clean runs, then three in a row: with the streak, five failures in two
    // clusters of 106 runs are clustered (scan p ≈ 0.003), so the streak is judged at the pair's rate (2 of 3).
    const h = history('unit::sync.test.ts::merges', 2 * HOUR).seq('.'.repeat(30) + 'F.F' + '.'.repeat(70) + 'FFF')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
  })

  it('still calls a steady flake broken when a streak follows isolated failures', () => {
    const h = history('unit::sync.test.ts::merges', 2 * HOUR).seq(('F' + '.'.repeat(9)).repeat(8) + 'FFFFFF')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('broken')
    expect(a.reason).toMatch(/^failed the last 6 runs in a row/)
  })

  it('does not start a breakage on a revision that also passed: the streak counts from the next revision', () => {
    const h = history('unit::sync.test.ts::merges', 2 * HOUR)
      .seq('.'.repeat(20))
      .pass({ revision: 'mixed' })
      .fail({ revision: 'mixed' })
      .fail({ revision: 'mixed' })
      .fail({ revision: 'next1' })
      .fail({ revision: 'next2' })
    const early = analyzeTest(h.build(), cfg, { now: h.now })
    expect(early.verdict).toBe('flaky')
    expect(early.reason).toContain('same revision mixed')
    // The streak goes on from an episode that passed and failed on revision mixed (2 failures in 3 runs, smoothed
    // rate 2.5 / 4): a streak of 6 is that episode going on (0.625^6 = 0.06), one of 15 a breakage (0.00087).
    for (let r = 3; r <= 6; r++) h.fail({ revision: `next${r}` })
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
    for (let r = 7; r <= 14; r++) h.fail({ revision: `next${r}` })
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
    h.fail({ revision: 'next15' })
    const late = analyzeTest(h.build(), cfg, { now: h.now })
    expect(late.verdict).toBe('broken')
    expect(late.reason).toMatch(/^failed the last 15 runs in a row since revision next1/)
  })

  it('keeps a first burst flaky when its streak goes on from a pass and a fail on one revision', () => {
    // 100 clean runs, then revision b passes and fails, and 5 failures follow: the same episode, at its rate
    // (1 of 2, smoothed 0.5: 0.5^5 = 0.03), not a breakage. A clean history before it says nothing about a burst.
    const h = history('unit::sync.test.ts::first-burst', 2 * HOUR)
      .seq('.'.repeat(100))
      .pass({ revision: 'b' })
      .fail({ revision: 'b' })
    for (let r = 1; r <= 5; r++) h.fail({ revision: `c${r}` })
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
    // A regression after the same clean history, with no flaky episode before it, is broken after 3 failures.
    const g = history('unit::sync.test.ts::regression', 2 * HOUR).seq('.'.repeat(101) + 'FFF')
    expect(analyzeTest(g.build(), cfg, { now: g.now }).verdict).toBe('broken')
  })

  it('calls a test broken again after one earlier breakage and its fix: one streak is not a burst pattern', () => {
    const h = history().seq('.'.repeat(40) + 'F'.repeat(8) + '.'.repeat(60) + 'FFF')
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('broken')
  })
})

describe('verdict: fixed', () => {
  it('calls a test that stopped failing long enough ago healthy, with a fixed hint', () => {
    const h = history().seq('.F.FF.F..F.F..F.FF.F').pass({ revision: 'fix1' }).seq('.'.repeat(29))
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.reason).toMatch(/^fixed: no failures in the last 30 runs, since revision fix1/)
    expect(a.hints).toContainEqual(expect.objectContaining({ kind: 'fixed', revision: 'fix1', runsAfter: 30 }))
  })

  it('does not call a quiet spell fixed too early', () => {
    const h = history().seq('.F.FF.F..F.F..F.FF.F' + '.'.repeat(8))
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
  })

  it('counts a pass on retry as a failure when judging a fix', () => {
    const h = history().seq('.F.FF.F..F.F..F.FF.F' + '.'.repeat(20) + 'R' + '.'.repeat(5))
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
  })
})

describe('verdict: the infrastructure-failure guard', () => {
  it('leaves runs where most tests failed out of detection', () => {
    const h = history().seq('.....').fail({ runId: 'infra', revision: 'rev-shared' }).pass({ revision: 'rev-shared' })
    const summaries = [
      { runId: 'infra', total: 100, failed: 95 },
      { runId: 'r0', total: 100, failed: 1 },
    ]
    const excludedRuns = infraRunIds(summaries, cfg)
    expect([...excludedRuns]).toEqual(['infra'])
    expect(analyzeTest(h.build(), cfg, { now: h.now }).verdict).toBe('flaky')
    const a = analyzeTest(h.build(), cfg, { now: h.now, excludedRuns })
    expect(a.verdict).toBe('healthy')
    expect(a.excludedRuns).toBe(1)
    expect(a.runs).toBe(6)
  })

  it('has a configurable threshold and ignores tiny runs', () => {
    const runs = [
      { runId: 'a', total: 10, failed: 7 },
      { runId: 'b', total: 3, failed: 3 },
    ]
    expect(infraRunIds(runs, cfg).size).toBe(0)
    expect([...infraRunIds(runs, resolveAnalysisConfig({ infra: { failedShare: 0.7 } }))]).toEqual(['a'])
    expect([...infraRunIds(runs, { failedShare: 0.8, minTests: 1 })]).toEqual(['b'])
  })
})

describe('verdict: lookback', () => {
  it('ignores runs older than lookbackDays', () => {
    const h = history().seq('.F.F.F.F.F')
    const a = analyzeTest(h.build(), cfg, { now: h.now + 60 * DAY })
    expect(a.runs).toBe(0)
    expect(a.verdict).toBe('insufficient_data')
    expect(a.lastStatus).toBe('failed')
  })
})
