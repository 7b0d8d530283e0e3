import type { HistoryEntry } from '../model.js'
import { burstScan } from './burst-scan.js'
import { failureConditions } from './failure-conditions.js'
import { plural } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import { rateLowerBound } from './rate-bound.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'
import type { FixRequirement } from './types.js'

/** Most failure conditions a fix must cover: the most significant ones, so that the evidence stays readable. */
export const MAX_FIX_CONDITIONS = 3

/** One requirement of a fix: clean runs under a condition (or under any, `where` null) at the old rate there. */
export type FixTerm = FixRequirement

export interface EarnedFix {
  /** Whether every term is met and the stretch is longer than the gap rule asks. */
  earned: boolean
  /** Clean runs in a row at the end. */
  clean: number
  /** Runs with a failure before the stretch. */
  troubled: number
  /** Longest clean stretch between two runs with a failure before the stretch, and the stretch that beats it. */
  longestGap: number
  gapRuns: number
  /** Runs from the first failure to the stretch, and the clean runs the episode rule asks for (0 when it does not apply). */
  span: number
  episodeRuns: number
  /** Clean runs in a row the whole rule asks for (all runs; a condition may ask for more of its own). */
  needed: number
  /** The first term is every run; the others are the conditions the failures concentrated on. */
  terms: FixTerm[]
  /** The largest `chance` of the terms: the probability bound of the claim. */
  chance: number
  /** What is still missing, e.g. `needs 37 more clean runs, 12 of them on runner ci-7`; empty when earned. */
  missing: string
  /** A sentence with the bound and the evidence, for the verdict's reason and hint. */
  evidence: string
}

/**
 * Whether the clean stretch at the end of `entries` (the runs from `beforeFix` on; the run before it had a
 * failure) earns the test a fix. Every term must hold:
 * - **rate**: at the old failure rate, estimated conservatively as the one-sided Clopper–Pearson lower bound
 *   p_L at `fixedRateConfidence` (0.9) over the runs before the stretch, a still-flaky test with k earlier
 *   failures would have had a clean stretch this long, in any of its k + 1 stretches, with probability
 *   (k + 1)(1 − p_L)^clean ≤ `fixedAlpha` (0.01). A low estimate asks for more runs, so a test with few
 *   failures is not released on luck; the k + 1 keeps a test replayed run by run from being released by one
 *   lucky stretch among many.
 * - **conditions**: when the failures concentrated on a runner, env facet value, numeric facet threshold or time
 *   of day (the association hints, over the runs before the stretch), the same bound holds for the clean runs
 *   under that condition at the rate seen there: clean runs elsewhere prove nothing about it.
 * - **gap**: the stretch is at least `fixedGapFactor` times the longest clean gap between two earlier runs with a
 *   failure, so that a bursty test is not fixed in the middle of its usual quiet time; and at least `fixedMinRuns`.
 * - **one short episode**: when the failures span fewer runs (first failure to the stretch) than the clean stretch
 *   the terms above ask for, the rate was seen over less time than it is asked to vouch for, and a test's first
 *   burst followed by its quiet gap is the same history as a short flake fixed: the stretch must also bring the
 *   runs since the first failure to `fixedEpisodeRuns` (220, the release bound, so a real fix is still released
 *   within it). A failure pattern longer than the stretch it asks for is judged by the terms alone.
 * @example earnedFix(entries, 109, cfg).missing // 'needs 37 more clean runs, 12 of them on runner ci-7'
 */
export function earnedFix(entries: readonly HistoryEntry[], beforeFix: number, cfg: ResolvedAnalysisConfig): EarnedFix {
  const v = cfg.verdict
  const n = entries.length
  let troubled = 0
  let longestGap = 0
  let lastTroubled = -1
  let firstTroubled = -1
  for (let i = 0; i < beforeFix; i++) {
    if (!hadFailure(entries[i]!)) continue
    troubled++
    if (firstTroubled < 0) firstTroubled = i
    if (lastTroubled >= 0 && i - lastTroubled - 1 > longestGap) longestGap = i - lastTroubled - 1
    lastTroubled = i
  }
  const clean = n - beforeFix
  const gapRuns = Math.ceil(v.fixedGapFactor * longestGap)
  const terms: FixTerm[] = [term(null, beforeFix, troubled, clean, cfg)]
  const before = entries.slice(0, beforeFix)
  const conditions = failureConditions(before, troubled, cfg)
  // Failures in a daily window come in clusters too; there the window's own term is the one that matters.
  const bursts = conditions.some((c) => c.kind === 'time_of_day') ? null : burstStarts(before, troubled, cfg)
  if (bursts !== null) terms.push(term(BURSTS, bursts.runs, bursts.starts, clean, cfg))
  for (const c of conditions.slice(0, MAX_FIX_CONDITIONS)) {
    let runs = 0
    let failures = 0
    for (const e of before) {
      if (!c.applies(e)) continue
      runs++
      if (hadFailure(e)) failures++
    }
    let cleanThere = 0
    for (let i = beforeFix; i < n; i++) if (c.applies(entries[i]!)) cleanThere++
    terms.push(term(c.where, runs, failures, cleanThere, cfg))
  }
  // The bursts term counts every clean run of the stretch, like the first.
  const rateNeeded = Math.max(
    v.fixedMinRuns,
    gapRuns,
    ...terms.filter((t) => t.where === null || t.where === BURSTS).map((t) => t.needed),
  )
  // Failures seen over fewer runs than the stretch they ask for are one short episode: the rate says nothing about
  // how long the test stays quiet after it, and a first burst makes the same history, so the fix also waits until
  // the runs since the first failure reach `fixedEpisodeRuns`.
  const span = beforeFix - firstTroubled
  const episodeRuns = firstTroubled >= 0 && span < rateNeeded ? v.fixedEpisodeRuns - span : 0
  const needed = Math.max(rateNeeded, episodeRuns)
  let more = needed - clean
  const parts: string[] = []
  if (episodeRuns > rateNeeded && more > 0) {
    parts.push(
      `one short episode (failures over ${plural(span, 'run')}, fewer than the ${rateNeeded} clean runs they ask for, as a first burst is): a fix waits for ${v.fixedEpisodeRuns} runs since the first failure`,
    )
  }
  for (const t of terms.slice(1)) {
    if (t.where === BURSTS) continue
    const short = t.needed - t.clean
    if (short <= 0) continue
    // Runs under a condition are runs too: the stretch needs at least as many more.
    more = Math.max(more, short)
    parts.push(`${short} of them ${t.where}`)
  }
  let chance = 0
  for (const t of terms) chance = Math.max(chance, t.chance)
  const earned = more <= 0
  const missing = earned ? '' : [`needs ${plural(more, 'more clean run')}`, ...parts].join(', ')
  return {
    earned,
    clean,
    troubled,
    longestGap,
    gapRuns,
    span: firstTroubled >= 0 ? span : 0,
    episodeRuns,
    needed,
    terms,
    chance,
    missing,
    evidence: evidenceText(terms, cfg),
  }
}

