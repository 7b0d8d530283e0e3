/**
 * The evaluation of issue 27 on generated CI histories (`generate-ci.ts`): flaky precision and recall, what an
 * uncapped `quarantine auto` covers, how many tests called fixed are still flaky, how many real fixes are released,
 * whether the runner, time-window and burst hints name the truth, beside a flip-rate-only baseline. Pure: the
 * accuracy test asserts on it and bench/detection.mjs prints it.
 */
import { analyzeTest, resolveAnalysisConfig, type TestAnalysis } from '../../src/analysis/index.js'
import { DEFAULTS } from '../../src/config/defaults.js'
import { policyTest } from '../../src/quarantine/from-analysis.js'
import { decideQuarantine } from '../../src/quarantine/policy.js'
import { isFailure } from '../../src/model.js'
import type { QuarantineRecord } from '../../src/store/store.js'
import { FIXED_MIN_AFTER, generateCiSuite, HARD_CI_MIX, type CiSuiteOptions, type CiTest } from './generate-ci.js'

export interface Ratio {
  hits: number
  of: number
}

export interface CiEvaluation {
  tests: number
  flakyPrecision: Ratio
  flakyRecall: Ratio
  /** Uncapped `quarantine auto` on a fresh store: the flaky tests it quarantines, and the others it does. */
  quarantineCoverage: Ratio
  quarantinedNotFlaky: number
  /** Tests whose verdict is a fix (a `fixed` hint), and of them those still flaky in truth. */
  calledFixed: number
  calledFixedStillFlaky: number
  /** Real fixes (at least FIXED_MIN_AFTER runs ago) that are healthy now. */
  realFixesReleased: Ratio
  runnerHints: Ratio
  windowHints: Ratio
  burstHints: Ratio
  /** Runner, window and burst tests left out of the hint figures: fewer troubled runs than a hint needs. */
  tooFewForHint: number
  /** The baseline: flaky when the flip rate is above zero over the last `flipRate.window`-run windows' class. */
  baselinePrecision: Ratio
  baselineRecall: Ratio
  /**
   * Precision and recall of each verdict against the truth, for flakewatch and for the flip-rate-only baseline
   * (flaky as above; otherwise broken when the newest run failed, healthy when it passed). Left out of all three:
   * flaky tests that failed in fewer than two runs, and real fixes younger than `FIXED_MIN_AFTER` runs.
   */
  verdicts: Record<JudgedVerdict, { precision: Ratio; recall: Ratio }>
  baselineVerdicts: Record<JudgedVerdict, { precision: Ratio; recall: Ratio }>
  /** Missed flaky tests by class, and their reasons (a few), for reading. */
  missed: Record<string, number>
  /** Flaky tests that failed in fewer than two runs: invisible, left out of recall and coverage. */
  invisible: number
  missedReasons: string[]
}

const cfg = resolveAnalysisConfig()

export type JudgedVerdict = 'flaky' | 'broken' | 'healthy'
const JUDGED: JudgedVerdict[] = ['flaky', 'broken', 'healthy']

function confusion(): Record<JudgedVerdict, { precision: Ratio; recall: Ratio }> {
  const r = {} as Record<JudgedVerdict, { precision: Ratio; recall: Ratio }>
  for (const v of JUDGED) r[v] = { precision: { hits: 0, of: 0 }, recall: { hits: 0, of: 0 } }
  return r
}

function tally(c: Record<JudgedVerdict, { precision: Ratio; recall: Ratio }>, said: string, truth: string): void {
  if (said in c) {
    c[said as JudgedVerdict].precision.of++
    if (said === truth) c[said as JudgedVerdict].precision.hits++
  }
  c[truth as JudgedVerdict].recall.of++
  if (said === truth) c[truth as JudgedVerdict].recall.hits++
}

export function ratio(r: Ratio): number {
  return r.of === 0 ? 1 : r.hits / r.of
}

/** Analyses one generated suite as of its newest run and scores the result against the truth. */
export function evaluateCi(opts: CiSuiteOptions): CiEvaluation {
  const suite = generateCiSuite(opts)
  const analyses = suite.tests.map((t) => analyzeTest(t.history, cfg, { now: suite.now }))
  return score(suite.tests, analyses, suite.now)
}

