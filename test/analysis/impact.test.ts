import { describe, expect, it } from 'vitest'
import { computeImpact, weekOf, type ImpactInput } from '../../src/analysis/impact.js'
import { periodSignals } from '../../src/analysis/period-signals.js'
import type { HistoryEntry, VerdictKind } from '../../src/model.js'
import { DAY, history, T0 } from './builders.js'

/** T0 (2025-01-01) is a Wednesday: its week began on Monday 2024-12-30; 2025-01-06 begins the next. */
const MON2 = Date.UTC(2025, 0, 6)

function input(
  testId: string,
  verdict: VerdictKind,
  entries: HistoryEntry[],
  o: { suite?: string; owners?: string[] } = {},
): ImpactInput {
  return { testId, name: testId, suite: o.suite ?? 'unit', owners: o.owners ?? [], verdict, entries }
}

const opts = (runTimes: number[], excluded: string[] = []) => ({
  excludedRuns: new Set(excluded),
  runTimes,
  brokenMin: 3,
  limit: 20,
})

describe('weekOf', () => {
  it('begins weeks on Monday, UTC', () => {
    expect(weekOf(Date.UTC(2024, 11, 30))).toBe(weekOf(Date.UTC(2025, 0, 5, 23, 59)))
    expect(weekOf(MON2)).toBe(weekOf(T0) + 1)
    expect(weekOf(MON2 - 1)).toBe(weekOf(T0))
  })
})

