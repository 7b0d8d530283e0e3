import { test } from 'vitest'
import { analyzeTest, infraRunIds, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { generateHistory, generateTimeline, type Family } from './generate.js'

test('explore', () => {
  const cfg = resolveAnalysisConfig()
  for (const jobs of [1, 2]) {
    for (const retries of [0, 2]) {
      const rows: string[] = []
      const fams: [Family, number][] = [['stable', 0], ['broken', 0], ['flaky', 0.02], ['flaky', 0.05], ['flaky', 0.1], ['flaky', 0.3], ['flaky', 0.5], ['flaky_one_runner', 0.3], ['bursty', 0], ['fixed', 0.3], ['newly_flaky', 0.3]]
      for (const [family, p] of fams) {
        const counts: Record<string, number> = {}
        for (let s = 0; s < 200; s++) {
          const tl = generateTimeline({ seed: s + 1, jobsPerRevision: jobs, infraRuns: 3 })
          const g = generateHistory(tl, s, { family, p, retries }, s * 31 + 7)
          const summaries = tl.runs.map((r, i) => ({ runId: r.runId, total: 10, failed: tl.infra.has(i) ? 10 : 0 }))
          const a = analyzeTest(g.history, cfg, { now: tl.now, excludedRuns: infraRunIds(summaries, cfg) })
          counts[a.verdict] = (counts[a.verdict] ?? 0) + 1
        }
        rows.push(`${family}@${p}: ${JSON.stringify(counts)}`)
      }
      console.log(`jobs=${jobs} retries=${retries}\n` + rows.join('\n'))
    }
  }
})
