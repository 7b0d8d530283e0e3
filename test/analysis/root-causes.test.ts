import { describe, expect, it } from 'vitest'
import {
  analyzeHistories,
  burstScan,
  clusterCountTail,
  hypergeometricUpperTail,
  numericFacetHints,
  orderDependency,
  resolveAnalysisConfig,
  timeoutHint,
  toAnalysisJson,
  type OrderSeries,
} from '../../src/analysis/index.js'
import { history } from './builders.js'
import { createRng } from './generate.js'
import { CAUSES, generateCausedSuite, type CausedSuite } from './generate-causes.js'
import { rightHint, rootCauseHints } from './judge-hints.js'

const cfg = resolveAnalysisConfig()

async function tally(suite: CausedSuite) {
  const analyses = await analyzeHistories(
    suite.tests.map((t) => t.history),
    cfg,
    { now: suite.now },
  )
  const rows: Record<string, { right: number; of: number; controls: number; falseHints: number }> = {}
  suite.tests.forEach((t, i) => {
    const row = (rows[t.cause] ??= { right: 0, of: 0, controls: 0, falseHints: 0 })
    if (t.truth.victim) {
      row.of++
      if (rightHint(t, analyses[i]!.hints, (k) => suite.runs[k]!.at)) row.right++
    } else {
      row.controls++
      if (rootCauseHints(analyses[i]!.hints).length > 0) row.falseHints++
    }
  })
  return { rows, analyses }
}

describe('root-cause hints on generated histories (bench/hints.mjs has the large version)', () => {
  it('names each cause for at least 90% of its tests, and gives no stable or random test a hint', async () => {
    const { rows } = await tally(generateCausedSuite({ seed: 7, filesPerCause: 2 }))
    for (const cause of CAUSES) {
      const row = rows[cause]!
      if (row.of > 0) expect(row.right / row.of, cause).toBeGreaterThanOrEqual(0.9)
    }
    expect(rows.random!.controls + rows.stable!.controls).toBe(24)
    expect(rows.random!.falseHints + rows.stable!.falseHints + rows.order!.falseHints).toBe(0)
  })

  it('names the polluter of order-dependent tests, with its evidence', async () => {
    const suite = generateCausedSuite({ seed: 11, filesPerCause: 10, causes: ['order'] })
    const { rows, analyses } = await tally(suite)
    expect(rows.order!.right / rows.order!.of).toBeGreaterThanOrEqual(0.9)
    const victim = analyses.find((a) => a.testId === 'unit::order-0.test.ts::t1')!
    const json = toAnalysisJson(victim).hints.find((h) => h.kind === 'order_dependency')!
    expect(json).toMatchObject({ polluter: 'unit::order-0.test.ts::t0', polluter_name: 't0', candidates: 5 })
    expect(json.failure_share).toBeGreaterThan(0.9)
    expect(json.p_value).toBeLessThan(0.002)
    expect(json.message).toMatch(/^fails after "t0" ran before it in the same run: \d+ of \d+ failures/)
  })
})

describe('orderDependency', () => {
  const series = (name: string, positions: number[], failed: number[] = positions.map(() => 0)): OrderSeries => ({
    test: { testId: `unit::f.test.ts::${name}`, suite: 'unit', module: 'f.test.ts', name, file: null },
    runs: positions.map((_, i) => i),
    positions,
    failed,
  })

  it('needs the order to vary: a polluter that always runs first cannot be told from the file', () => {
    const victim = series('v', [1, 1, 1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 0, 1, 0, 1])
    expect(orderDependency(victim, [series('p', [0, 0, 0, 0, 0, 0, 0, 0]), victim], cfg.hints)).toBeNull()
  })

  it('reports failures that come only after one other test, corrected for the candidates', () => {
    const rng = createRng(3)
    const n = 60
    const p = [...Array(n)].map(() => (rng() < 0.5 ? 0 : 2))
    const o = [...Array(n)].map(() => (rng() < 0.5 ? 0 : 2))
    const failed = p.map((x) => (x === 0 && rng() < 0.6 ? 1 : 0))
    const hint = orderDependency(
      series(
        'v',
        p.map(() => 1),
        failed,
      ),
      [series('p', p), series('o', o)],
      cfg.hints,
    )!
    expect(hint.polluter).toBe('unit::f.test.ts::p')
    expect(hint).toMatchObject({ failureShare: 1, failRateOtherwise: 0, candidates: 2 })
    expect(hint.pValue).toBeLessThan(1e-4)
  })
})

describe('hypergeometricUpperTail', () => {
  it('matches hand-computed values', () => {
    expect(hypergeometricUpperTail(3, 6, 3, 3)).toBeCloseTo(1 / 20)
    expect(hypergeometricUpperTail(0, 6, 3, 3)).toBe(1)
    expect(hypergeometricUpperTail(2, 4, 2, 2)).toBeCloseTo(1 / 6)
    expect(hypergeometricUpperTail(4, 6, 3, 3)).toBe(0)
  })
})

