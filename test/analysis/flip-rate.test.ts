import { describe, expect, it } from 'vitest'
import {
  analyzeTest,
  classifyFlipRate,
  ewmaFlipRate,
  flipRate,
  resolveAnalysisConfig,
} from '../../src/analysis/index.js'
import { history } from './builders.js'

describe('flipRate', () => {
  it('is flips over pairs, and 0 with fewer than two runs', () => {
    expect(flipRate([])).toBe(0)
    expect(flipRate([1])).toBe(0)
    expect(flipRate([0, 1, 0, 1])).toBe(1)
    expect(flipRate([0, 0, 1, 1])).toBeCloseTo(1 / 3)
  })

  it('looks at the newest `window` runs only', () => {
    const outcomes = [1, 0, 1, 0, 1, 0, ...Array<number>(10).fill(0)]
    expect(flipRate(outcomes, 10)).toBe(0)
    expect(flipRate(outcomes, 16)).toBeCloseTo(5 / 15)
  })
})

describe('ewmaFlipRate', () => {
  it('starts from the first pair and weighs recent flips more', () => {
    expect(ewmaFlipRate([0])).toBe(0)
    expect(ewmaFlipRate([0, 1])).toBe(1)
    expect(ewmaFlipRate([0, 0, 0, 1], 0.3)).toBeCloseTo(0.3)
    expect(ewmaFlipRate([0, 1, 1, 1], 0.3)).toBeCloseTo(0.49)
  })

  it('looks at the newest `window` runs only', () => {
    const outcomes = [0, 1, 0, 1, ...Array<number>(20).fill(0)]
    expect(ewmaFlipRate(outcomes, 0.3, 20)).toBe(0)
    expect(ewmaFlipRate(outcomes, 0.3, 24)).toBeGreaterThan(0)
  })
})

describe('classifyFlipRate', () => {
  it.each([
    [0, 'stable'],
    [0.05, 'intermittent'],
    [0.2, 'intermittent'],
    [0.21, 'flaky'],
    [0.5, 'flaky'],
    [0.51, 'chronic'],
  ] as const)('%s is %s', (rate, cls) => {
    expect(classifyFlipRate(rate)).toBe(cls)
  })
})

describe('outcomes fed to the flip rate', () => {
  const cfg = resolveAnalysisConfig()

  it('leave skipped results out', () => {
    const h = history().seq('.S.S.S.S')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.runs).toBe(4)
    expect(a.skipped).toBe(4)
    expect(a.flipRate).toBe(0)
    expect(a.flipRateClass).toBe('stable')
  })

  it('count an error as a failure', () => {
    const h = history().seq('.E.E.E.E.E')
    const a = analyzeTest(h.build(), cfg, { now: h.now })
    expect(a.failures).toBe(5)
    expect(a.flipRate).toBe(1)
    expect(a.flipRateClass).toBe('chronic')
  })
})
