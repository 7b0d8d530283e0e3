import { ImpactTally, type Impact, type ImpactCost, type ImpactGroup } from '../analysis/impact.js'
import { resolveAnalysisConfig } from '../analysis/resolve-analysis-config.js'
import { analysisOptions } from '../config/load.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { ImpactCostJson, ImpactResponse } from '../server/api-types.js'
import type { HistoryFilter, Store } from '../store/store.js'
import { forEachAnalysis } from './analyze-store.js'

/** Most owners and suites an answer lists; the totals say how many there are. */
export const IMPACT_MAX_GROUPS = 100

/** Most costly tests an answer lists (`limit`, 20 unless asked). */
export const IMPACT_MAX_TESTS = 100

/** The definitions shown beside the figures, in words (docs/impact.md says the same). */
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

/**
 * The snake_case JSON of an impact, as the API serves it and `flakewatch impact --json` prints it.
 * @example impactToJson(impact, { brokenMin: 3, generatedAt: new Date().toISOString() }).totals.time_lost_ms
 */
export function impactToJson(impact: Impact, opts: { brokenMin: number; generatedAt: string }): ImpactResponse {
  return {
    generated_at: opts.generatedAt,
    definition: impactDefinition(opts.brokenMin),
    totals: { ...groupJson(impact.totals), runs: impact.totals.runs },
    weeks: impact.weeks.map((w) => ({
      week: w.week,
      runs: w.runs,
      flaky_tests: w.flakyTests,
      broken_tests: w.brokenTests,
      ...costJson(w),
    })),
    owners: impact.owners.slice(0, IMPACT_MAX_GROUPS).map((g) => ({ owner: g.key, ...groupJson(g) })),
    owners_total: impact.owners.length,
    suites: impact.suites.slice(0, IMPACT_MAX_GROUPS).map((g) => ({ suite: g.key ?? '', ...groupJson(g) })),
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

export interface StoreImpactOptions {
  /** The config the verdicts are judged by, as `analyze` judges them. */
  config: Parameters<typeof analysisOptions>[0]
  owners: OwnerLookup
  /** The runs it covers: a suite, a branch, a time span (as `analyze` selects them). */
  filter?: HistoryFilter
  /** Where the analysis windows end (default: the newest selected run, as `analyze`). */
  asOf?: number
  /** Most costly tests listed. */
  limit: number
}

/**
 * The impact of the selected runs, read straight from a store (the CLI's path; the server computes it from its
 * analysis snapshot): one scan that judges each test as `analyze` does and adds it to the tally, its history then
 * dropped, so that memory follows the tests' count, not their results. `brokenMin` is the streak the weeks' broken
 * tests were counted by.
 * @example const { impact } = await impactFromStore(store, { config, owners: ownerLookup(null), limit: 20 })
 */
export async function impactFromStore(
  store: Store,
  opts: StoreImpactOptions,
): Promise<{ impact: Impact; brokenMin: number }> {
  const analysis = analysisOptions(opts.config)
  const brokenMin = resolveAnalysisConfig(analysis).verdict.brokenMinConsecutive
  // Made once the selected runs are known, before the first test: the weeks span them.
  const made: { tally?: ImpactTally } = {}
  await forEachAnalysis(
    store,
    {
      config: analysis,
      now: opts.asOf,
      filter: opts.filter,
      onRuns: (runs, excludedRuns) => {
        made.tally = new ImpactTally({ excludedRuns, runTimes: runs.map((r) => r.at), brokenMin, limit: opts.limit })
      },
    },
    (history, a) => {
      if (!history.entries.length) return
      made.tally!.add({
        testId: a.testId,
        name: history.test.name,
        suite: history.test.suite,
        owners: opts.owners(history.test),
        verdict: a.verdict,
        entries: history.entries,
      })
    },
  )
  return { impact: made.tally!.result(), brokenMin }
}
