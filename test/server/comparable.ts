import { heatOf, type Snapshot } from '../../src/server/snapshot.js'

/**
 * A snapshot as plain data, without the times it was made: what an incremental update must equal a full build
 * at the same clock in.
 */
export function comparable(s: Snapshot): unknown {
  return {
    now: s.now,
    runs: s.runs.map((r) => r.runId),
    heatRuns: s.heatRuns.map((r) => r.runId),
    // Rows compared as the heatmap shows them: an update may keep a test's row and move the snapshot's offset.
    tests: s.tests.map((t) => ({ ...t, heat: heatOf(s, t), heatAt: 0 })),
    runCounts: [...s.runCounts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
    excludedRuns: [...s.excludedRuns].sort(),
    trends: s.trends,
    suites: s.suites,
    newestRunAt: s.newestRunAt,
  }
}
