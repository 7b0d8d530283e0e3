import { describe, expect, it } from 'vitest'
import {
  analyzeHistories,
  isRelevantRun,
  passRateClass,
  resolveAnalysisConfig,
  successRate,
  successRateMap,
} from '../../src/analysis/index.js'
import { DAY, history, T0 } from './builders.js'

const cfg = resolveAnalysisConfig()

describe('successRate (quarantine blog)', () => {
  it('counts only relevant runs of the last N days', () => {
    const h = history('unit::m::a')
      .fail({ at: T0 - 10 * DAY }) // outside the 3-day window
      .pass({ branch: 'feature', jobStatus: 'failed' }) // not relevant
      .fail({ branch: 'feature', jobStatus: 'failed', pipelineStatus: 'failed' }) // not relevant
      .pass() // main
      .fail({ branch: 'feature', jobStatus: 'success' }) // the job passed
      .pass({ branch: 'feature', pipelineStatus: 'PASSED' }) // the pipeline passed
      .pass({ branch: 'feature', jobStatus: 'success' })
      .skip()
    const now = h.now
    expect(successRate(h.build(), cfg.successRate, { now })).toBe(0.75)
    expect(successRate(h.build(), { ...cfg.successRate, days: 30 }, { now })).toBe(0.6)
  })

  it('honours the configured default branch and excluded runs', () => {
    const h = history('unit::m::b').pass({ branch: 'trunk' }).fail({ branch: 'trunk', runId: 'infra' })
    const trunk = resolveAnalysisConfig({ successRate: { defaultBranch: 'trunk' } }).successRate
    expect(successRate(h.build(), cfg.successRate, { now: h.now })).toBeNull()
    expect(successRate(h.build(), trunk, { now: h.now })).toBe(0.5)
    expect(successRate(h.build(), trunk, { now: h.now, excludedRuns: new Set(['infra']) })).toBe(1)
  })

  it('decides relevance in one place', () => {
    const run = history().pass({ branch: 'feature' }).build().entries[0]!.run
    expect(isRelevantRun(run, cfg.successRate)).toBe(false)
    expect(isRelevantRun({ ...run, jobStatus: 'Success' }, cfg.successRate)).toBe(true)
  })

  it('exports { "test id": rate } for tests with relevant runs', async () => {
    const a = history('unit::m::a').seq('..F.')
    const b = history('unit::m::b').seq('..', { branch: 'feature' })
    const analyses = await analyzeHistories([a.build(), b.build()], cfg, { now: a.now })
    expect(successRateMap(analyses)).toEqual({ 'unit::m::a': 0.75 })
  })
})

describe('passRateClass (GitLabViz)', () => {
  it.each([
    [0, 0, 'stable'],
    [10, 0, 'stable'],
    [95, 5, 'stable'],
    [94, 6, 'intermittent'],
    [5, 5, 'intermittent'],
    [49, 51, 'actively_flaky'],
    [1, 99, 'actively_flaky'],
    [0, 3, 'broken'],
  ] as const)('%i passes, %i failures → %s', (pass, fail, cls) => {
    expect(passRateClass(pass, fail)).toBe(cls)
  })
})