describe('timeoutHint', () => {
  it('finds the ceiling, the slow runners and the duration trend', () => {
    const h = history()
    const rng = createRng(5)
    for (let i = 0; i < 90; i++) {
      const runner = `ci-${1 + (i % 6)}`
      const slow = runner === 'ci-5' || runner === 'ci-6'
      const ms = (slow ? 27_000 : 19_000) * (1 + (0.4 * i) / 90) * (0.95 + rng() * 0.1)
      if (ms >= 30_000) h.fail({ runner, durationMs: 30_000 + Math.floor(rng() * 100), message: 'timed out' })
      else h.pass({ runner, durationMs: Math.round(ms) })
    }
    const hint = timeoutHint(h.build().entries, cfg.hints)!
    expect(hint.ceilingMs).toBeGreaterThanOrEqual(30_000)
    expect(hint.slowRunners.sort()).toEqual(['ci-5', 'ci-6'])
    expect(hint.failureShare).toBe(1)
    expect(hint.message).toMatch(
      /^times out at 30 s: (\d+) of \1 failures at that duration \(±5%\), which passes reach in 0% of executions \(p < 0\.0001\); \1 of \1 on the 2 slowest runners \(ci-\d, ci-\d\), where its median duration is \d+ s \(p [=<] [\d.e-]+\); its median duration rose from \d+ s to \d+ s$/,
    )
  })

  it('stays quiet when failures take as long as passes', () => {
    const h = history()
    const rng = createRng(6)
    for (let i = 0; i < 90; i++) {
      const durationMs = 100 + Math.floor(rng() * 100)
      if (rng() < 0.2) h.fail({ durationMs })
      else h.pass({ durationMs })
    }
    expect(timeoutHint(h.build().entries, cfg.hints)).toBeNull()
  })
})

describe('numericFacetHints', () => {
  it('tests ordered values: fails when workers ≥ 6', () => {
    const h = history()
    const rng = createRng(8)
    for (let i = 0; i < 100; i++) {
      const workers = [1, 2, 4, 6, 8][i % 5]!
      if (workers >= 6 && rng() < 0.5) h.fail({ env: { workers: String(workers) } })
      else h.pass({ env: { workers: String(workers) } })
    }
    const [hint] = numericFacetHints(h.build().entries, cfg.hints)
    expect(hint).toMatchObject({ facet: 'env.workers', direction: '>=', threshold: 6, failureShare: 1 })
    expect(hint!.executionShare).toBeCloseTo(0.4)
    expect(hint!.message).toMatch(/^fails when workers ≥ 6: \d+ of \d+ failures \(100%\) in 40% of executions \(p/)
  })

  it('leaves facets with words alone', () => {
    const h = history().seq('F.F.F.F.F.', { env: { browser: 'webkit' } })
    expect(numericFacetHints(h.build().entries, cfg.hints)).toEqual([])
  })
})

describe('burstScan', () => {
  it('does not call random failures a burst (about alpha of them at most)', () => {
    let bursts = 0
    for (let seed = 1; seed <= 200; seed++) {
      const rng = createRng(seed)
      const outcomes = Uint8Array.from({ length: 120 }, () => (rng() < 0.15 ? 1 : 0))
      if (burstScan(outcomes, 0.01) !== null) bursts++
    }
    expect(bursts).toBeLessThanOrEqual(5)
  })
})

describe('clusterCountTail', () => {
  // Every placement of f failures among n runs, enumerated: the share that forms at most `observed` clusters.
  function enumerated(n: number, f: number, observed: number, gap: number): number {
    let all = 0
    let asFew = 0
    const walk = (from: number, picked: number[]) => {
      if (picked.length === f) {
        let clusters = 1
        for (let i = 1; i < f; i++) if (picked[i]! - picked[i - 1]! - 1 > gap) clusters++
        all++
        if (clusters <= observed) asFew++
        return
      }
      for (let i = from; i < n; i++) walk(i + 1, [...picked, i])
    }
    walk(0, [])
    return asFew / all
  }

  it('equals the share of all placements with as few clusters', () => {
    for (const gap of [0, 2])
      for (const n of [6, 11])
        for (let f = 1; f <= n; f++)
          for (let observed = 0; observed <= f; observed++)
            expect(clusterCountTail(n, f, observed, gap)).toBeCloseTo(enumerated(n, f, observed, gap), 12)
  })

  it('stops summing once the probability reaches the level asked about', () => {
    const full = clusterCountTail(100, 20, 12, 2)
    expect(full).toBeGreaterThan(0.05)
    const bounded = clusterCountTail(100, 20, 12, 2, 0.05)
    expect(bounded).toBeGreaterThanOrEqual(0.05)
    expect(bounded).toBeLessThan(full)
  })
})
