import type { HintsConfig } from './resolve-analysis-config.js'

/**
 * Kinds of root-cause test run on every troubled test: facet and time-of-day associations, numeric facet
 * thresholds, bursts, timeouts, order dependency.
 */
export const HINT_FAMILIES = 5

/**
 * The significance level of one kind of hint: `alpha` split over the kinds (Bonferroni), so that a test whose
 * failures are plain random gets any root-cause hint with probability at most `alpha`, not five times that.
 * @example hintAlpha({ alpha: 0.01, ... }) // 0.002
 */
export function hintAlpha(cfg: HintsConfig): number {
  return cfg.alpha / HINT_FAMILIES
}
