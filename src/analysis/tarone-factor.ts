/**
 * Tarone's multiple-testing factor for exact tests: a candidate whose smallest achievable p-value (its margins
 * allowing) is above the level it would be judged at can never be significant, so it need not be paid for. The
 * factor is the smallest K ≥ 1 such that at most K candidates have a smallest achievable p-value ≤ alpha / K; a
 * p-value times K below alpha keeps the family-wise error at alpha, as Bonferroni over every candidate does, but
 * runners that ran a test twice or a facet whose every run has its own value (a build number) no longer dilute
 * the evidence of the one runner that matters. (R. E. Tarone, Biometrics 46, 1990.)
 * @example taroneFactor([1e-6, 1e-5, 0.2, 0.5, 0.9], 0.003) // 2
 */
export function taroneFactor(minPValues: readonly number[], alpha: number): number {
  const sorted = Float64Array.from(minPValues).sort()
  // m(k), the candidates that could reach alpha / k, only shrinks as k grows: one pointer walks it down.
  let m = sorted.length
  for (let k = 1; ; k++) {
    while (m > 0 && sorted[m - 1]! > alpha / k) m--
    if (m <= k) return k
  }
}