function score(tests: CiTest[], analyses: TestAnalysis[], now: number): CiEvaluation {
  const e: CiEvaluation = {
    tests: tests.length,
    flakyPrecision: { hits: 0, of: 0 },
    flakyRecall: { hits: 0, of: 0 },
    quarantineCoverage: { hits: 0, of: 0 },
    quarantinedNotFlaky: 0,
    calledFixed: 0,
    calledFixedStillFlaky: 0,
    realFixesReleased: { hits: 0, of: 0 },
    runnerHints: { hits: 0, of: 0 },
    windowHints: { hits: 0, of: 0 },
    burstHints: { hits: 0, of: 0 },
    tooFewForHint: 0,
    baselinePrecision: { hits: 0, of: 0 },
    baselineRecall: { hits: 0, of: 0 },
    verdicts: confusion(),
    baselineVerdicts: confusion(),
    missed: {},
    invisible: 0,
    missedReasons: [],
  }
  const policy = { ...DEFAULTS.quarantine, maxQuarantined: Number.MAX_SAFE_INTEGER }
  const decision = decideQuarantine(analyses.map(policyTest), [], policy, now)
  const quarantined = new Set(decision.quarantine.map((q) => q.testId))
  tests.forEach((t, i) => {
    const a = analyses[i]!
    const flaky = t.truth === 'flaky'
    // A real fix not yet old enough to be judged is left out of precision: it may rightly still be held.
    const judged = t.cls !== 'fixed_for_real'
    if (a.verdict === 'flaky' && judged) {
      e.flakyPrecision.of++
      if (flaky) e.flakyPrecision.hits++
      else if (e.missedReasons.length < 12) e.missedReasons.push(`false flaky ${t.cls}: ${a.reason}`)
    }
    // A flaky test that failed in fewer than two runs looks like a healthy one to any method: left out of recall.
    const visible = troubledRuns(t) >= 2
    if (flaky && !visible) e.invisible++
    if (flaky && visible) {
      e.flakyRecall.of++
      if (a.verdict === 'flaky') e.flakyRecall.hits++
      else {
        e.missed[t.cls] = (e.missed[t.cls] ?? 0) + 1
        if (e.missedReasons.length < 12) e.missedReasons.push(`${t.cls}: ${a.verdict}: ${a.reason}`)
      }
      e.quarantineCoverage.of++
      if (quarantined.has(t.history.test.testId)) e.quarantineCoverage.hits++
    } else if (!flaky && quarantined.has(t.history.test.testId) && judged) e.quarantinedNotFlaky++
    if (a.hints.some((h) => h.kind === 'fixed')) {
      e.calledFixed++
      if (flaky) e.calledFixedStillFlaky++
    }
    if (t.cls === 'fixed_for_real' && t.history.entries.length - t.changeAt! >= FIXED_MIN_AFTER) {
      e.realFixesReleased.of++
      if (a.verdict === 'healthy') e.realFixesReleased.hits++
    }
    const baseline = a.flipRateClass !== 'stable' || a.ewmaFlipRate > 0
    const young = t.cls === 'fixed_for_real' && t.history.entries.length - t.changeAt! < FIXED_MIN_AFTER
    if (!young && (!flaky || visible)) {
      tally(e.verdicts, a.verdict, t.truth)
      const last = t.history.entries.at(-1)
      const naive = baseline ? 'flaky' : last !== undefined && isFailure(last.status) ? 'broken' : 'healthy'
      tally(e.baselineVerdicts, naive, t.truth)
    }
    if (baseline && judged) {
      e.baselinePrecision.of++
      if (flaky) e.baselinePrecision.hits++
    }
    if (flaky && visible) {
      e.baselineRecall.of++
      if (baseline) e.baselineRecall.hits++
    }
    hintScores(t, a, e)
  })
  return e
}

/**
 * A hint is right when the first hint of its kind names the truth. Tests with fewer troubled runs than a hint
 * needs (`hints.minFailures`) are left out: no hint is given on so little, by design.
 */
