/** Runs of passes a cluster may hold between two of its failures. */
export const BURST_GAP = 2
/** Permutations of the burst test; its smallest p-value is 1 / (BURST_PERMUTATIONS + 1). */
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
 * placements of the same number of failures among the same number of runs that make as few (a permutation test,
 * exact in distribution, with a fixed seed so that the same history always gets the same answer). It stops as soon
 * as the p-value cannot fall below `alpha`, so random failures cost a few dozen permutations.
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

  const rng = mulberry32(0x9e3779b9 ^ (n * 7919 + f))
  const pool = new Int32Array(n)
  for (let i = 0; i < n; i++) pool[i] = i
  const sample = new Int32Array(f)
  const limit = Math.ceil(alpha * (BURST_PERMUTATIONS + 1)) - 1
  let asFew = 0
  for (let b = 0; b < BURST_PERMUTATIONS; b++) {
    // A partial Fisher–Yates shuffle draws f distinct positions; the pool stays a permutation, so no reset.
    for (let i = 0; i < f; i++) {
      const j = i + Math.floor(rng() * (n - i))
      const t = pool[i]!
      pool[i] = pool[j]!
      pool[j] = t
      sample[i] = pool[i]!
    }
    sample.sort()
    if (countClusters(sample) <= observed && ++asFew > limit) return null
  }
  const pValue = (asFew + 1) / (BURST_PERMUTATIONS + 1)
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

function countClusters(sorted: Int32Array): number {
  let clusters = 1
  for (let i = 1; i < sorted.length; i++) if (sorted[i]! - sorted[i - 1]! - 1 > BURST_GAP) clusters++
  return clusters
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
