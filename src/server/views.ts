import type { VerdictKind } from '../model.js'
import type { SortKey } from './api-types.js'
import { compareMostFlaky, memoize, type Snapshot, type SnapshotTest } from './snapshot.js'

export interface TestView {
  search?: string
  verdict?: VerdictKind
  sort: SortKey
  order: 'asc' | 'desc'
}

/** The order a sort key takes when the request names none. */
export function defaultOrder(sort: SortKey): 'asc' | 'desc' {
  return sort === 'name' ? 'asc' : 'desc'
}

const CLASS_RANK = { stable: 0, intermittent: 1, actively_flaky: 2, broken: 3 } as const
const VERDICT_RANK = { insufficient_data: 0, healthy: 1, broken: 2, flaky: 3 } as const
const LAST_RANK = { skipped: 0, passed: 1, failed: 2, error: 3 } as const

const byName = (a: SnapshotTest, b: SnapshotTest) =>
  a.name.localeCompare(b.name) || (a.testId < b.testId ? -1 : a.testId > b.testId ? 1 : 0)

/** Ascending comparators; ties fall back to "most flaky first" so that pages are stable. */
const ASCENDING: Record<SortKey, (a: SnapshotTest, b: SnapshotTest) => number> = {
  flaky: (a, b) => compareMostFlaky(b, a),
  score: (a, b) => a.score - b.score,
  pass_rate: (a, b) => (a.passRate ?? 2) - (b.passRate ?? 2),
  runs: (a, b) => a.runs - b.runs,
  flip_rate: (a, b) => a.flipRate - b.flipRate,
  name: byName,
  last: (a, b) => (a.lastStatus ? LAST_RANK[a.lastStatus] : -1) - (b.lastStatus ? LAST_RANK[b.lastStatus] : -1),
  class: (a, b) => CLASS_RANK[a.passRateClass] - CLASS_RANK[b.passRateClass],
  verdict: (a, b) => VERDICT_RANK[a.verdict] - VERDICT_RANK[b.verdict],
}

/** The snapshot's tests narrowed by search and verdict and sorted; memoised per snapshot. */
export function viewTests(snapshot: Snapshot, view: TestView): SnapshotTest[] {
  const search = view.search?.toLowerCase()
  const filterKey = JSON.stringify([search ?? null, view.verdict ?? null])
  const filtered = memoize(snapshot, `filter:${filterKey}`, () =>
    search || view.verdict
      ? snapshot.tests.filter(
          (t) => (!view.verdict || t.verdict === view.verdict) && (!search || t.testId.toLowerCase().includes(search)),
        )
      : snapshot.tests,
  )
  if (view.sort === 'flaky' && view.order === 'desc') return filtered
  return memoize(snapshot, `sort:${filterKey}:${view.sort}:${view.order}`, () => {
    const asc = ASCENDING[view.sort]
    const sign = view.order === 'asc' ? 1 : -1
    return [...filtered].sort((a, b) => sign * asc(a, b) || compareMostFlaky(a, b))
  })
}
