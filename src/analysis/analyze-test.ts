import {
  isFailure,
  type EnvFacets,
  type Evidence,
  type HistoryEntry,
  type RunInfo,
  type TestHistory,
} from '../model.js'
import { branchBreakages } from './branch-breakages.js'
import { classifyFlipRate } from './classify-flip-rate.js'
import { decideVerdict } from './decide-verdict.js'
import { ewmaFlipRate } from './ewma-flip-rate.js'
import { failureAssociations } from './failure-associations.js'
import { failureBurst } from './failure-burst.js'
import { failureModes } from './failure-modes.js'
import { flakinessScore } from './flakiness-score.js'
import { flipRate } from './flip-rate.js'
import { hadFailure } from './had-failure.js'
import { newlyFlaky } from './newly-flaky.js'
import { numericFacetHints } from './numeric-facets.js'
import { passRateClass } from './pass-rate-class.js'
import { quarantineCriterion } from './quarantine-criteria.js'
import { recommend } from './recommend.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import { successRate } from './success-rate.js'
import { timeoutHint } from './timeouts.js'
import type { BranchBreakageHint, ContextStats, Hint, TestAnalysis } from './types.js'

const DAY_MS = 86_400_000

/** What the analysis needs from outside the history: the current time and the runs to leave out. */
export interface AnalysisContext {
  /** Epoch milliseconds; the lookback and "recent" windows end here. */
  now: number
  /** Runs left out of detection, usually `infraRunIds(summaries, cfg)`. */
  excludedRuns?: ReadonlySet<string>
}

interface RunContext {
  key: string
  facets: EnvFacets
}

// RunInfo objects are shared by every entry of a run, so the context key is built once per run, not per result.
const runContexts = new WeakMap<RunInfo, RunContext>()

function runContext(run: RunInfo): RunContext {
  let ctx = runContexts.get(run)
  if (ctx === undefined) {
    const keys = Object.keys(run.env).sort()
    ctx = { key: keys.length === 0 ? 'default' : keys.map((k) => `${k}=${run.env[k]}`).join(','), facets: run.env }
    runContexts.set(run, ctx)
  }
  return ctx
}

interface ContextCount {
  rc: RunContext
  passes: number
  failures: number
}

function contextStat(rc: RunContext, passes: number, failures: number): ContextStats {
  const total = passes + failures
  return {
    context: rc.key,
    facets: rc.facets,
    passes,
    failures,
    passRate: total === 0 ? null : passes / total,
    passRateClass: passRateClass(passes, failures),
  }
}

/**
 * Analyses one test's history: flip rates, the six-component score and its confidence, the verdict with its
 * evidence, the recommendation, failure modes, root-cause hints, per-context pass rates and CI time lost.
 * Pure: the same history, config and context give the same result.
 * @example analyzeTest(history, resolveAnalysisConfig(), { now: Date.now(), excludedRuns }).verdict // 'flaky'
 */
