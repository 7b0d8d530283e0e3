import { describe, expect, it } from 'vitest'
import {
  analyzeTest,
  flakinessScore,
  resolveAnalysisConfig,
  scoreConfidence,
  recommend,
} from '../../src/analysis/index.js'
import type { HistoryEntry } from '../../src/model.js'
import { DAY, HOUR, history, T0 } from './builders.js'
import { createRng } from './generate.js'

const cfg = resolveAnalysisConfig()
const RUNS = 50

/** 50 runs 8 hours apart (16 days, so the time-span factor is 1), outcome per run from `fail(i)`. */
function pattern(fail: (i: number) => 'pass' | 'fail' | 'retry', extra: (i: number) => object = () => ({})) {
  const h = history('unit::mod.test.ts::p', 8 * HOUR)
  for (let i = 0; i < RUNS; i++) {
    const o = fail(i)
    if (o === 'fail') h.fail(extra(i))
    else if (o === 'retry') h.retryPass(1, { message: 'Timeout of 5000ms exceeded', ...extra(i) })
    else h.pass(extra(i))
  }
  return h.build().entries
}

const rng = createRng(42)
const timeoutOutcomes = Array.from({ length: RUNS }, () => rng() < 0.3)
const irregular = (() => {
  // Exponential gaps (coefficient of variation ≈ 1): how stable failing lands in the seed's range.
  const r = createRng(7)
  let at = T0
  return Array.from({ length: RUNS }, () => (at += Math.max(HOUR, -Math.log(1 - r()) * 8 * HOUR)))
})()

// The seed's validation table (FlakeGuard docs/scoring-algorithm.md), and where the seed's own formulas put
// each pattern. `seed` is the seed's range; `range` is what the formulas give here. See README-deviations.md.
const TABLE: { name: string; entries: HistoryEntry[]; seed: [number, number]; range: [number, number] }[] = [
  { name: 'stable passing', entries: pattern(() => 'pass'), seed: [0, 0.1], range: [0, 0.1] },
  {
    name: 'stable failing, irregular cadence',
    entries: pattern(
      () => 'fail',
      (i) => ({ at: irregular[i] }),
    ),
    seed: [0.05, 0.15],
    range: [0.05, 0.15],
  },
  { name: 'stable failing, regular cadence', entries: pattern(() => 'fail'), seed: [0.05, 0.15], range: [0.2, 0.25] },
  {
    name: '50% alternating',
    entries: pattern((i) => (i % 2 ? 'fail' : 'pass')),
    seed: [0.65, 0.75],
    range: [0.5, 0.56],
  },
  { name: 'retry-passing (every run)', entries: pattern(() => 'retry'), seed: [0.75, 0.85], range: [0.75, 0.85] },
  {
    name: 'timeout-based (30% at random)',
    entries: pattern(
      (i) => (timeoutOutcomes[i] ? 'fail' : 'pass'),
      (i) => ({
        errorType: 'TimeoutError',
        message: `Timeout of ${5000 + i * 10}ms exceeded at /e2e/login.spec.ts:${i}:5`,
      }),
    ),
    seed: [0.55, 0.65],
    range: [0.25, 0.35],
  },
  {
    name: 'environment-dependent (fails on windows, linux/windows matrix)',
    entries: pattern(
      (i) => (i % 2 ? 'fail' : 'pass'),
      (i) => ({ env: { os: i % 2 ? 'windows' : 'linux' } }),
    ),
    seed: [0.45, 0.55],
    range: [0.45, 0.55],
  },
]

describe('flakinessScore: the seed validation table', () => {
  it.each(TABLE)('$name scores within its documented range', ({ entries, range }) => {
    const { score } = flakinessScore(entries, cfg.scoring)
    expect(score).toBeGreaterThanOrEqual(range[0])
    expect(score).toBeLessThanOrEqual(range[1])
  })

  it('lands in the seed range for the patterns the formulas can reach', () => {
    const landing = TABLE.filter((row) => row.range[0] >= row.seed[0] && row.range[1] <= row.seed[1])
    expect(landing.map((r) => r.name)).toEqual([
      'stable passing',
      'stable failing, irregular cadence',
      'retry-passing (every run)',
      'environment-dependent (fails on windows, linux/windows matrix)',
    ])
  })

  it('keeps the seed ordering: retry-passing > alternating > stable failing > stable passing', () => {
    const score = (name: string) => flakinessScore(TABLE.find((r) => r.name === name)!.entries, cfg.scoring).score
    expect(score('retry-passing (every run)')).toBeGreaterThan(score('50% alternating'))
    expect(score('50% alternating')).toBeGreaterThan(score('stable failing, regular cadence'))
    expect(score('stable failing, irregular cadence')).toBeGreaterThan(score('stable passing'))
  })

  it('scores an always-failing test below an intermittent one (consecutive-failure penalty)', () => {
    const failing = flakinessScore(
      pattern(() => 'fail'),
      cfg.scoring,
    )
    const flaky = flakinessScore(
      pattern((i) => (i % 2 ? 'fail' : 'pass')),
      cfg.scoring,
    )
    expect(failing.components.consecutiveFailurePenalty).toBe(1)
    expect(failing.score).toBeLessThan(flaky.score)
  })
})

