/**
 * Breadcrumb's flip rate: the share of consecutive outcome pairs that differ, over the newest `window` outcomes.
 * `outcomes` holds one number per run, oldest first: non-zero for a failure, zero for a pass (skips left out).
 * @example flipRate([0, 1, 0, 0], 10) // 2 flips over 3 pairs: 0.666…
 */
export function flipRate(outcomes: ArrayLike<number>, window = 10): number {
  const end = outcomes.length
  const start = Math.max(0, end - window)
  if (end - start < 2) return 0
  let flips = 0
  let prev = outcomes[start] !== 0
  for (let i = start + 1; i < end; i++) {
    const cur = outcomes[i] !== 0
    if (cur !== prev) flips++
    prev = cur
  }
  return flips / (end - start - 1)
}
