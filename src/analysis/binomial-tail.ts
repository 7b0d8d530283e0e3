const logFactorials: number[] = [0]

/** ln(n!), cached: the shared building block of the exact tests. */
export function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i++) logFactorials.push(logFactorials[i - 1]! + Math.log(i))
  return logFactorials[n]!
}

/**
 * One-sided binomial p-value P(X ≥ k) for X ~ Binomial(n, p): how likely at least `k` of `n` failures land in a
 * group that holds a share `p` of the executions, if failures fell there by chance alone.
 * @example binomialUpperTail(3, 3, 0.5) // 0.125
 */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1
  if (k > n || p <= 0) return 0
  if (p >= 1) return 1
  // Sum the terms from k upwards with the ratio between neighbours; start in log space so that the first term
  // does not overflow for large n.
  const logChoose = logFactorial(n) - logFactorial(k) - logFactorial(n - k)
  let term = Math.exp(logChoose + k * Math.log(p) + (n - k) * Math.log1p(-p))
  let sum = term
  const odds = p / (1 - p)
  for (let i = k; i < n; i++) {
    term *= ((n - i) / (i + 1)) * odds
    sum += term
    if (term < sum * 1e-15) break
  }
  return Math.min(1, sum)
}
