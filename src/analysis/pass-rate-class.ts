import type { PassRateClass } from './types.js'

/**
 * GitLabViz pass-rate classes: stable (no failures, or a pass rate ≥ 0.95), intermittent ([0.5, 0.95)),
 * actively_flaky ((0, 0.5)), broken (failures and no pass). The one place this rule lives.
 * @example passRateClass(7, 3) // 'intermittent'
 */
export function passRateClass(pass: number, fail: number): PassRateClass {
  if (fail <= 0) return 'stable'
  if (pass <= 0) return 'broken'
  const rate = pass / (pass + fail)
  if (rate >= 0.95) return 'stable'
  if (rate >= 0.5) return 'intermittent'
  return 'actively_flaky'
}
