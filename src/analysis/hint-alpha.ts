import type { HintsConfig } from './resolve-analysis-config.js'

/**
 * Each kind of root-cause test's share of `alpha` (Bonferroni split, the shares add up to 1), so that a test whose
 * failures are plain random gets any root-cause hint with probability at most `alpha`, not six times that. The
 * runner and env associations, which test the most values, get the largest share; the time-of-day window scan
 * corrects for its 552 windows itself.
 */
export const HINT_ALPHA_SHARES = {
  association: 0.3,
  time_of_day: 0.1,
  numeric_facet: 0.15,
  burst: 0.15,
  timeout: 0.15,
  order_dependency: 0.15,
} as const

/**
 * The significance level of one kind of root-cause hint.
 * @example hintAlpha({ alpha: 0.01, ... }, 'burst') // 0.0015
 */
export function hintAlpha(cfg: HintsConfig, kind: keyof typeof HINT_ALPHA_SHARES): number {
  return cfg.alpha * HINT_ALPHA_SHARES[kind]
}
