import { describe, expect, it } from 'vitest'
import { analyzeTest, infraRunIds, resolveAnalysisConfig, type TestAnalysis } from '../../src/analysis/index.js'
import type { VerdictKind } from '../../src/model.js'
import { generateHistory, generateTimeline, TRUTH, type Family, type FamilyOptions } from './generate.js'

const cfg = resolveAnalysisConfig()
const SAMPLES = 100

interface Scenario {
  name: string
  jobsPerRevision: number
  retries: number
}

// Two jobs per pipeline (a small CI matrix) gives same-revision proof; one job and no retries leaves only
// statistics, the hardest case.
const SCENARIOS: Scenario[] = [
  { name: 'two jobs per revision, no retries', jobsPerRevision: 2, retries: 0 },
  { name: 'one job per revision, no retries', jobsPerRevision: 1, retries: 0 },
  { name: 'one job per revision, 2 retries', jobsPerRevision: 1, retries: 2 },
]

interface Case {
  family: Family
  p?: number
  /** Least share of correct verdicts asserted; the measured share is printed. */
  min: number
}

const CASES: Case[] = [
  { family: 'stable', min: 1 },
  { family: 'broken', min: 0.98 },
  { family: 'flaky', p: 0.02, min: 0.4 },
  { family: 'flaky', p: 0.05, min: 0.8 },
  { family: 'flaky', p: 0.1, min: 0.9 },
  { family: 'flaky', p: 0.2, min: 0.9 },
  { family: 'flaky', p: 0.3, min: 0.9 },
  { family: 'flaky', p: 0.5, min: 0.9 },
  { family: 'flaky_one_runner', p: 0.3, min: 0.9 },
  { family: 'bursty', min: 0.85 },
  { family: 'bursty_long_gaps', min: 0.95 },
  { family: 'fixed', p: 0.05, min: 0.95 },
  { family: 'fixed', p: 0.1, min: 0.95 },
  { family: 'fixed', p: 0.15, min: 0.95 },
  { family: 'fixed', p: 0.3, min: 0.95 },
  { family: 'newly_flaky', p: 0.3, min: 0.9 },
  { family: 'branch_only', min: 0.95 },
]

function simulate(s: Scenario, c: Case): TestAnalysis[] {
  const out: TestAnalysis[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const seed = 1000 * (c.p ?? 0) + i + 1
    // A third of the runs on short feature branches, three infrastructure runs and three cancelled runs.
    const timeline = generateTimeline({
      seed,
      runs: 100,
      jobsPerRevision: s.jobsPerRevision,
      infraRuns: 3,
      cancelledRuns: 3,
      featureBranchShare: 0.3,
    })
    const opts: FamilyOptions = { family: c.family, retries: s.retries, runner: 'ci-1' }
    if (c.p !== undefined) opts.p = c.p
    const g = generateHistory(timeline, i, opts, seed * 31 + i)
    // Every test fails in an infrastructure run: the per-run summaries show it, and the guard removes it.
    const summaries = timeline.runs.map((r, k) => ({
      runId: r.runId,
      total: 50,
      failed: timeline.infra.has(k) ? 50 : 1,
    }))
    out.push(analyzeTest(g.history, cfg, { now: timeline.now, excludedRuns: infraRunIds(summaries, cfg) }))
  }
  return out
}

const share = (list: TestAnalysis[], v: VerdictKind) => list.filter((a) => a.verdict === v).length / list.length

/**
 * A real fix 45–60 runs ago, after a rate of 5–15%, has not earned its release yet (issue 27: the clean stretch
 * must be improbable at a conservative estimate of the old rate; 71 clean runs after 10 failures in 100 runs).
 * Until then the test rightly stays flaky with a `maybe_fixed` hint that says what is missing; the old
 * expectation (healthy after 40 clean runs) encoded the cap that called still-flaky tests fixed.
 */
const pendingFix = (a: TestAnalysis) => a.verdict === 'flaky' && a.hints.some((h) => h.kind === 'maybe_fixed')
const why = (list: TestAnalysis[]) =>
  list
    .filter((a) => a.verdict === 'flaky' && !pendingFix(a))
    .slice(0, 3)
    .map((a) => `  ${a.reason} / ${a.trailingPasses}`)
