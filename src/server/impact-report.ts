import { computeImpact, type ImpactCost, type ImpactGroup, type ImpactInput } from '../analysis/impact.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { Store } from '../store/store.js'
import type { ImpactCostJson, ImpactResponse } from './api-types.js'
import { maxOf, minOf } from '../extent.js'
import { runTime } from './selection.js'
import { memoize, type Snapshot } from './snapshot.js'
import { iso } from './to-json.js'

/** Most owners and suites an answer lists; the totals say how many there are. */
const MAX_GROUPS = 100

/** The definitions the page shows beside the figures, in words (docs/impact.md says the same). */
export function impactDefinition(brokenMin: number): ImpactResponse['definition'] {
  return {
    time_lost:
      'the summed duration of every failed or errored attempt of the tests flaky now (first tries, failed retries ' +
      'and final failures), in the selected runs; a passing retry is not counted, and attempts without a ' +
      'recorded duration count as 0',
    failures: 'results of the tests flaky now that ended failed or errored: red runs that had to be rerun',
    flaky_tests: 'tests that, that week, passed only on retry or both passed and failed on one revision',
    broken_tests: `tests, not flaky that week, whose results that week ended a streak of ${brokenMin} or more failures in a row`,
  }
}

function costJson(c: ImpactCost): ImpactCostJson {
  return {
    time_lost_ms: Math.round(c.timeLostMs),
    failures: c.failures,
    failed_attempts: c.failedAttempts,
    passes_on_retry: c.passesOnRetry,
  }
}

function groupJson(g: ImpactCost & Pick<ImpactGroup, 'tests' | 'flaky' | 'broken'>) {
  return { ...costJson(g), tests: g.tests, flaky: g.flaky, broken: g.broken }
}

export interface ImpactReportOptions {
  /** The store the history scan reads (a second connection, so that other requests are not blocked by it). */
  store: Store
  owners: OwnerLookup
  brokenMin: number
  limit: number
}

/**
 * The impact of one snapshot's selection: the verdicts the snapshot holds, the selected runs' histories read from
 * the store, and the pure {@link computeImpact}. Memoised per snapshot, so that a page tour scans once.
 */
export function impactReport(snapshot: Snapshot, opts: ImpactReportOptions): Promise<ImpactResponse> {
  const key = `impact:${opts.limit}`
  const pending = memoize(snapshot, key, () => readImpact(snapshot, opts))
  // A failed scan is not kept: the next request tries again.
  pending.catch(() => snapshot.memo.delete(key))
  return pending
}

async function readImpact(snapshot: Snapshot, opts: ImpactReportOptions): Promise<ImpactResponse> {
  const runAt = new Map<string, number>()
  for (const r of snapshot.runs) runAt.set(r.runId, snapshot.runCounts.get(r.runId)?.at ?? runTime(r))
  const times = [...runAt.values()]
  const inputs: ImpactInput[] = []
  if (times.length) {
    const { suite, branch } = snapshot.selection
    for await (const h of opts.store.scanHistory({ suite, branch, since: minOf(times), until: maxOf(times) })) {
      const t = snapshot.byId.get(h.test.testId)
      if (!t) continue
      const entries = h.entries.filter((e) => runAt.has(e.run.runId))
      if (!entries.length) continue
      inputs.push({
        testId: t.testId,
        name: t.name,
        suite: t.suite,
        owners: opts.owners({ file: t.file, module: t.module }),
        verdict: t.verdict,
        entries,
      })
    }
  }
  const impact = computeImpact(inputs, {
    excludedRuns: snapshot.excludedRuns,
    runTimes: times,
    brokenMin: opts.brokenMin,
    limit: opts.limit,
  })
  return {
    generated_at: iso(snapshot.computedAt),
    definition: impactDefinition(opts.brokenMin),
    totals: { ...groupJson(impact.totals), runs: impact.totals.runs },
    weeks: impact.weeks.map((w) => ({
      week: w.week,
      runs: w.runs,
      flaky_tests: w.flakyTests,
      broken_tests: w.brokenTests,
      ...costJson(w),
    })),
    owners: impact.owners.slice(0, MAX_GROUPS).map((g) => ({ owner: g.key, ...groupJson(g) })),
    owners_total: impact.owners.length,
    suites: impact.suites.slice(0, MAX_GROUPS).map((g) => ({ suite: g.key ?? '', ...groupJson(g) })),
    suites_total: impact.suites.length,
    tests: impact.tests.map((t) => ({
      test_id: t.testId,
      name: t.name,
      suite: t.suite,
      owners: t.owners,
      runs: t.runs,
      ...costJson(t),
    })),
    costly_tests: impact.costlyTests,
  }
}
