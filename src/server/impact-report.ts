import { computeImpact, type ImpactInput } from '../analysis/impact.js'
import { impactToJson } from '../pipeline/impact.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { Store } from '../store/store.js'
import type { ImpactResponse } from './api-types.js'
import { maxOf, minOf } from '../extent.js'
import { runTime } from './selection.js'
import { memoize, type Snapshot } from './snapshot.js'
import { iso } from './to-json.js'

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
  return impactToJson(impact, { brokenMin: opts.brokenMin, generatedAt: iso(snapshot.computedAt) })
}
