import { test } from 'vitest'
import { analyzeHistories, infraRunIds, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { isFailure } from '../../src/model.js'
import { generateSuite } from './generate.js'

test('perf 1M', async () => {
  let t = performance.now()
  const suite = generateSuite({ seed: 1, tests: 10_000, runs: 100, infraRuns: 2 })
  console.log('generate ms', (performance.now() - t).toFixed(0))
  const cfg = resolveAnalysisConfig()
  const histories = suite.tests.map((g) => g.history)
  const excludedRuns = infraRunIds(suite.summaries, cfg)
  for (let rep = 0; rep < 3; rep++) {
    t = performance.now()
    let fails = 0
    for (const h of histories) for (const e of h.entries) if (isFailure(e.status)) fails++
    const base = performance.now() - t
    t = performance.now()
    const out = await analyzeHistories(histories, cfg, { now: suite.timeline.now, excludedRuns })
    const ms = performance.now() - t
    const v: Record<string, number> = {}
    for (const a of out) v[a.verdict] = (v[a.verdict] ?? 0) + 1
    console.log(`rep ${rep}: analyze ${ms.toFixed(0)} ms, baseline scan ${base.toFixed(1)} ms, ratio ${(ms / base).toFixed(1)}, fails ${fails}`, JSON.stringify(v))
  }
}, 120_000)
