import { isFailure, type HistoryEntry } from '../model.js'
import { BURST_GAP, burstScan } from './burst-scan.js'
import { failureConditions } from './failure-conditions.js'
import { hadFailure } from './had-failure.js'
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
 * - when its failures, the streak included, come in bursts (`burstScan` at `BURST_EXPLAINS_ALPHA`) and its earlier
 *   ones in at least `minFailureEpisodes` episodes (one earlier breakage and its fix is one streak, not a
 *   pattern), the rate inside its earlier bursts, for every run of the streak: a new burst starts with a streak. Not when a time-of-day window
 *   holds the failures: its clusters are the window, and outside it the test does not fail;
 * - when the streak continues a failure episode with a pass inside it ({@link episodeRate}: failures at most
 *   `BURST_GAP` passes before it, or a pass on the revision of its first failure), that episode's rate, for every
 *   run of the streak: the test was failing intermittently as the streak began, so a denser stretch of a first
 *   burst is not a breakage.
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
  const burst = conditions.some((c) => c.kind === 'time_of_day') ? 0 : burstRate(entries, before, cfg)
  const episode = episodeRate(entries, before)
  let chance = 1
  for (let i = 0; i < k; i++) chance *= Math.max(rates[i]!, burst, episode)
  return chance
}

/**
 * The failure rate inside the test's earlier bursts (clusters of two failures or more before `before`), or 0 when
 * its failures, the streak included, are not significantly clustered, or came in one episode before the streak:
 * one earlier breakage and its fix is a solid streak, not a pattern. The streak is part of the scan: a test whose
 * first burst was a pair of failures is bursty once a second burst begins, where the earlier failures alone are
 * too few to show it; a steady flake that breaks is not (its isolated failures and one streak make as many
 * clusters as chance does).
 */
function burstRate(entries: readonly HistoryEntry[], before: number, cfg: ResolvedAnalysisConfig): number {
  const outcomes = new Uint8Array(entries.length)
  let total = 0
  let episodes = 0
  for (let i = 0; i < entries.length; i++) {
    if (!isFailure(entries[i]!.status)) continue
    outcomes[i] = 1
    if (i >= before) continue
    total++
    if (i === 0 || outcomes[i - 1] === 0) episodes++
  }
  if (total < 2 || episodes < cfg.verdict.minFailureEpisodes) return 0
  const scan = burstScan(outcomes, BURST_EXPLAINS_ALPHA)
  if (scan === null) return 0
  let failures = 0
  let runs = 0
  for (const c of scan.clusters) {
    if (c.failures < 2 || c.end >= before) continue
    failures += c.failures
    runs += c.end - c.start + 1
  }
  return runs === 0 ? 0 : streakRate(failures, runs)
}

/**
 * The failure rate of the episode the streak continues, or 0: the runs from the first failure of the cluster that
 * ends at the streak (failures at most `BURST_GAP` passes apart), and the runs before it on that failure's
 * revision, when a pass lies among them. Such a streak is the same episode, on a test that was passing and failing
 * on the same code as it began (a first burst after a clean history, or a denser stretch of one): the rate before
 * the episode says nothing about it. An episode has a few runs, too few for a confidence bound (90% of 1 failure
 * in 2 runs is 0.95, which would keep a real breakage flaky for 135 runs), so its rate is smoothed:
 * (failures + ½) / (runs + 1). 0 when no failure lies within `BURST_GAP` passes before the streak, or the
 * failures there are a solid run (the streak rule sees those as one).
 * @example episodeRate(entries, before) // 0.5 after a pass and a failure on the revision where the streak began
 */
export function episodeRate(entries: readonly HistoryEntry[], before: number): number {
  let first = -1
  let passes = 0
  for (let i = before - 1; i >= 0; i--) {
    if (isFailure(entries[i]!.status)) {
      first = i
      passes = 0
    } else if (++passes > BURST_GAP) break
  }
  if (first < 0) return 0
  let start = first
  const revision = entries[first]!.run.revision
  while (revision !== null && start > 0 && entries[start - 1]!.run.revision === revision) start--
  let failures = 0
  for (let i = start; i < before; i++) if (isFailure(entries[i]!.status)) failures++
  const runs = before - start
  if (failures === runs) return 0
  return (failures + 0.5) / (runs + 1)
}

/**
 * The level at which clustered failures explain a streak as a new burst. Looser than the burst hint's (0.0015):
 * the hint names a cause and must be rarely wrong, while here a wrong "bursty" only delays a breakage of a test
 * already known to fail (its streak is judged at the rate inside its earlier bursts), and a wrong "broken"
 * releases a flaky test from quarantine to be quarantined again at its next pass.
 */
export const BURST_EXPLAINS_ALPHA = 0.05

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
