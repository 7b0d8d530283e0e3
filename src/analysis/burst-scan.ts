import { clusterCountTail } from './cluster-count-tail.js'

/** Runs of passes a cluster may hold between two of its failures. */
export const BURST_GAP = 2
/** Up to this many failures the burst p-value is counted exactly; above, it is estimated by permutations. */
export const EXACT_MAX_FAILURES = 1000
/** Permutations of the estimate for many failures; its smallest p-value is 1 / (BURST_PERMUTATIONS + 1). */
export const BURST_PERMUTATIONS = 1999

/** Failures of one cluster: indices of its first and last failure. */
export interface FailureCluster {
  start: number
  end: number
  failures: number
}

export interface BurstScan {
  clusters: FailureCluster[]
  pValue: number
}

/**
 * A scan test for bursts: failures (1s) are grouped into clusters, where two failures belong together when at most
 * `BURST_GAP` passes lie between them. Bursty failures make few clusters; the p-value is the share of random
 * placements of the same number of failures among the same number of runs that make as few. Up to
 * `EXACT_MAX_FAILURES` failures it is counted exactly (`clusterCountTail`, microseconds); above, where counting
 * costs more than sampling, it is estimated by a permutation test with a fixed seed, so that the same history
 * always gets the same answer, stopping as soon as the p-value cannot fall below `alpha`.
 * Returns null when not significant at `alpha`.
 * @example burstScan(Uint8Array.from([0,0,1,1,1,0,1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0]), 0.05)?.clusters.length // 2
 */
export function burstScan(outcomes: Uint8Array, alpha: number): BurstScan | null {
  const n = outcomes.length
  const positions: number[] = []
  for (let i = 0; i < n; i++) if (outcomes[i] === 1) positions.push(i)
  const f = positions.length
  if (f < 2 || f >= n) return null
  const observed = countClusters(Int32Array.from(positions))
  // Every failure on its own: as spread out as failures get.
  if (observed >= f) return null
  const pValue =
    f <= EXACT_MAX_FAILURES
      ? clusterCountTail(n, f, observed, BURST_GAP, alpha)
      : permutationPValue(n, f, observed, alpha)
  if (pValue >= alpha) return null

  const clusters: FailureCluster[] = []
  let start = positions[0]!
  let count = 1
  for (let i = 1; i < f; i++) {
    if (positions[i]! - positions[i - 1]! - 1 > BURST_GAP) {
      clusters.push({ start, end: positions[i - 1]!, failures: count })
      start = positions[i]!
      count = 0
    }
    count++
  }
  clusters.push({ start, end: positions[f - 1]!, failures: count })
  return { clusters, pValue }
}

/**
 * The permutation estimate of the same p-value, for many failures: `BURST_PERMUTATIONS` random placements, or
 * fewer when the p-value already cannot fall below `alpha` (then 1).
 */
function permutationPValue(n: number, f: number, observed: number, alpha: number): number {
  // mulberry32, inlined into the hot loop.
  let state = (0x9e3779b9 ^ (n * 7919 + f)) >>> 0
  const pool = new Int32Array(n)
  for (let i = 0; i < n; i++) pool[i] = i
  // The drawn positions marked on a bitmap (with room for the gap past the end): a failure starts a new cluster
  // unless another lies within BURST_GAP + 1 after it, so the count needs no sort of the sample.
  const marked = new Uint8Array(n + BURST_GAP + 1)
  const limit = Math.ceil(alpha * (BURST_PERMUTATIONS + 1)) - 1
  let asFew = 0
  for (let b = 0; b < BURST_PERMUTATIONS; b++) {
    // A partial Fisher–Yates shuffle draws f distinct positions; the pool stays a permutation, so no reset.
    for (let i = 0; i < f; i++) {
      state = (state + 0x6d2b79f5) >>> 0
      let t = Math.imul(state ^ (state >>> 15), state | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      const j = i + Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * (n - i))
      const swap = pool[i]!
      pool[i] = pool[j]!
      pool[j] = swap
      marked[pool[i]!] = 1
    }
    let clusters = 0
    for (let i = 0; i < f; i++) {
      const p = pool[i]!
      let joined = false
      for (let d = 1; d <= BURST_GAP + 1 && !joined; d++) joined = marked[p + d] === 1
      if (!joined) clusters++
    }
    for (let i = 0; i < f; i++) marked[pool[i]!] = 0
    if (clusters <= observed && ++asFew > limit) return 1
  }
  return (asFew + 1) / (BURST_PERMUTATIONS + 1)
}

function countClusters(sorted: Int32Array): number {
  let clusters = 1
  for (let i = 1; i < sorted.length; i++) if (sorted[i]! - sorted[i - 1]! - 1 > BURST_GAP) clusters++
  return clusters
}
