/**
 * Orders two strings by UTF-16 code units, as `<` does: the same order on every machine and locale, and many times
 * faster than `localeCompare`, which sorting a million test ids in the leaderboard spent a tenth of its time in.
 * Ids and names are data, not prose, so a locale's collation would only make the order depend on the machine.
 * @example ['b', 'B', 'a'].sort(compareText) // ['B', 'a', 'b']
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
