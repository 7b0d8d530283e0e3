/**
 * Exponentially weighted flip rate over the newest `window` outcomes: the flip indicators are smoothed oldest to
 * newest, starting from the first pair's indicator, so that recent flips weigh more than old ones.
 * `outcomes` is as for `flipRate`: one number per run, oldest first, non-zero for a failure.
 * @example ewmaFlipRate([0, 0, 0, 1], 0.3, 20) // 0.3: only the newest pair flipped
 */
export function ewmaFlipRate(outcomes: ArrayLike<number>, alpha = 0.3, window = 20): number {
  const end = outcomes.length
  const start = Math.max(0, end - window)
  if (end - start < 2) return 0
  let prev = outcomes[start + 1] !== 0
  let ewma = (outcomes[start] !== 0) !== prev ? 1 : 0
  for (let i = start + 2; i < end; i++) {
    const cur = outcomes[i] !== 0
    ewma = alpha * (cur !== prev ? 1 : 0) + (1 - alpha) * ewma
    prev = cur
  }
  return ewma
}
