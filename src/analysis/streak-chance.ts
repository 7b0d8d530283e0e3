import { isFailure, type HistoryEntry } from '../model.js'
import { burstScan } from './burst-scan.js'
import { failureConditions } from './failure-conditions.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import { rateUpperBound } from './rate-bound.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'

/**
 * How likely the failure streak at the end of `entries` (the runs from `before` on) is if the test still fails as
 * it did before the streak: the product, over the streak's runs, of the highest failure rate that applies to
 * each run. The broken rule calls the streak a breakage when this is below `brokenAlpha`. Each rate is taken high
 * ({@link streakRate}), so that a small sample does not make a streak look impossible:
 * - the recent rate, of the `baselineRuns` runs before the streak (a test that became flaky lately is judged by
 *   its new rate);
 * - under each condition its earlier failures concentrated on (`failureConditions`: a runner, env value, numeric
 *   threshold or time-of-day window), the rate under it, for the streak's runs under it: four failures in a row
 *   inside a time window where the test fails 60% of the time are the window, not a breakage;
 * - when its earlier failures came in bursts (`burstScan` at the burst hint's level) and in at least
 *   `minFailureEpisodes` episodes (one earlier breakage and its fix is one streak, not a pattern), the rate inside
 *   its bursts, for every run of the streak: a new burst starts with a streak. Not when a time-of-day window
 *   holds the failures: its clusters are the window, and outside it the test does not fail.
 * @example streakChance(entries, entries.length - 4, cfg) // 0.13 inside a window where the test fails 60%
 */
export function streakChance(entries: readonly HistoryEntry[], before: number, cfg: ResolvedAnalysisConfig): number {
  const v = cfg.verdict
  const n = entries.length
  const k = n - before
  let failsInBaseline = 0
  const baselineStart = Math.max(0, before - v.baselineRuns)
  for (let i = baselineStart; i < before; i++) if (isFailure(entries[i]!.status)) failsInBaseline++
  const recent = streakRate(failsInBaseline, before - baselineStart)
  // The other rates only raise a run's rate: when the recent one already clears the streak, they cannot change it.
  if (before === 0 || Math.pow(recent, k) >= v.brokenAlpha) return Math.pow(recent, k)

  const prior = entries.slice(0, before)
  let troubled = 0
  for (const e of prior) if (hadFailure(e)) troubled++
  const rates = new Float64Array(k).fill(recent)
  const conditions = failureConditions(prior, troubled, cfg)
  for (const c of conditions) {
    let runs = 0
    let failures = 0
    for (const e of prior) {
      if (!c.applies(e)) continue
      runs++
      if (isFailure(e.status)) failures++
    }
    const rate = streakRate(failures, runs)
    for (let i = 0; i < k; i++) if (c.applies(entries[before + i]!) && rate > rates[i]!) rates[i] = rate
  }
  // Failures in a daily window come in clusters too; the window explains them, and outside it they do not happen.
  const burst = conditions.some((c) => c.kind === 'time_of_day') ? 0 : burstRate(prior, cfg)
  let chance = 1
  for (let i = 0; i < k; i++) chance *= Math.max(rates[i]!, burst)
  return chance
}

/**
 * The failure rate inside the test's earlier bursts (clusters of two failures or more), or 0 when its failures did
 * not come in bursts, or came in one episode: one earlier breakage and its fix is a solid streak, not a pattern.
 */
function burstRate(prior: readonly HistoryEntry[], cfg: ResolvedAnalysisConfig): number {
  const outcomes = new Uint8Array(prior.length)
  let total = 0
  let episodes = 0
  for (let i = 0; i < prior.length; i++) {
    if (!isFailure(prior[i]!.status)) continue
    outcomes[i] = 1
    total++
    if (i === 0 || outcomes[i - 1] === 0) episodes++
  }
  if (total < cfg.hints.minFailures || episodes < cfg.verdict.minFailureEpisodes) return 0
  const scan = burstScan(outcomes, hintAlpha(cfg.hints, 'burst'))
  if (scan === null) return 0
  let failures = 0
  let runs = 0
  for (const c of scan.clusters) {
    if (c.failures < 2) continue
    failures += c.failures
    runs += c.end - c.start + 1
  }
  return runs === 0 ? 0 : streakRate(failures, runs)
}

/** Confidence of the upper bound on an earlier failure rate. */
export const STREAK_RATE_CONFIDENCE = 0.9

/**
 * An earlier failure rate taken high: with failures, its one-sided 90% Clopper–Pearson upper bound (1 of 20 runs
 * gives 0.18, where the plain share 0.05 made a streak of three a breakage in the middle of a test's first burst);
 * without, (0.5) / (runs + 1), so that a test that never failed is broken after `brokenMinConsecutive` failures.
 * @example streakRate(0, 20) // 0.024
 */
export function streakRate(failures: number, runs: number): number {
  return failures === 0 ? 0.5 / (runs + 1) : rateUpperBound(failures, runs, STREAK_RATE_CONFIDENCE)
}
