import type { ParsedCase } from './types.js'

/**
 * Execution positions from one order key per case (a start time, or a reporter's own start sequence): each case's
 * rank, 0 first, ties kept in report order. Null unless every key is a finite number: a partial order would place
 * the cases without one arbitrarily, and the report's own order is the better guess then. Ranks, not the keys, are
 * stored, so an untrusted key can never be more than a small integer.
 * @example rankByKey([30, 10, 20]) // [2, 0, 1]
 */
export function rankByKey(keys: ReadonlyArray<number | null | undefined>): number[] | null {
  const n = keys.length
  const order = new Array<number>(n)
  for (let i = 0; i < n; i++) {
    const k = keys[i]
    if (typeof k !== 'number' || !Number.isFinite(k)) return null
    order[i] = i
  }
  order.sort((a, b) => keys[a]! - keys[b]! || a - b)
  const rank = new Array<number>(n)
  for (let r = 0; r < n; r++) rank[order[r]!] = r
  return rank
}

/**
 * Gives `cases` the positions {@link rankByKey} finds from `keys` (same length, same order), in place; leaves them
 * as they are when the keys are incomplete.
 * @example withPositions(cases, results.map((r) => Date.parse(r.startTime)))
 */
export function withPositions<T extends ParsedCase>(cases: T[], keys: ReadonlyArray<number | null | undefined>): T[] {
  const rank = rankByKey(keys)
  if (rank !== null) for (let i = 0; i < cases.length; i++) cases[i]!.position = rank[i]!
  return cases
}
