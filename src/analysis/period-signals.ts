import { isFailure, type HistoryEntry } from '../model.js'

/**
 * A test's flaky and broken signals per period (a UTC day for the trends, a week for the impact page), flat:
 * `[period, flaky, broken, period, flaky, broken, …]` with flaky and broken 0 or 1, periods ascending.
 *
 * In a period's countable results (not skipped, not in an infrastructure-failure run) a test is **flaky** when it
 * passed only on retry, or both passed and failed on one revision: the two proofs the verdict also treats as proven
 * flakiness. It is **broken** when it was not flaky and its results that period end a streak of at least
 * `brokenMin` failures in a row (the streak may have begun in an earlier period); with `passBreaks` (the day's
 * rule) a pass anywhere in the period also rules broken out, where a week counts a test that broke mid-week.
 * @example periodSignals(entries, new Set(), 3, (at) => Math.floor(at / 86_400_000))
 */
export function periodSignals(
  entries: readonly HistoryEntry[],
  excluded: ReadonlySet<string>,
  brokenMin: number,
  periodOf: (at: number) => number,
  passBreaks = true,
): number[] {
  const share: number[] = []
  let period: number | null = null
  let passed = false
  let retry = false
  let mixed = false
  let streak = 0
  let revisions: Map<string, number> | null = null
  const close = () => {
    if (period === null) return
    const flaky = retry || mixed
    share.push(period, flaky ? 1 : 0, !flaky && !(passBreaks && passed) && streak >= brokenMin ? 1 : 0)
  }
  for (const e of entries) {
    if (e.status === 'skipped' || excluded.has(e.run.runId)) continue
    const p = periodOf(e.run.at)
    if (p !== period) {
      close()
      period = p
      passed = retry = mixed = false
      revisions = null
    }
    const failed = isFailure(e.status)
    if (failed) streak++
    else {
      streak = 0
      passed = true
      if (e.flakyOnRetry) retry = true
    }
    if (e.run.revision !== null && !mixed) {
      revisions ??= new Map()
      const bits = (revisions.get(e.run.revision) ?? 0) | (failed ? 2 : 1)
      revisions.set(e.run.revision, bits)
      if (bits === 3) mixed = true
    }
  }
  close()
  return share
}
