import { describe, expect, it } from 'vitest'
import {
  analyzeTest,
  binomialUpperTail,
  failureAssociations,
  failureBurst,
  failureModes,
  newlyFlaky,
  resolveAnalysisConfig,
  type AssociationHint,
} from '../../src/analysis/index.js'
import { HOUR, history, T0, windowFlake } from './builders.js'
import { createRng } from './generate.js'

const cfg = resolveAnalysisConfig()

describe('binomialUpperTail', () => {
  it('matches hand-computed values', () => {
    expect(binomialUpperTail(3, 3, 0.5)).toBeCloseTo(0.125)
    expect(binomialUpperTail(1, 2, 0.5)).toBeCloseTo(0.75)
    expect(binomialUpperTail(0, 5, 0.1)).toBe(1)
    expect(binomialUpperTail(6, 5, 0.1)).toBe(0)
    expect(binomialUpperTail(2, 10, 0.1)).toBeCloseTo(1 - 0.9 ** 10 - 10 * 0.1 * 0.9 ** 9)
    expect(binomialUpperTail(900, 1000, 0.5)).toBeLessThan(1e-100)
  })
})

describe('failureModes', () => {
  it('groups failures by normalised message, most frequent first', () => {
    const h = history()
      .fail({ message: 'Timeout of 5000ms exceeded at /a/x.ts:1:2', errorType: 'TimeoutError' })
      .pass()
      .fail({ message: 'expected 1 to equal 2', errorType: 'AssertionError' })
      .fail({ message: 'Timeout of 7000ms exceeded at /b/x.ts:9:9', errorType: 'TimeoutError' })
      .retryPass(1, { message: 'Timeout of 6000ms exceeded at /c/x.ts:3:3', errorType: 'TimeoutError' })
    const modes = failureModes(h.build().entries)
    expect(modes).toHaveLength(2)
    expect(modes[0]).toMatchObject({
      signature: 'timeouterror: timeout of <duration> exceeded at <path>',
      count: 3,
      firstRunId: 'r0',
      lastRunId: 'r4',
      firstSeen: T0,
      lastSeen: T0 + 4 * 6 * HOUR,
      example: 'Timeout of 5000ms exceeded at /a/x.ts:1:2',
    })
    expect(modes[1]).toMatchObject({ signature: 'assertionerror: expected <value> to equal <value>', count: 1 })
  })
})

/** 100 runs spread over 4 runners; the test fails on `badRunner` with probability `p`, elsewhere with `q`. */
function runnerHistory(seed: number, p: number, q: number, badRunner = 'ci-7') {
  const rng = createRng(seed)
  const runners = ['ci-7', 'ci-8', 'ci-9', 'ci-10']
  const h = history()
  for (let i = 0; i < 100; i++) {
    const runner = runners[Math.floor(rng() * runners.length)]!
    if (rng() < (runner === badRunner ? p : q)) h.fail({ runner })
    else h.pass({ runner })
  }
  return h
}

describe('failureAssociations', () => {
  it('reports a runner that holds most failures, with a significance test', () => {
    const h = runnerHistory(1, 0.5, 0)
    const hints = failureAssociations(h.build().entries, cfg.hints)
    const runner = hints.find((x) => x.facet === 'runner')!
    expect(runner.value).toBe('ci-7')
    expect(runner.failureShare).toBe(1)
    expect(runner.pValue).toBeLessThan(0.01)
    expect(runner.message).toMatch(
      /^100% of failures \(\d+ of \d+\) on runner ci-7, which ran \d+% of executions \(p [=<] [\d.e-]+; \d+ values? tested\)$/,
    )
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.evidence).toContainEqual(expect.objectContaining({ kind: 'runner_association' }))
  })

  it('does not report chance: failures spread evenly give (almost) no association', () => {
    let reported = 0
    for (let seed = 1; seed <= 200; seed++) {
      const hints = failureAssociations(runnerHistory(seed, 0.2, 0.2).build().entries, cfg.hints)
      if (hints.some((x: AssociationHint) => x.facet === 'runner')) reported++
    }
    // alpha 0.01 family-wise: expect about 2 of 200 at most by chance.
    expect(reported).toBeLessThanOrEqual(4)
  })

  it('needs a minimum number of failures', () => {
    const h = history().seq('..........').fail({ runner: 'ci-9' }).fail({ runner: 'ci-9' }).seq('..........')
    expect(failureAssociations(h.build().entries, cfg.hints)).toEqual([])
  })

  it('reports env facets and time-of-day windows', () => {
    const h = history()
    for (let i = 0; i < 60; i++) {
      const os = i % 3 === 0 ? 'windows' : 'linux'
      if (os === 'windows' && i % 2 === 0) h.fail({ env: { os } })
      else h.pass({ env: { os } })
    }
    const hint = failureAssociations(h.build().entries, cfg.hints).find((x) => x.facet === 'env.os')!
    expect(hint.message).toMatch(
      /^100% of failures \(10 of 10\) with os=windows, which ran 33% of executions \(p [=<] [\d.e-]+; \d+ values? tested\)$/,
    )

    // Failures at 00:00, 02:00 and 04:00: the narrowest window that holds them all.
    const night = history('unit::m::night', HOUR)
    for (let i = 0; i < 96; i++) {
      if (i % 24 < 6 && i % 2 === 0) night.fail()
      else night.pass()
    }
    const tod = failureAssociations(night.build().entries, cfg.hints).find((x) => x.kind === 'time_of_day')!
    expect(tod).toMatchObject({ value: 'between 00:00 and 05:00 UTC', fromHour: 0, hours: 5 })
    expect(tod.message).toMatch(
      /^100% of failures \(12 of 12\) between 00:00 and 05:00 UTC, which had 21% of executions \(p [=<] [\d.e-]+; 552 windows tried\)$/,
    )
  })

  it('finds a window that straddles six-hour buckets, and one that wraps past midnight', () => {
    // Every hour for ten days; the test fails at 10, 11, 12 and 13 o'clock on alternate days. Buckets of six hours
    // split this 10:00–14:00 window in two and found neither half on a shorter history.
    const noon = windowFlake('unit::m::noon', 240, 10, 4)
    const a = failureAssociations(noon.build().entries, cfg.hints).find((x) => x.kind === 'time_of_day')
    expect(a).toMatchObject({ value: 'between 10:00 and 14:00 UTC', fromHour: 10, hours: 4, failures: 20 })
    const late = windowFlake('unit::m::late', 240, 22, 4, true)
    const b = failureAssociations(late.build().entries, cfg.hints).find((x) => x.kind === 'time_of_day')
    expect(b).toMatchObject({ value: 'between 22:00 and 02:00 UTC', fromHour: 22, hours: 4 })
  })

  it('names no window for failures spread over the day', () => {
    const h = history('unit::m::spread', HOUR)
    for (let i = 0; i < 240; i++) {
      if (i % 7 === 3) h.fail()
      else h.pass()
    }
    expect(failureAssociations(h.build().entries, cfg.hints).filter((x) => x.kind === 'time_of_day')).toEqual([])
  })
})

