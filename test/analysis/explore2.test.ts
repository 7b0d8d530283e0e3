import { test } from 'vitest'
import { analyzeTest, infraRunIds, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { generateHistory, generateTimeline, type Family } from './generate.js'

test('explore2', () => {
  const cfg = resolveAnalysisConfig()
  const fams: [Family, number][] = [['flaky', 0.1], ['flaky', 0.3], ['flaky_one_runner', 0.3], ['bursty', 0]]
  for (const [family, p] of fams) {
    for (let s = 0; s < 200; s++) {
      const tl = generateTimeline({ seed: s + 1, jobsPerRevision: 2, infraRuns: 3 })
      const g = generateHistory(tl, s, { family, p, retries: 0 }, s * 31 + 7)
      const summaries = tl.runs.map((r, i) => ({ runId: r.runId, total: 10, failed: tl.infra.has(i) ? 10 : 0 }))
      const a = analyzeTest(g.history, cfg, { now: tl.now, excludedRuns: infraRunIds(summaries, cfg) })
      if (a.verdict !== 'flaky') console.log(family, p, a.verdict, a.runs, a.failures, a.reason, g.history.entries.map((e) => (e.status === 'failed' ? 'F' : '.')).join(''))
    }
  }
})
