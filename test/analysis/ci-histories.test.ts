// Issue 27 on generated CI histories the analysis was not tuned on: seeds, lengths, CI shapes and class mixes
// held out from development (which used seeds 101–404). The figures are printed with FLAKEWATCH_ACCURACY=1 and
// recorded in bench/RESULTS.md by bench/detection.mjs.
import { describe, expect, it } from 'vitest'
import {
  evaluateCi,
  hardConfigs,
  heldOutConfigs,
  ratio,
  replayCi,
  type CiEvaluation,
  type Ratio,
} from './evaluate-ci.js'
import { HARD_CI_MIX } from './generate-ci.js'

const HELD_OUT = heldOutConfigs(9000, 300)

function sum(list: CiEvaluation[], pick: (e: CiEvaluation) => Ratio): Ratio {
  return list.reduce((t, e) => ({ hits: t.hits + pick(e).hits, of: t.of + pick(e).of }), { hits: 0, of: 0 })
}

describe('detection on held-out generated CI histories', () => {
  const results = HELD_OUT.map((c) => ({ c, e: evaluateCi(c) }))

  it.each(HELD_OUT.map((c, i) => [c.name, i] as const))('%s: flaky precision ≈ 1 and recall ≥ 0.95', (_, i) => {
    const { e } = results[i]!
    if (process.env.FLAKEWATCH_ACCURACY) console.log(HELD_OUT[i]!.name, JSON.stringify(e))
    expect(ratio(e.flakyPrecision)).toBeGreaterThanOrEqual(0.99)
    expect(ratio(e.flakyRecall)).toBeGreaterThanOrEqual(0.95)
    expect(e.flakyRecall.of).toBeGreaterThan(50)
  })

  it.each(HELD_OUT.map((c, i) => [c.name, i] as const))(
    '%s: uncapped quarantine auto covers ≥ 0.95 of the flaky tests and nothing else',
    (_, i) => {
      const { e } = results[i]!
      expect(ratio(e.quarantineCoverage)).toBeGreaterThanOrEqual(0.95)
      expect(e.quarantinedNotFlaky).toBe(0)
    },
  )

  it('calls few tests fixed that are still flaky, and releases real fixes within the bound', () => {
    const all = results.map((r) => r.e)
    const called = all.reduce((s, e) => s + e.calledFixed, 0)
    const stillFlaky = all.reduce((s, e) => s + e.calledFixedStillFlaky, 0)
    expect(called).toBeGreaterThan(50)
    expect(stillFlaky / called).toBeLessThanOrEqual(0.02)
    const released = sum(all, (e) => e.realFixesReleased)
    expect(released.of).toBeGreaterThan(20)
    expect(ratio(released)).toBeGreaterThanOrEqual(0.95)
  })

  it('names the rare runner and the time window for at least 90% of their tests, and most bursts', () => {
    const all = results.map((r) => r.e)
    expect(ratio(sum(all, (e) => e.runnerHints))).toBeGreaterThanOrEqual(0.9)
    // Windows of 2–8 hours at any start: 0.96 measured; fixed 6-hour buckets found 0.6–0.8.
    expect(ratio(sum(all, (e) => e.windowHints))).toBeGreaterThanOrEqual(0.9)
    // 0.88 measured: a burst hint is left out when the newest burst makes the test broken, or one burst is all.
    expect(ratio(sum(all, (e) => e.burstHints))).toBeGreaterThanOrEqual(0.85)
  })
})

