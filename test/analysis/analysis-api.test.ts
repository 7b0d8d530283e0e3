import { describe, expect, it } from 'vitest'
import {
  analyzeHistories,
  analyzeTest,
  DEFAULT_ANALYSIS_CONFIG,
  resolveAnalysisConfig,
  summarizeAnalyses,
  toAnalysisJson,
} from '../../src/analysis/index.js'
import type { TestHistory } from '../../src/model.js'
import { history } from './builders.js'

describe('resolveAnalysisConfig', () => {
  it('returns the seed defaults', () => {
    const cfg = resolveAnalysisConfig()
    expect(cfg.scoring).toMatchObject({
      rollingWindowSize: 50,
      minRunsForScoring: 5,
      lookbackDays: 30,
      recentFailureWindow: 7,
      quarantineThreshold: 0.6,
      investigationThreshold: 0.4,
      monitoringThreshold: 0.2,
      minConfidenceForQuarantine: 0.7,
      minConfidenceForAction: 0.5,
    })
    expect(cfg.flipRate).toEqual({ window: 10, ewmaAlpha: 0.3, ewmaWindow: 20 })
    expect(cfg.infra.failedShare).toBe(0.8)
    expect(cfg.successRate).toEqual({ days: 3, defaultBranch: 'main', passedStatuses: ['success', 'passed'] })
  })

  it('deep-merges, replaces arrays and never shares state with the defaults', () => {
    const cfg = resolveAnalysisConfig({
      scoring: { weights: { intermittency: 0.5 } },
      successRate: { passedStatuses: ['green'] },
      verdict: { brokenMinConsecutive: undefined },
    })
    expect(cfg.scoring.weights).toMatchObject({ intermittency: 0.5, rerunPassRate: 0.25 })
    expect(cfg.successRate.passedStatuses).toEqual(['green'])
    expect(cfg.verdict.brokenMinConsecutive).toBe(3)
    cfg.scoring.weights.rerunPassRate = 1
    expect(DEFAULT_ANALYSIS_CONFIG.scoring.weights.rerunPassRate).toBe(0.25)
    expect(resolveAnalysisConfig().scoring.weights.rerunPassRate).toBe(0.25)
  })
})

describe('analyzeHistories', () => {
  const cfg = resolveAnalysisConfig()
  const a = history('unit::m::a').seq('..F..F....')
  const b = history('unit::m::b').seq('..........')

  it('takes sync and async iterables and keeps scan order', async () => {
    async function* scan(): AsyncIterable<TestHistory> {
      for (const h of [a.build(), b.build()]) yield await Promise.resolve(h)
    }
    const fromAsync = await analyzeHistories(scan(), cfg, { now: a.now })
    const fromArray = await analyzeHistories([a.build(), b.build()], cfg, { now: a.now })
    expect(fromAsync.map((x) => x.testId)).toEqual(['unit::m::a', 'unit::m::b'])
    expect(fromAsync).toEqual(fromArray)
  })

  it('summarizes verdicts and classes', async () => {
    const analyses = await analyzeHistories([a.build(), b.build()], cfg, { now: a.now })
    expect(summarizeAnalyses(analyses)).toMatchObject({
      tests: 2,
      runs: 20,
      verdicts: { healthy: 1, flaky: 1, broken: 0, insufficient_data: 0 },
      flipRateClasses: { stable: 1, flaky: 1 },
      passRateClasses: { stable: 1, intermittent: 1 },
    })
  })
})

describe('toAnalysisJson', () => {
  it('prints the CLI fields in snake_case', () => {
    const cfg = resolveAnalysisConfig()
    const h = history('unit::m::a')
      .pass({ revision: 'r' })
      .fail({ revision: 'r', message: 'boom at /x.ts:1:2' })
      .seq('...')
    const json = toAnalysisJson(analyzeTest(h.build(), cfg, { now: h.now }))
    expect(Object.keys(json)).toEqual(
      expect.arrayContaining([
        'test_id',
        'runs',
        'pass_rate',
        'flip_rate',
        'ewma_flip_rate',
        'flip_rate_class',
        'score',
        'confidence',
        'recommendation',
        'pass_rate_class',
        'verdict',
        'reason',
        'evidence',
      ]),
    )
    expect(json).toMatchObject({
      test_id: 'unit::m::a',
      runs: 5,
      pass_rate: 0.8,
      flip_rate: 0.5,
      flip_rate_class: 'flaky',
      verdict: 'flaky',
      pass_rate_class: 'intermittent',
      evidence: [{ kind: 'same_revision_pass_and_fail', revision: 'r', run_ids: ['r0', 'r1'] }],
      failure_modes: [
        { signature: 'assertionerror: boom at <path>', count: 1, first_seen: '2025-01-01T06:00:00.000Z' },
      ],
      last_status: 'passed',
    })
    expect(json.recommendation).toEqual({
      action: expect.any(String),
      priority: expect.any(String),
      reason: expect.any(String),
    })
    expect(json.components).toHaveProperty('consecutive_failure_penalty')
    expect(JSON.parse(JSON.stringify(json))).toEqual(json)
  })
})
