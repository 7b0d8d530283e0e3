/**
 * The one clock of every report: analysis windows (lookback, "recent" days, success-rate days) end at the
 * as-of time. Unless a caller names one (`--as-of`), it is the newest selected run plus 1 ms, so that a store
 * that has not been fed for weeks still shows its last weeks, and `analyze`, `show`, `quarantine auto`, exports
 * and the server agree on every verdict. Only a store without runs falls back to `fallback` (the wall clock).
 * @example asOfTime([{ at: 1000 }, { at: 5000 }], undefined, Date.now()) // 5001
 */
export function asOfTime(runs: Iterable<{ at: number }>, override: number | undefined, fallback: number): number {
  if (override !== undefined) return override
  // A loop, not Math.max(...list): a large store would overflow the argument list.
  let newest = -Infinity
  for (const r of runs) if (r.at > newest) newest = r.at
  return newest === -Infinity ? fallback : newest + 1
}
