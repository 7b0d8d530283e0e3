import type { FlipClass } from './types.js'

/**
 * Breadcrumb's classes of a flip rate.
 * @example classifyFlipRate(0.15) // 'intermittent'
 */
export function classifyFlipRate(rate: number): FlipClass {
  if (rate <= 0) return 'stable'
  if (rate <= 0.2) return 'intermittent'
  if (rate <= 0.5) return 'flaky'
  return 'chronic'
}