describe('flakinessScore: components', () => {
  it('builds the attempt sequence from the counts: a pass on retry is a fail then a pass', () => {
    const { components } = flakinessScore(
      pattern(() => 'retry'),
      cfg.scoring,
    )
    expect(components.intermittency).toBe(1)
    expect(components.rerunPassRate).toBe(1)
    expect(components.failSuccessRatio).toBeCloseTo(1 - Math.exp(-1.5))
  })

  it('counts a retry that failed again as a rerun that did not pass', () => {
    const entries = history().fail({ attempts: 3, failedAttempts: 3 }).retryPass(1).build().entries
    const { components } = flakinessScore(entries, cfg.scoring)
    expect(components.rerunPassRate).toBeCloseTo(1 / 3)
  })

  it('measures message variance over normalised messages', () => {
    const same = history()
      .fail({ message: 'Timeout at /a/b.ts:1:2 after 5000ms' })
      .fail({ message: 'Timeout at /c/d.ts:9:9 after 7000ms' })
      .build().entries
    const different = history()
      .fail({ message: 'expected 1 to equal 2' })
      .fail({ message: 'socket hang up' })
      .build().entries
    expect(flakinessScore(same, cfg.scoring).components.messageVariance).toBe(0.5)
    expect(flakinessScore(different, cfg.scoring).components.messageVariance).toBe(1)
  })

  it('uses every weight from the config', () => {
    const entries = pattern((i) => (i % 2 ? 'fail' : 'pass'))
    const only = (key: string) =>
      resolveAnalysisConfig({
        scoring: {
          weights: {
            intermittency: 0,
            rerunPassRate: 0,
            failureClustering: 0,
            messageVariance: 0,
            failSuccessRatio: 0,
            consecutiveFailurePenalty: 0,
            [key]: 1,
          },
        },
      }).scoring
    const c = flakinessScore(entries, cfg.scoring).components
    expect(flakinessScore(entries, only('intermittency')).score).toBeCloseTo(c.intermittency)
    expect(flakinessScore(entries, only('failureClustering')).score).toBeCloseTo(c.failureClustering)
    expect(flakinessScore(entries, only('messageVariance')).score).toBeCloseTo(c.messageVariance)
    expect(flakinessScore(entries, only('failSuccessRatio')).score).toBeCloseTo(c.failSuccessRatio)
    expect(flakinessScore(entries, only('consecutiveFailurePenalty')).score).toBe(0)
  })
})

describe('scoreConfidence', () => {
  it('is the geometric mean of quantity, time span and quality', () => {
    // 50 runs over 16 days, failure messages and timings but no retries: quality 0.8.
    expect(
      scoreConfidence(
        pattern((i) => (i % 2 ? 'fail' : 'pass')),
        cfg.scoring,
      ),
    ).toBeCloseTo(Math.cbrt(0.8))
    expect(
      scoreConfidence(
        pattern(() => 'retry'),
        cfg.scoring,
      ),
    ).toBeCloseTo(1)
    // 10 runs over 9 × 6 hours, no failures: (10/50 · 2.25/14 · 0.6)^(1/3).
    const few = history().seq('..........').build().entries
    expect(scoreConfidence(few, cfg.scoring)).toBeCloseTo(Math.cbrt(0.2 * (2.25 / 14) * 0.6))
  })

  it('is 0 for a single run, which has no time span', () => {
    expect(scoreConfidence(history().fail().build().entries, cfg.scoring)).toBe(0)
  })
})

describe('recommend', () => {
  const base = { score: 0.7, confidence: 0.9, runs: 50, recentFailures: 5, verdict: 'flaky' as const }

  it.each([
    [{ policyReason: 'chronic (flip rate class)' }, 'quarantine', 'high'],
    [{ score: 0.85, policyReason: 'chronic (flip rate class)' }, 'quarantine', 'critical'],
    // The score alone never quarantines: only the policy does, so that the two never disagree.
    [{}, 'investigate', 'high'],
    [{ score: 0.3, policyReason: 'proven flaky' }, 'quarantine', 'high'],
    [{ confidence: 0.6 }, 'investigate', 'high'],
    [{ recentFailures: 1 }, 'investigate', 'medium'],
    [{ score: 0.45 }, 'investigate', 'medium'],
    [{ score: 0.25 }, 'monitor', 'low'],
    [{ score: 0.1 }, 'monitor', 'low'],
    [{ score: 0.1, verdict: 'healthy' }, 'stable', 'low'],
    [{ confidence: 0.3, verdict: 'healthy', score: 0.1 }, 'stable', 'low'],
    [{ runs: 3 }, 'monitor', 'low'],
    [{ verdict: 'broken' }, 'investigate', 'critical'],
    [{ verdict: 'healthy' }, 'monitor', 'low'],
  ] as const)('%o → %s (%s)', (over, action, priority) => {
    const r = recommend({ ...base, ...over }, cfg.scoring)
    expect(r.action).toBe(action)
    expect(r.priority).toBe(priority)
    expect(r.reason).not.toBe('')
  })

  it('quarantines a test that always passes on retry, through analyzeTest', () => {
    const h = history('unit::mod.test.ts::retry', 8 * HOUR)
    for (let i = 0; i < RUNS; i++) h.retryPass(1, { message: 'Timeout of 5000ms exceeded' })
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.verdict).toBe('flaky')
    expect(a.recommendation.action).toBe('quarantine')
    expect(a.score).toBeGreaterThan(0.75)
  })

  it('never quarantines a broken test', () => {
    const h = history('unit::mod.test.ts::broken', 8 * HOUR).seq('.'.repeat(20) + 'F'.repeat(30))
    const a = analyzeTest(h.build(), cfg, { now: h.now + DAY })
    expect(a.verdict).toBe('broken')
    expect(a.recommendation.action).toBe('investigate')
  })
})