describe('computeImpact', () => {
  it('counts the failed attempts of flaky tests as CI time lost, per week, and nothing for broken or healthy tests', () => {
    // Flaky: a pass after two failed attempts (300 + 200 ms) in week 1, a final failure (400 ms) in week 2.
    const flaky = history('unit::a::flaky')
      .retryPass(2, { at: T0, runId: 'w1', failedAttemptsMs: 500 })
      .fail({ at: MON2 + DAY, runId: 'w2', failedAttemptsMs: 400 })
      .build().entries
    const broken = history('unit::a::broken')
      .seq('FFFF', { failedAttemptsMs: 1000 })
      .build()
      .entries.map((e, i) => ({ ...e, run: { ...e.run, runId: `b${i}`, at: MON2 + i * 1000 } }))
    const healthy = history('unit::a::healthy')
      .retryPass(1, { at: T0, runId: 'w1', failedAttemptsMs: 50 })
      .build().entries
    const impact = computeImpact(
      [
        input('unit::a::flaky', 'flaky', flaky),
        input('unit::a::broken', 'broken', broken),
        input('unit::a::healthy', 'healthy', healthy),
      ],
      opts([T0, MON2 + DAY]),
    )
    expect(
      impact.weeks.map((w) => [w.week, w.timeLostMs, w.failures, w.failedAttempts, w.passesOnRetry, w.runs]),
    ).toEqual([
      ['2024-12-30', 500, 0, 2, 1, 1],
      ['2025-01-06', 400, 1, 1, 0, 1],
    ])
    expect(impact.totals).toMatchObject({
      timeLostMs: 900,
      failures: 1,
      failedAttempts: 3,
      tests: 3,
      flaky: 1,
      broken: 1,
      runs: 2,
    })
    expect(impact.tests.map((t) => [t.testId, t.timeLostMs, t.runs])).toEqual([['unit::a::flaky', 900, 2]])
    expect(impact.costlyTests).toBe(1)
  })

  it('counts flaky and broken tests per week by their signals that week, whatever their verdict now', () => {
    // Passed on retry in week 1 (a flaky signal), healthy now.
    const was = history('unit::m::was').retryPass(1, { at: T0 }).pass({ at: MON2 }).build().entries
    // A streak of three failures that ends in week 2, with no pass that week.
    const broke = history('unit::m::broke')
      .pass({ at: T0 })
      .fail({ at: T0 + DAY })
      .fail({ at: MON2 })
      .fail({ at: MON2 + DAY })
      .build().entries
    const impact = computeImpact(
      [input('unit::m::was', 'healthy', was), input('unit::m::broke', 'broken', broke)],
      opts([T0, MON2]),
    )
    expect(impact.weeks.map((w) => [w.flakyTests, w.brokenTests])).toEqual([
      [1, 0],
      [0, 1],
    ])
    expect(impact.totals.timeLostMs).toBe(0)
    // A test that broke mid-week is broken at the end of that week, though it passed earlier in it.
    const midweek = history('unit::m::mid').pass({ at: MON2 }).seq('FFF', { at: MON2 + DAY }).build().entries
    const mid = computeImpact([input('unit::m::mid', 'broken', midweek)], opts([MON2]))
    expect(mid.weeks.map((w) => w.brokenTests)).toEqual([1])
  })

  it('leaves out skipped results and infrastructure-failure runs, and keeps empty weeks in the series', () => {
    const entries = history('unit::s::t')
      .fail({ at: T0, runId: 'infra', failedAttemptsMs: 5000 })
      .skip({ at: T0 + DAY, runId: 'sk' })
      .fail({ at: MON2 + 7 * DAY, runId: 'ok', failedAttemptsMs: 70 })
      .build().entries
    const impact = computeImpact(
      [input('unit::s::t', 'flaky', entries)],
      opts([T0, T0 + DAY, MON2 + 7 * DAY], ['infra']),
    )
    expect(impact.weeks.map((w) => [w.week, w.timeLostMs, w.runs])).toEqual([
      ['2024-12-30', 0, 2],
      ['2025-01-06', 0, 0],
      ['2025-01-13', 70, 1],
    ])
    expect(impact.tests[0]).toMatchObject({ runs: 1, failures: 1, timeLostMs: 70 })
  })

  it('groups by owner (each owner in full, unowned under null) and by suite, most time lost first', () => {
    const cost = (ms: number) => history().fail({ failedAttemptsMs: ms }).build().entries
    const impact = computeImpact(
      [
        input('unit::x::1', 'flaky', cost(100), { owners: ['@web', '@qa'] }),
        input('e2e::x::2', 'flaky', cost(300), { suite: 'e2e', owners: ['@qa'] }),
        input('e2e::x::3', 'broken', cost(999), { suite: 'e2e' }),
      ],
      opts([T0]),
    )
    expect(impact.owners.map((g) => [g.key, g.timeLostMs, g.tests, g.flaky, g.broken])).toEqual([
      ['@qa', 400, 2, 2, 0],
      ['@web', 100, 1, 1, 0],
      [null, 0, 1, 0, 1],
    ])
    expect(impact.suites.map((g) => [g.key, g.timeLostMs, g.tests])).toEqual([
      ['e2e', 300, 2],
      ['unit', 100, 1],
    ])
    // The totals count a test once, however many owners it has.
    expect(impact.totals.timeLostMs).toBe(400)
  })

  it('lists at most `limit` tests, most costly first, and says how many cost anything', () => {
    const inputs = [10, 30, 20].map((ms, i) =>
      input(`unit::l::${i}`, 'flaky', history().fail({ failedAttemptsMs: ms }).build().entries),
    )
    const impact = computeImpact(inputs, { ...opts([T0]), limit: 2 })
    expect(impact.tests.map((t) => t.timeLostMs)).toEqual([30, 20])
    expect(impact.costlyTests).toBe(3)
  })

  it('has no weeks and zero totals without runs', () => {
    const impact = computeImpact([], opts([]))
    expect(impact.weeks).toEqual([])
    expect(impact.totals).toMatchObject({ tests: 0, timeLostMs: 0, runs: 0 })
  })
})

describe('periodSignals', () => {
  it('finds a flaky signal from one revision that both passed and failed, in the period it happened', () => {
    const entries = history()
      .pass({ revision: 'x', at: T0 })
      .fail({ revision: 'x', at: T0 + 1 })
      .build().entries
    expect(periodSignals(entries, new Set(), 3, (at) => Math.floor(at / DAY))).toEqual([Math.floor(T0 / DAY), 1, 0])
  })
})