function hintScores(t: CiTest, a: TestAnalysis, e: CiEvaluation): void {
  if (troubledRuns(t) < cfg.hints.minFailures) {
    if (t.runner !== undefined || t.window !== undefined || t.burstRuns !== undefined) e.tooFewForHint++
    return
  }
  if (t.cls === 'rare_runner' || t.cls === 'rare_runner_few') {
    e.runnerHints.of++
    const h = a.hints.find((x) => x.kind === 'facet_association' && x.facet === 'runner')
    if (h !== undefined && h.kind === 'facet_association' && h.value === t.runner) e.runnerHints.hits++
    else if (e.missedReasons.length < 12) {
      const on = t.history.entries.filter((x) => x.run.runnerId === t.runner)
      const f = on.filter((x) => x.failedAttempts > 0).length
      e.missedReasons.push(
        `no runner hint: ${f} of ${troubledRuns(t)} failures in ${on.length} of ${t.history.entries.length} runs on it`,
      )
    }
  }
  if (t.cls === 'time_window' || t.cls === 'window_straddling') {
    e.windowHints.of++
    const h = a.hints.find((x) => x.kind === 'time_of_day')
    if (h !== undefined && h.kind === 'time_of_day' && windowMatches(h, t.window!)) {
      e.windowHints.hits++
    }
  }
  if (t.cls === 'bursty' || t.cls === 'bursty_long_gaps') {
    e.burstHints.of++
    const h = a.hints.find((x) => x.kind === 'burst')
    if (h !== undefined && h.kind === 'burst') {
      // Right when at least 90% of the failures in the named windows lie in true bursts.
      const entries = t.history.entries
      const index = new Map(entries.map((x, i) => [x.run.at, i]))
      let inside = 0
      let all = 0
      for (const w of h.windows) {
        for (let i = index.get(w.from)!; i <= index.get(w.to)!; i++) {
          if (entries[i]!.failedAttempts === 0) continue
          all++
          if (t.burstRuns!.has(i)) inside++
        }
      }
      if (all > 0 && inside / all >= 0.9) e.burstHints.hits++
    }
  }
}

/** The hint's window; from its label when it has no hours (the bucketed hints before issue 27). */
function hintWindow(h: { fromHour?: number; hours?: number; value: string }): { fromHour: number; hours: number } {
  if (h.fromHour !== undefined && h.hours !== undefined) return { fromHour: h.fromHour, hours: h.hours }
  const m = /(\d\d):00 and (\d\d):00/.exec(h.value)
  if (m === null) return { fromHour: 0, hours: 24 }
  const from = Number(m[1])
  return { fromHour: from, hours: (Number(m[2]) - from + 24) % 24 || 24 }
}

function troubledRuns(t: CiTest): number {
  let k = 0
  for (const x of t.history.entries) if (x.failedAttempts > 0) k++
  return k
}

/** The named window overlaps the true one for at least half of the wider of the two. */
export function windowMatches(
  h: { fromHour?: number; hours?: number; value: string },
  truth: { fromHour: number; hours: number },
): boolean {
  const { fromHour, hours } = hintWindow(h)
  let overlap = 0
  for (let k = 0; k < hours; k++) {
    const hour = (fromHour + k) % 24
    if ((hour - truth.fromHour + 24) % 24 < truth.hours) overlap++
  }
  return overlap >= Math.max(hours, truth.hours) / 2
}

/** Per test: how often `quarantine auto` put it in and let it out over the replay. */
export interface ReplayCounts {
  cls: CiTest['cls']
  quarantined: number
  released: number
  /** Run index of the first release, or null. */
  releasedAt: number | null
  /** Why it was released, each time. */
  reasons: string[]
  /** Verdict changes between consecutive runs of the replay, and the verdicts it went through (`flaky>broken>…`). */
  verdictChanges: number
  verdicts: string[]
  /**
   * The flip-rate-only baseline over the same replay: the test is held while its flip rate is above zero (as in
   * `CiEvaluation.baselineRecall`), so these count its entries into and exits from that state.
   */
  baselineQuarantined: number
  baselineReleased: number
}

/**
 * Replays a generated suite one run at a time (every `step` runs), with an uncapped `quarantine auto` after each:
 * the analysis of each test as of that run, the policy's decision against the records so far, applied.
 */
