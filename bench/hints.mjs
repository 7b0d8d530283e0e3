// Root-cause hints on generated CI histories with known causes (test/analysis/generate-causes.ts): for each cause
// the share of its tests whose hints name it, and the share of stable and randomly flaky tests (the controls) that
// get any root-cause hint at all. Also the time the hints add to the analysis of the same histories, measured in
// the same run against the analysis with the hint tests switched off (minFailures above every test's failures).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { compileTestHelpers } from './lib/test-helpers.mjs'

const { dir, importHelper } = compileTestHelpers('hints', [
  'test/analysis/generate-causes.ts',
  'test/analysis/judge-hints.ts',
])
const gen = await importHelper('test/analysis/generate-causes.ts')
const judge = await importHelper('test/analysis/judge-hints.ts')
const { analyzeHistories, resolveAnalysisConfig } = await import('../dist/analysis/index.js')

const SEEDS = Number(process.env.BENCH_SEEDS ?? 3)
const FILES = Number(process.env.BENCH_FILES ?? 20)
const cfg = resolveAnalysisConfig()
const off = resolveAnalysisConfig({ hints: { minFailures: 1e9 } })
const tally = Object.fromEntries(gen.CAUSES.map((c) => [c, { right: 0, of: 0, controls: 0, falseHints: 0 }]))
let withHintsS = 0
let withoutS = 0
for (let seed = 1; seed <= SEEDS; seed++) {
  const suite = gen.generateCausedSuite({ seed, filesPerCause: FILES })
  const histories = suite.tests.map((t) => t.history)
  let t0 = performance.now()
  await analyzeHistories(histories, off, { now: suite.now })
  withoutS += (performance.now() - t0) / 1000
  t0 = performance.now()
  const analyses = await analyzeHistories(histories, cfg, { now: suite.now })
  withHintsS += (performance.now() - t0) / 1000
  const runAt = (i) => suite.runs[i].at
  suite.tests.forEach((t, i) => {
    const row = tally[t.cause]
    const hints = analyses[i].hints
    if (t.truth.victim) {
      row.of++
      if (judge.rightHint(t, hints, runAt)) row.right++
    } else if (t.cause === 'random' || t.cause === 'stable') {
      row.controls++
      if (judge.rootCauseHints(hints).length > 0) row.falseHints++
    }
  })
}
const line = (o) => console.log(JSON.stringify(o))
const tests = SEEDS * gen.CAUSES.length * FILES * gen.TESTS_PER_FILE
for (const cause of gen.CAUSES) {
  const r = tally[cause]
  if (r.of > 0) {
    line({
      bench: 'hints',
      metric: `right hint: ${cause} (${r.of} tests, 150 runs)`,
      value: +(r.right / r.of).toFixed(3),
      target: '>= 0.9',
    })
  }
  if (r.controls > 0) {
    line({
      bench: 'hints',
      metric: `false root-cause hints: ${cause} (${r.controls} tests)`,
      value: +(r.falseHints / r.controls).toFixed(4),
      target: '<= 0.01',
    })
  }
}
line({ bench: 'hints', metric: `analysis of ${tests} tests × 150 runs with hints, s`, value: +withHintsS.toFixed(2) })
line({ bench: 'hints', metric: 'baseline: same analysis, hint tests off, s', value: +withoutS.toFixed(2) })
line({ bench: 'hints', metric: 'ratio with hints / without', value: +(withHintsS / withoutS).toFixed(2) })
rmSync(dir, { recursive: true, force: true })