describe('detection on the harder mix, held out', () => {
  // Rare runners at 5–9% failing a test 10–30% of its runs there, worker-count flakes at 5–15%, bursts 80–200 runs
  // apart, windows across the old 6-hour bucket boundaries, flakes at 2–5%: seeds 9301–9304, never tuned on.
  const HARD = hardConfigs(9300, 300)
  const results = HARD.map((c) => evaluateCi(c))

  it.each(HARD.map((c, i) => [c.name, i] as const))(
    '%s: flaky, broken and healthy each at precision and recall ≥ 0.97; quarantine covers ≥ 0.95 of the flaky',
    (_, i) => {
      const e = results[i]!
      if (process.env.FLAKEWATCH_ACCURACY) console.log(HARD[i]!.name, JSON.stringify(e.verdicts))
      for (const v of ['flaky', 'broken', 'healthy'] as const) {
        expect(ratio(e.verdicts[v].precision)).toBeGreaterThanOrEqual(0.97)
        expect(ratio(e.verdicts[v].recall)).toBeGreaterThanOrEqual(0.97)
      }
      expect(e.verdicts.flaky.recall.of).toBeGreaterThan(100)
      expect(ratio(e.quarantineCoverage)).toBeGreaterThanOrEqual(0.95)
      expect(e.quarantinedNotFlaky).toBe(0)
    },
  )

  it('names the rare runner, the window and the bursts for at least 90% of the tests with enough failures', () => {
    expect(ratio(sum(results, (e) => e.runnerHints))).toBeGreaterThanOrEqual(0.9)
    expect(ratio(sum(results, (e) => e.windowHints))).toBeGreaterThanOrEqual(0.9)
    expect(ratio(sum(results, (e) => e.burstHints))).toBeGreaterThanOrEqual(0.85)
  })

  it('replayed run by run: no flake released as fixed, at most a quarter of window or burst flakes released as broken', () => {
    const { counts } = replayCi({ seed: 9306, tests: 40, runs: 300, mix: HARD_CI_MIX })
    const steady = counts.filter((c) =>
      ['low_rate', 'random', 'rare_runner', 'workers', 'rare_runner_few', 'workers_low_rate'].includes(c.cls),
    )
    expect(steady.length).toBeGreaterThan(5)
    for (const c of steady) expect(c.reasons.filter((r) => r.startsWith('fixed:'))).toEqual([])
    const clustered = counts.filter((c) =>
      ['time_window', 'bursty', 'bursty_long_gaps', 'window_straddling'].includes(c.cls),
    )
    // A first burst and its quiet gap are one short episode: not a fix (docs/analysis.md, requirement 5).
    for (const c of clustered) expect(c.reasons.filter((r) => r.startsWith('fixed:'))).toEqual([])
    const broken = clustered.reduce((s, c) => s + c.reasons.filter((r) => r.startsWith('now broken')).length, 0)
    expect(broken).toBeLessThanOrEqual(Math.ceil(clustered.length / 4))
    for (const c of counts) if (c.cls === 'stable' || c.cls === 'broken') expect(c.quarantined).toBe(0)
    // 40 tests analysed after each of 300 runs: about 12 s alone, more on a busy machine.
  }, 120_000)
})

describe('quarantine auto replayed one run at a time', () => {
  // 60 tests over 300 runs, `quarantine auto` after every run: about 10 s.
  const { tests, counts } = replayCi({ seed: 9005, tests: 60, runs: 300 })
  if (process.env.FLAKEWATCH_ACCURACY) {
    for (const c of counts) if (c.quarantined > 0) console.log(c.cls, c.quarantined, c.released, c.reasons.join(' | '))
  }

  it('never quarantines a stable or broken test', () => {
    for (const c of counts) if (c.cls === 'stable' || c.cls === 'broken') expect(c.quarantined).toBe(0)
  })

  it('releases a real fix once, after the fix, and a steady flake never as fixed', () => {
    counts.forEach((c, i) => {
      const t = tests[i]!
      if (c.cls === 'fixed_for_real') {
        expect(c.quarantined).toBeGreaterThanOrEqual(1)
        expect(c.reasons.at(-1)).toMatch(/^fixed: /)
      }
      // A flake at a steady rate, wherever it lives, is never released as fixed: only a failure streak long
      // enough to look like a breakage lets it out (to be seen), and the next pass brings it back.
      if (['low_rate', 'random', 'rare_runner', 'workers'].includes(c.cls)) {
        expect(c.quarantined).toBeGreaterThanOrEqual(1)
        for (const r of c.reasons) expect(r).toMatch(/^now broken: /)
      }
      expect(t.cls).toBe(c.cls)
    })
    const fixes = counts.filter((c) => c.cls === 'fixed_for_real')
    expect(fixes.length).toBeGreaterThan(0)
    expect(fixes.filter((c) => c.quarantined === 1 && c.released === 1).length / fixes.length).toBeGreaterThanOrEqual(
      0.75,
    )
  })
})