export function replayCi(opts: CiSuiteOptions, step = 1): { tests: CiTest[]; counts: ReplayCounts[] } {
  const suite = generateCiSuite(opts)
  const policy = { ...DEFAULTS.quarantine, maxQuarantined: Number.MAX_SAFE_INTEGER }
  const counts: ReplayCounts[] = suite.tests.map((t) => ({
    cls: t.cls,
    quarantined: 0,
    released: 0,
    releasedAt: null,
    reasons: [],
    verdictChanges: 0,
    verdicts: [],
    baselineQuarantined: 0,
    baselineReleased: 0,
  }))
  const held = suite.tests.map(() => false)
  const index = new Map(suite.tests.map((t, i) => [t.history.test.testId, i]))
  let records: QuarantineRecord[] = []
  for (let k = cfg.scoring.minRunsForScoring; k <= suite.runs.length; k += step) {
    const now = suite.runs[k - 1]!.at + 60_000
    const tests = suite.tests.map((t, i) => {
      const a = analyzeTest({ test: t.history.test, entries: t.history.entries.slice(0, k) }, cfg, { now })
      const c = counts[i]!
      if (c.verdicts.length > 0 && c.verdicts.at(-1) !== a.verdict) c.verdictChanges++
      if (c.verdicts.at(-1) !== a.verdict) c.verdicts.push(a.verdict)
      const baseline = a.flipRateClass !== 'stable' || a.ewmaFlipRate > 0
      if (baseline && !held[i]) c.baselineQuarantined++
      if (!baseline && held[i]) c.baselineReleased++
      held[i] = baseline
      return policyTest(a)
    })
    const d = decideQuarantine(tests, records, policy, now)
    const out = new Set([...d.release, ...d.expire].map((r) => r.testId))
    records = records.filter((r) => !out.has(r.testId))
    for (const r of d.release) {
      const c = counts[index.get(r.testId)!]!
      c.released++
      c.releasedAt ??= k - 1
      c.reasons.push(r.reason.slice(0, 160))
    }
    for (const q of d.quarantine) {
      counts[index.get(q.testId)!]!.quarantined++
      records.push({
        testId: q.testId,
        reason: q.reason,
        owner: null,
        issueUrl: null,
        createdAt: new Date(now).toISOString(),
        createdBy: 'flakewatch',
        expiresAt: null,
        source: 'auto',
      })
    }
  }
  return { tests: suite.tests, counts }
}

/**
 * Four held-out CI shapes: the default mix over 500 runs with two jobs per revision; 300 runs with one; a
 * flaky-heavy mix over 200 runs with one; 400 runs with one retry. Seeds `base + 1` to `base + 4`.
 */
export function heldOutConfigs(base: number, tests: number): (CiSuiteOptions & { name: string })[] {
  return [
    { name: 'default mix, 500 runs, two jobs per revision', seed: base + 1, tests },
    { name: '300 runs, one job per revision', seed: base + 2, tests, runs: 300, jobsPerRevision: 1 },
    {
      name: 'flaky-heavy, 200 runs, one job per revision',
      seed: base + 3,
      tests,
      runs: 200,
      jobsPerRevision: 1,
      mix: { stable: 30, low_rate: 15, random: 15, rare_runner: 10, bursty: 8, time_window: 10, workers: 10 },
    },
    { name: '400 runs, one retry', seed: base + 4, tests, runs: 400, retries: 1 },
  ]
}

/**
 * Four held-out shapes of the harder mix (`HARD_CI_MIX`): 500 runs with two jobs per revision and the rare runner
 * at about 5%; 400 runs with one job and it at 9%; 300 runs with one job; 500 runs with one retry and it at 7%.
 * Seeds `base + 1` to `base + 4`.
 */
export function hardConfigs(base: number, tests: number): (CiSuiteOptions & { name: string })[] {
  const mix = HARD_CI_MIX
  return [
    { name: 'hard mix, 500 runs, two jobs, rare runner 5%', seed: base + 1, tests, mix, rareWeight: 0.42 },
    {
      name: 'hard mix, 400 runs, one job, rare runner 9%',
      seed: base + 2,
      tests,
      mix,
      runs: 400,
      jobsPerRevision: 1,
      rareWeight: 0.8,
    },
    { name: 'hard mix, 300 runs, one job', seed: base + 3, tests, mix, runs: 300, jobsPerRevision: 1 },
    { name: 'hard mix, 500 runs, one retry, rare runner 7%', seed: base + 4, tests, mix, retries: 1, rareWeight: 0.6 },
  ]
}
