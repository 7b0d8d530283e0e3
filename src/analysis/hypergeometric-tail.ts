import { logFactorial } from './binomial-tail.js'

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k)
}

/**
 * Fisher's exact one-sided p-value P(X ≥ k) for X ~ Hypergeometric(population, successes, draws): how likely at
 * least `k` of `draws` failures land among `successes` marked executions of `population`, if failures fell there by
 * chance alone.
 * @example hypergeometricUpperTail(3, 6, 3, 3) // 0.05 (1 / C(6, 3))
 */
export function hypergeometricUpperTail(k: number, population: number, successes: number, draws: number): number {
  const lo = Math.max(0, draws - (population - successes))
  const hi = Math.min(successes, draws)
  if (k <= lo) return 1
  if (k > hi) return 0
  const total = logChoose(population, draws)
  let sum = 0
  // Past the mode the terms only fall, so the sum stops once they no longer count: thousands of failures cost a
  // few dozen terms, not thousands.
  const mode = Math.floor(((draws + 1) * (successes + 1)) / (population + 2))
  for (let x = k; x <= hi; x++) {
    const term = Math.exp(logChoose(successes, x) + logChoose(population - successes, draws - x) - total)
    sum += term
    if (x > mode && term < sum * 1e-15) break
  }
  return Math.min(1, sum)
}