describe('failureBurst', () => {
  it('finds failures packed into a few runs', () => {
    const h = history().seq('.'.repeat(30) + 'F.FFF.FF.F' + '.'.repeat(30) + 'F' + '.'.repeat(20))
    const burst = failureBurst(h.build().entries, cfg.hints)!
    expect(burst).toMatchObject({ kind: 'burst', failures: 7, totalFailures: 8, runs: 10 })
    expect(burst.windows).toEqual([{ from: T0 + 30 * 6 * HOUR, to: T0 + 39 * 6 * HOUR, runs: 10, failures: 7 }])
    expect(burst.pValue).toBeLessThan(0.002)
    expect(burst.message).toMatch(
      /^7 of 8 failures in one burst: 2025-01-08 to 2025-01-10 \(7 of 10 runs\); the bursts hold 11% of executions \(p = 0\.\d+\)$/,
    )
  })

  it('stays quiet when failures are spread out', () => {
    const h = history().seq('....F....F....F....F....F....F....F....F....F....F')
    expect(failureBurst(h.build().entries, cfg.hints)).toBeNull()
  })
})

describe('newlyFlaky', () => {
  it('tells since which revision a stable test started failing', () => {
    const h = history().seq('.'.repeat(40)).fail({ revision: 'new1' }).seq('..F.F...FF..F.')
    const change = newlyFlaky(h.build().entries, cfg.verdict)!
    expect(change).toMatchObject({ kind: 'newly_flaky', revision: 'new1', runsBefore: 40, failuresAfter: 6 })
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.hints).toContainEqual(expect.objectContaining({ kind: 'newly_flaky', revision: 'new1' }))
  })

  it('does not claim a change from a short clean start', () => {
    const h = history().seq('.....F..F.F...F..F...F')
    expect(newlyFlaky(h.build().entries, cfg.verdict)).toBeNull()
  })
})

describe('analyzeTest: time lost, contexts and healing', () => {
  it('adds up the time of failed attempts', () => {
    const h = history()
      .fail({ failedAttemptsMs: 1000 })
      .retryPass(2, { failedAttemptsMs: 2500 })
      .pass()
      .skip({ failedAttemptsMs: 99 })
    expect(analyzeTest(h.build(), cfg, { now: h.now }).timeLostMs).toBe(3500)
  })

  it('gives pass/fail counts and a pass-rate class per env combination', () => {
    const h = history()
      .seq('....', { env: { os: 'linux', browser: 'chromium' } })
      .seq('FF.F', { env: { browser: 'webkit', os: 'linux' } })
      .seq('..')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.contexts).toEqual([
      {
        context: 'browser=chromium,os=linux',
        facets: { os: 'linux', browser: 'chromium' },
        passes: 4,
        failures: 0,
        passRate: 1,
        passRateClass: 'stable',
      },
      {
        context: 'browser=webkit,os=linux',
        facets: { browser: 'webkit', os: 'linux' },
        passes: 1,
        failures: 3,
        passRate: 0.25,
        passRateClass: 'actively_flaky',
      },
      { context: 'default', facets: {}, passes: 2, failures: 0, passRate: 1, passRateClass: 'stable' },
    ])
    expect(a.passRateClass).toBe('intermittent')
  })

  it('adds healing as evidence', () => {
    const h = history().seq('.....').pass({ healingOccurred: true })
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('healthy')
    expect(a.evidence).toEqual([{ kind: 'healing', detail: 'a locator was healed in 1 of 6 runs' }])
  })
})