const shareRight = (list: TestAnalysis[], c: Case) =>
  c.family === 'fixed'
    ? list.filter((a) => a.verdict === 'healthy' || pendingFix(a)).length / list.length
    : share(list, TRUTH[c.family])

describe.each(SCENARIOS)('accuracy: $name', (scenario) => {
  const results = new Map<Case, TestAnalysis[]>()
  for (const c of CASES) results.set(c, simulate(scenario, c))

  it.each(CASES)('$family (p = $p) gets the right verdict', (c) => {
    const list = results.get(c)!
    const truth = TRUTH[c.family]
    expect(shareRight(list, c)).toBeGreaterThanOrEqual(c.min)
    // A test that is not broken is never called broken more than rarely, and broken is never called flaky.
    if (truth !== 'broken') expect(share(list, 'broken')).toBeLessThanOrEqual(0.02)
    // A broken test, and one broken on a feature branch only, is never called flaky.
    if (truth === 'broken' || c.family === 'branch_only') expect(share(list, 'flaky')).toBe(0)
  })

  it('names the runner of a runner-bound flake', () => {
    const list = results.get(CASES.find((c) => c.family === 'flaky_one_runner')!)!
    const named = list.filter((a) =>
      a.hints.some((h) => h.kind === 'facet_association' && h.facet === 'runner' && h.value === 'ci-1'),
    )
    // 0.66–0.7 measured with cancelled runs and feature branches in the timeline and the family-wise hint alpha.
    expect(named.length / list.length).toBeGreaterThanOrEqual(0.6)
  })

  it('tells when a newly flaky test started', () => {
    const list = results.get(CASES.find((c) => c.family === 'newly_flaky')!)!
    const dated = list.filter((a) => a.hints.some((h) => h.kind === 'newly_flaky'))
    expect(dated.length / list.length).toBeGreaterThanOrEqual(0.6)
  })

  it('reports precision and recall of flaky and broken', () => {
    const rows: string[] = []
    const tally = { flaky: { tp: 0, fp: 0, fn: 0 }, broken: { tp: 0, fp: 0, fn: 0 } }
    for (const c of CASES) {
      const list = results.get(c)!
      const truth = TRUTH[c.family]
      const counts: Partial<Record<VerdictKind, number>> = {}
      for (const a of list) counts[a.verdict] = (counts[a.verdict] ?? 0) + 1
      rows.push(`${`${c.family}${c.p === undefined ? '' : ` p=${c.p}`}`.padEnd(24)} ${JSON.stringify(counts)}`)
      if (c.family === 'fixed') rows.push(...why(list))
      // Low rates are reported above but left out of precision/recall: over 100 runs they are often invisible.
      if (c.p !== undefined && c.p < 0.1 && c.family === 'flaky') continue
      for (const kind of ['flaky', 'broken'] as const) {
        for (const a of list) {
          if (c.family === 'fixed' && pendingFix(a)) continue
          if (a.verdict === kind && truth === kind) tally[kind].tp++
          else if (a.verdict === kind) tally[kind].fp++
          else if (truth === kind) tally[kind].fn++
        }
      }
    }
    for (const kind of ['flaky', 'broken'] as const) {
      const t = tally[kind]
      const precision = t.tp / (t.tp + t.fp)
      const recall = t.tp / (t.tp + t.fn)
      rows.push(`${kind}: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`)
    }
    if (process.env.FLAKEWATCH_ACCURACY) console.log(`${scenario.name}\n${rows.join('\n')}`)
    for (const kind of ['flaky', 'broken'] as const) {
      const t = tally[kind]
      expect(t.tp / (t.tp + t.fp)).toBeGreaterThanOrEqual(kind === 'flaky' ? 0.97 : 0.95)
      expect(t.tp / (t.tp + t.fn)).toBeGreaterThanOrEqual(kind === 'flaky' ? 0.96 : 0.9)
    }
  })
})