/** The `where` of the bursts term. */
const BURSTS = 'counting bursts, not failures'

/**
 * When the failures before the stretch came in bursts (`burstScan` at the burst hint's level), the number of
 * bursts (clusters) and the runs outside them plus one: a burst's failures are one event, and a clean stretch
 * is improbable only at the rate bursts begin, which the failure rate overstates by the size of a burst.
 */
function burstStarts(
  before: readonly HistoryEntry[],
  troubled: number,
  cfg: ResolvedAnalysisConfig,
): { starts: number; runs: number } | null {
  if (troubled < cfg.hints.minFailures) return null
  const outcomes = new Uint8Array(before.length)
  for (let i = 0; i < before.length; i++) if (hadFailure(before[i]!)) outcomes[i] = 1
  const scan = burstScan(outcomes, hintAlpha(cfg.hints, 'burst'))
  if (scan === null) return null
  let inside = 0
  for (const c of scan.clusters) inside += c.end - c.start + 1
  return { starts: scan.clusters.length, runs: before.length - inside + scan.clusters.length }
}

function term(
  where: string | null,
  runs: number,
  failures: number,
  clean: number,
  cfg: ResolvedAnalysisConfig,
): FixTerm {
  const v = cfg.verdict
  const rateBound = rateLowerBound(failures, runs, v.fixedRateConfidence)
  // Each earlier failure ended a clean stretch that could have been this long by chance, and the analysis looks
  // again after every run: the stretch is judged against all of them (Bonferroni over failures + 1 stretches), so
  // that over a test's whole history a steady flake is released with probability ≤ α, not α per stretch.
  const looks = failures + 1
  // No failure there: nothing to disprove, so no clean run is needed. A failure with a zero bound (a degenerate
  // setting) can never be disproved.
  const needed =
    failures === 0
      ? 0
      : rateBound <= 0
        ? Infinity
        : rateBound >= 1
          ? 1
          : Math.ceil(Math.log(v.fixedAlpha / looks) / Math.log1p(-rateBound))
  const chance = failures === 0 ? 0 : Math.min(1, looks * Math.pow(1 - rateBound, clean))
  return { where, runs, failures, rateBound, needed, clean, chance }
}

function evidenceText(terms: readonly FixTerm[], cfg: ResolvedAnalysisConfig): string {
  const v = cfg.verdict
  const level = `${Math.round(v.fixedRateConfidence * 100)}% lower bound`
  const texts = terms.map((t) => {
    if (t.where === BURSTS) {
      const rate = `${plural(t.failures, 'burst')} began in ${t.runs} runs outside bursts before (rate ≥ ${pct(t.rateBound)}, ${level})`
      return `${rate}: ${plural(t.clean, 'clean run')} in a row, in any of its ${t.failures + 1} quiet stretches, happen by chance with probability ${chanceText(t.chance)}`
    }
    const where = t.where === null ? '' : ` ${t.where}`
    const rate = `${t.failures} of ${t.runs} runs${where} failed before (rate ≥ ${pct(t.rateBound)}, ${level})`
    const stretch = `${plural(t.clean, 'clean run')}${where}`
    return `${rate}: ${stretch} in a row, in any of its ${t.failures + 1} clean stretches, happen by chance with probability ${chanceText(t.chance)}`
  })
  return `${texts.join('; ')} (a fix needs ≤ ${v.fixedAlpha})`
}

function pct(x: number): string {
  return x >= 0.1 ? `${Math.round(x * 100)}%` : `${(x * 100).toPrecision(2)}%`
}

function chanceText(p: number): string {
  return p < 1e-4 ? '< 0.0001' : p.toPrecision(3)
}