export function analyzeTest(history: TestHistory, cfg: ResolvedAnalysisConfig, ctx: AnalysisContext): TestAnalysis {
  const all = history.entries
  const since = ctx.now - cfg.scoring.lookbackDays * DAY_MS
  const excludedRuns = ctx.excludedRuns
  let countable: HistoryEntry[] = []
  let skipped = 0
  let excluded = 0
  let offDefaultFailure = false
  const defaultBranch = cfg.successRate.defaultBranch
  for (const e of all) {
    if (e.run.at < since) continue
    if (e.status === 'skipped') {
      skipped++
      continue
    }
    if (excludedRuns !== undefined && excludedRuns.has(e.run.runId)) {
      excluded++
      continue
    }
    countable.push(e)
    if (e.run.branch !== null && e.run.branch !== defaultBranch && isFailure(e.status)) offDefaultFailure = true
  }
  // Only a failure off the default branch can be a branch breakage: most tests skip this step entirely.
  let branchHints: BranchBreakageHint[] = []
  let branchBreakageRuns = 0
  if (offDefaultFailure) {
    const split = branchBreakages(countable, defaultBranch, cfg.verdict.branchBreakageMinRuns)
    countable = split.kept
    branchHints = split.hints
    branchBreakageRuns = split.setAside
  }

  const entries = countable
  let timeLostMs = 0
  let healed = 0
  let failures = 0
  let troubled = 0
  // Most tests run in one context: count it in locals and only build a map when a second one shows up.
  let mainContext: RunContext | null = null
  let mainPasses = 0
  let mainFailures = 0
  let otherContexts: Map<string, ContextCount> | null = null
  for (const e of entries) {
    timeLostMs += e.failedAttemptsMs
    if (e.healingOccurred) healed++
    const failed = isFailure(e.status)
    if (failed) failures++
    if (hadFailure(e)) troubled++
    const rc = runContext(e.run)
    mainContext ??= rc
    // Keys of one run are one cached string, so this comparison is usually by reference.
    if (rc.key === mainContext.key) {
      if (failed) mainFailures++
      else mainPasses++
    } else {
      otherContexts ??= new Map()
      const count = otherContexts.get(rc.key)
      if (count === undefined) otherContexts.set(rc.key, { rc, passes: failed ? 0 : 1, failures: failed ? 1 : 0 })
      else if (failed) count.failures++
      else count.passes++
    }
  }
  const n = entries.length
  const passes = n - failures

  const outcomes = new Uint8Array(n)
  if (failures > 0) for (let i = 0; i < n; i++) outcomes[i] = isFailure(entries[i]!.status) ? 1 : 0
  const flip = flipRate(outcomes, cfg.flipRate.window)
  const ewma = ewmaFlipRate(outcomes, cfg.flipRate.ewmaAlpha, cfg.flipRate.ewmaWindow)

  const windowSize = cfg.scoring.rollingWindowSize
  const window = n > windowSize ? entries.slice(n - windowSize) : entries
  const { score, components, confidence } = flakinessScore(window, cfg.scoring)
  const verdict = decideVerdict({ entries, score, flipRate: flip }, cfg)

  // A pass on retry is a failure for this purpose: a flake that retries always hide still costs CI time.
  let recentFailures = 0
  const recentSince = ctx.now - cfg.scoring.recentFailureWindow * DAY_MS
  for (let i = n - 1; i >= 0 && entries[i]!.run.at >= recentSince; i--) {
    const e = entries[i]!
    if (hadFailure(e)) recentFailures++
  }
  let trailingPasses = 0
  while (trailingPasses < n && !hadFailure(entries[n - 1 - trailingPasses]!)) trailingPasses++
  const flipRateClass = classifyFlipRate(flip)
  const proven = verdict.evidence.some((e) => e.kind === 'same_revision_pass_and_fail' || e.kind === 'pass_on_retry')
  const policyReason = quarantineCriterion(
    {
      verdict: verdict.verdict,
      flipRateClass,
      score,
      confidence,
      proven,
      trailingPasses,
      reason: verdict.reason,
    },
    cfg.quarantine,
  )
  const recommendation = recommend(
    { score, confidence, runs: window.length, recentFailures, verdict: verdict.verdict, policyReason },
    cfg.scoring,
  )

  const hints: Hint[] = []
  const evidence: Evidence[] = verdict.evidence
  if (verdict.change !== null) hints.push(verdict.change)
  for (const b of branchHints) hints.push(b)
  if (troubled >= cfg.hints.minFailures) {
    // A threshold on an ordered facet ("workers ≥ 6") says more than its values one at a time.
    const numeric = numericFacetHints(entries, cfg.hints)
    const thresholded = new Set(numeric.map((x) => x.facet))
    const associations = failureAssociations(entries, cfg.hints).filter((a) => !thresholded.has(a.facet))
    hints.push(...numeric)
    const timeout = timeoutHint(entries, cfg.hints)
    if (timeout !== null) hints.push(timeout)
    for (const a of associations) {
      hints.push(a)
      if (a.kind === 'facet_association' && verdict.verdict !== 'healthy') {
        evidence.push({ kind: 'runner_association', detail: a.message })
      }
    }
    if (verdict.verdict !== 'broken') {
      const burst = failureBurst(entries, cfg.hints)
      if (burst !== null) hints.push(burst)
    }
  }
  if (verdict.verdict === 'flaky') {
    const change = newlyFlaky(entries, cfg.verdict)
    if (change !== null) hints.push(change)
  }
  if (healed > 0) {
    evidence.push({ kind: 'healing', detail: `a locator was healed in ${healed} of ${n} runs` })
  }

  const contextStats: ContextStats[] = []
  if (mainContext !== null) {
    contextStats.push(contextStat(mainContext, mainPasses, mainFailures))
    if (otherContexts !== null) {
      for (const c of otherContexts.values()) contextStats.push(contextStat(c.rc, c.passes, c.failures))
    }
  }

  let lastFailureAt: number | null = null
  for (let i = n - 1; i >= 0 && lastFailureAt === null; i--)
    if (hadFailure(entries[i]!)) lastFailureAt = entries[i]!.run.at

  const last = all.length > 0 ? all[all.length - 1]! : null
  return {
    testId: history.test.testId,
    test: history.test,
    runs: n,
    passes,
    failures,
    skipped,
    excludedRuns: excluded,
    branchBreakageRuns,
    passRate: n === 0 ? null : passes / n,
    flipRate: flip,
    ewmaFlipRate: ewma,
    flipRateClass,
    score,
    components,
    confidence,
    recommendation,
    passRateClass: passRateClass(passes, failures),
    successRate: successRate(history, cfg.successRate, ctx),
    verdict: verdict.verdict,
    reason: verdict.reason,
    evidence,
    failureModes: troubled > 0 ? failureModes(entries, cfg.hints.maxFailureModes) : [],
    hints,
    contexts: contextStats,
    timeLostMs,
    trailingPasses,
    proven,
    lastFailureAt,
    lastStatus: last === null ? null : last.status,
    firstRunAt: all.length > 0 ? all[0]!.run.at : null,
    lastRunAt: last === null ? null : last.run.at,
  }
}
