/**
 * Largest and smallest of any number of values, and appending a list of any length, without spreading an array
 * into function arguments: `Math.max(...xs)` and `push(...xs)` throw "Maximum call stack size exceeded" at around
 * 120k elements, and reports and stores hold millions.
 */

/**
 * The largest value, or `empty` when there is none.
 * @example maxOf([3, 9, 4], 0) // 9
 */
export function maxOf<E = number>(values: Iterable<number>, empty: E | number = -Infinity): number | E {
  let out: number | undefined
  for (const v of values) if (out === undefined || v > out) out = v
  return out === undefined ? empty : out
}

/**
 * The smallest value, or `empty` when there is none.
 * @example minOf([3, 9, 4], 0) // 3
 */
export function minOf<E = number>(values: Iterable<number>, empty: E | number = Infinity): number | E {
  let out: number | undefined
  for (const v of values) if (out === undefined || v < out) out = v
  return out === undefined ? empty : out
}

/**
 * Appends every item to `target`, in order, and returns it.
 * @example appendAll(out, moreLines)
 */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item)
  return target
}
