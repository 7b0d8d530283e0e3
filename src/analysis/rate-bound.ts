import { binomialUpperTail } from './binomial-tail.js'

/**
 * The one-sided Clopper–Pearson lower confidence bound on a rate seen as `k` events in `n` trials: the smallest p
 * with P(X ≥ k | Binomial(n, p)) ≥ 1 − confidence. A rate at least this high is what the data support with that
 * confidence; it is exact (no normal approximation), so it holds for 1 failure in 3 runs as for 30 in 300.
 * Found by bisection on the binomial tail, which rises with p: 50 halvings leave an error below 1e-15.
 * @example rateLowerBound(10, 109, 0.9) // ≈ 0.055 (10 of 109 is 0.092)
 */
export function rateLowerBound(k: number, n: number, confidence: number): number {
  if (k <= 0 || n <= 0) return 0
  if (k >= n) return Math.pow(1 - confidence, 1 / n)
  const target = 1 - confidence
  let lo = 0
  let hi = k / n
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2
    if (binomialUpperTail(k, n, mid) < target) lo = mid
    else hi = mid
  }
  return lo
}

/**
 * The one-sided Clopper–Pearson upper confidence bound: a rate at most this high is what the data support with
 * that confidence. The lower bound of the other outcome, turned round.
 * @example rateUpperBound(1, 20, 0.9) // ≈ 0.181
 */
export function rateUpperBound(k: number, n: number, confidence: number): number {
  if (n <= 0) return 1
  return 1 - rateLowerBound(n - k, n, confidence)
}
