/**
 * The exact probability that `f` failures placed at random among `n` runs (every set of positions equally likely)
 * form at most `observed` clusters, where two failures belong to one cluster when at most `gap` passes lie between
 * them. This is the p-value the burst permutation test estimates, computed by counting instead of sampling.
 *
 * A placement with K clusters has f − K gaps inside clusters (each 0..gap passes), K − 1 gaps between clusters (each
 * more than gap) and two free ends. Choosing which of the f − 1 gaps separate clusters, and how the passes spread:
 *
 *   #(K) = C(f − 1, K − 1) · Σ_s B(f − K, s) · C(n − f − s − (K − 1)(gap + 1) + K, K)
 *
 * where B(m, s) counts the ways m gaps of 0..gap passes hold s passes in all. Everything is summed in log space
 * over C(n, f), so that nothing overflows. Cost: O(f² · gap²) for the B table, so callers keep f moderate.
 * The sum starts at K = observed, usually its largest term, and stops once it reaches `stopAt`: a caller that only
 * needs to know whether the probability is below a level gets a lower bound at or above it (random failures stop
 * after one term).
 * @example clusterCountTail(100, 19, 3, 2) // ≈ 1e-12: 19 failures in 3 clusters is no accident
 */
export function clusterCountTail(n: number, f: number, observed: number, gap: number, stopAt = Infinity): number {
  if (f <= 0 || observed >= f) return 1
  if (observed < 1) return 0
  const lf = logFactorials(n + 1)
  const lnC = (a: number, b: number) => (b < 0 || b > a ? -Infinity : lf[a]! - lf[b]! - lf[a - b]!)
  const width = gap + 1
  const lnTotal = lnC(n, f)
  const kMax = Math.min(observed, f)
  // share[s] = B(m, s) / width^m: the distribution of the sum of m uniform 0..gap values, grown one m at a time.
  let m = 0
  let share = new Float64Array([1])
  const grow = () => {
    const next = new Float64Array(share.length + gap)
    for (let s = 0; s < share.length; s++) {
      const p = share[s]! / width
      if (p === 0) continue
      for (let d = 0; d <= gap; d++) next[s + d]! += p
    }
    share = next
    m++
  }
  while (m < f - kMax) grow()
  let tail = 0
  for (let k = kMax; k >= 1; k--) {
    while (m < f - k) grow()
    const base = lnC(f - 1, k - 1) + m * Math.log(width) - lnTotal
    const free = n - f - (k - 1) * width
    for (let s = 0; s < share.length && s <= free; s++) {
      if (share[s] === 0) continue
      tail += Math.exp(base + Math.log(share[s]!) + lnC(free - s + k, k))
    }
    if (tail >= stopAt) break
  }
  return Math.min(1, tail)
}

let cached = new Float64Array([0])

/** ln(i!) for i < size, kept between calls and grown as needed. */
function logFactorials(size: number): Float64Array {
  if (cached.length < size) {
    const next = new Float64Array(Math.max(size, cached.length * 2))
    next.set(cached)
    for (let i = cached.length; i < next.length; i++) next[i] = next[i - 1]! + Math.log(i)
    cached = next
  }
  return cached
}
