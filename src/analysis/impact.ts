import { isFailure, type HistoryEntry, type VerdictKind } from '../model.js'
import { periodSignals } from './period-signals.js'

const DAY_MS = 86_400_000
const WEEK_MS = 7 * DAY_MS

/** Most weeks an impact report spans (ten years): runs older than that are left out of the weekly series. */
export const IMPACT_MAX_WEEKS = 520

/** What flaky tests cost: the figures summed per week, per owner, per suite and per test. */
export interface ImpactCost {
  /**
   * CI time lost: the summed duration of every failed or errored attempt of a test judged flaky, in countable
   * results: first tries that failed, retries that failed too, and final failures. A passing retry is not counted
   * (a healthy test would have spent it as well); attempts without a recorded duration count as 0 ms.
   */
  timeLostMs: number
  /** Countable results of flaky tests that ended failed or errored: each one a red run someone had to rerun. */
  failures: number
  /** Failed or errored attempts of flaky tests, including those a retry hid. */
  failedAttempts: number
  /** Results of flaky tests that passed only on retry: failures the retries hid, at the price of their time. */
  passesOnRetry: number
}

export interface ImpactWeek extends ImpactCost {
  /** The UTC Monday that begins the week, `YYYY-MM-DD`. */
  week: string
  /** Selected runs that week. */
  runs: number
  /** Tests with a flaky signal that week (passed only on retry, or passed and failed on one revision). */
  flakyTests: number
  /** Tests broken at the end of that week: not flaky that week, and their results ended a streak of `brokenMin` failures or more. */
  brokenTests: number
}

/** One owner's or one suite's share: its tests' current verdicts and its flaky tests' cost. */
export interface ImpactGroup extends ImpactCost {
  /** The owner or suite; `null` for the tests no CODEOWNERS rule owns. */
  key: string | null
  tests: number
  flaky: number
  broken: number
}

export interface ImpactTestCost extends ImpactCost {
  testId: string
  name: string
  suite: string
  owners: string[]
  /** Countable results. */
  runs: number
}

export interface Impact {
  totals: ImpactCost & { tests: number; flaky: number; broken: number; runs: number }
  /** Every week from the first selected run's to the newest's, oldest first, empty weeks included. */
  weeks: ImpactWeek[]
  /** Most CI time lost first; a test with several owners counts in full for each of them. */
  owners: ImpactGroup[]
  suites: ImpactGroup[]
  /** The most costly flaky tests, most CI time lost first, at most `limit`. */
  tests: ImpactTestCost[]
  /** Flaky tests that cost anything, of which `tests` lists the first `limit`. */
  costlyTests: number
}

/** One analysed test: its current verdict, owners and history (only the selected runs). */
export interface ImpactInput {
  testId: string
  name: string
  suite: string
  owners: readonly string[]
  verdict: VerdictKind
  entries: readonly HistoryEntry[]
}

export interface ImpactOptions {
  /** Runs of infrastructure failures: their results count for nothing, as in the analysis. */
  excludedRuns: ReadonlySet<string>
  /** The times of the selected runs, for the weekly run counts and the span of the weeks. */
  runTimes: readonly number[]
  /** `verdict.brokenMinConsecutive`: the streak that makes a test broken in a week. */
  brokenMin: number
  /** Most tests listed in `tests`. */
  limit: number
}

/** The UTC week of a time, counted from the Monday before the epoch (1970-01-01 was a Thursday). */
export function weekOf(at: number): number {
  return Math.floor((Math.floor(at / DAY_MS) + 3) / 7)
}

function weekStart(week: number): string {
  return new Date(week * WEEK_MS - 3 * DAY_MS).toISOString().slice(0, 10)
}

function zeroCost(): ImpactCost {
  return { timeLostMs: 0, failures: 0, failedAttempts: 0, passesOnRetry: 0 }
}

function addCost(to: ImpactCost, from: ImpactCost): void {
  to.timeLostMs += from.timeLostMs
  to.failures += from.failures
  to.failedAttempts += from.failedAttempts
  to.passesOnRetry += from.passesOnRetry
}

const byCost = (a: ImpactCost, b: ImpactCost) =>
  b.timeLostMs - a.timeLostMs || b.failures - a.failures || b.failedAttempts - a.failedAttempts

function group(groups: Map<string | null, ImpactGroup>, key: string | null): ImpactGroup {
  let g = groups.get(key)
  if (!g) groups.set(key, (g = { key, tests: 0, flaky: 0, broken: 0, ...zeroCost() }))
  return g
}

function sortedGroups(groups: Map<string | null, ImpactGroup>): ImpactGroup[] {
  return [...groups.values()].sort(
    (a, b) =>
      byCost(a, b) ||
      b.flaky - a.flaky ||
      b.broken - a.broken ||
      (a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1),
  )
}

/**
 * What flaky tests cost CI, per week, per owner, per suite and per test, and how many tests were flaky or broken
 * each week. The cost is counted for the tests whose current verdict is flaky, over their countable results (not
 * skipped, not in an infrastructure-failure run); broken tests fail for a real reason and cost nothing here.
 * Pure: the caller reads the histories and the owners.
 * @example computeImpact(inputs, { excludedRuns: new Set(), runTimes, brokenMin: 3, limit: 20 }).totals.timeLostMs
 */
export function computeImpact(inputs: Iterable<ImpactInput>, opts: ImpactOptions): Impact {
  const tally = new ImpactTally(opts)
  for (const t of inputs) tally.add(t)
  return tally.result()
}

/**
 * {@link computeImpact} one test at a time, for a caller that streams the histories: a test's entries are not
 * kept once it is added, so that memory follows the weeks, owners, suites and costly tests, not the results.
 * @example const tally = new ImpactTally(opts); for await (const t of tests) tally.add(t); tally.result()
 */
export class ImpactTally {
  private readonly weeks: ImpactWeek[] = []
  private readonly firstWeek: number
  private readonly totals: Impact['totals']
  private readonly owners = new Map<string | null, ImpactGroup>()
  private readonly suites = new Map<string | null, ImpactGroup>()
  private readonly costly: ImpactTestCost[] = []

  constructor(private readonly opts: ImpactOptions) {
    let last = -Infinity
    for (const at of opts.runTimes) if (at > last) last = at
    let first = Infinity
    for (const at of opts.runTimes) if (at < first) first = at
    const lastWeek = last > -Infinity ? weekOf(last) : 0
    this.firstWeek = first < Infinity ? Math.max(weekOf(first), lastWeek - IMPACT_MAX_WEEKS + 1) : 1
    for (let w = this.firstWeek; w <= lastWeek; w++) {
      this.weeks.push({ week: weekStart(w), runs: 0, flakyTests: 0, brokenTests: 0, ...zeroCost() })
    }
    for (const at of opts.runTimes) {
      const w = this.weekAt(at)
      if (w) w.runs++
    }
    this.totals = { tests: 0, flaky: 0, broken: 0, runs: opts.runTimes.length, ...zeroCost() }
  }

  private weekAt(at: number): ImpactWeek | undefined {
    return this.weeks[weekOf(at) - this.firstWeek]
  }

  add(t: ImpactInput): void {
    const { opts, weeks } = this
    const share = periodSignals(t.entries, opts.excludedRuns, opts.brokenMin, weekOf, false)
    for (let i = 0; i < share.length; i += 3) {
      const w = weeks[share[i]! - this.firstWeek]
      if (!w) continue
      w.flakyTests += share[i + 1]!
      w.brokenTests += share[i + 2]!
    }
    const flaky = t.verdict === 'flaky'
    const cost = zeroCost()
    let runs = 0
    for (const e of t.entries) {
      if (e.status === 'skipped' || opts.excludedRuns.has(e.run.runId)) continue
      runs++
      if (!flaky) continue
      const one: ImpactCost = {
        timeLostMs: e.failedAttemptsMs,
        failures: isFailure(e.status) ? 1 : 0,
        failedAttempts: e.failedAttempts,
        passesOnRetry: e.flakyOnRetry ? 1 : 0,
      }
      addCost(cost, one)
      const w = this.weekAt(e.run.at)
      if (w) addCost(w, one)
    }
    this.count(t, 1, cost)
    if (cost.timeLostMs > 0 || cost.failedAttempts > 0 || cost.failures > 0) {
      this.costly.push({ testId: t.testId, name: t.name, suite: t.suite, owners: [...t.owners], runs, ...cost })
    }
  }

  /**
   * `n` tests of one suite and owners with this verdict, not flaky, whose results add no week signal and no cost (no
   * countable failure and no failed attempt): what {@link add} would make of each, without reading their results.
   */
  addQuiet(t: Pick<ImpactInput, 'suite' | 'owners' | 'verdict'>, n: number): void {
    this.count(t, n, zeroCost())
  }

  private count(t: Pick<ImpactInput, 'suite' | 'owners' | 'verdict'>, n: number, cost: ImpactCost): void {
    const flaky = t.verdict === 'flaky' ? n : 0
    const broken = t.verdict === 'broken' ? n : 0
    const groups = [
      group(this.suites, t.suite),
      ...(t.owners.length ? t.owners.map((o) => group(this.owners, o)) : [group(this.owners, null)]),
    ]
    for (const g of [this.totals, ...new Set(groups)]) {
      g.tests += n
      g.flaky += flaky
      g.broken += broken
      addCost(g, cost)
    }
  }

  result(): Impact {
    const costly = [...this.costly].sort(
      (a, b) => byCost(a, b) || (a.testId < b.testId ? -1 : a.testId > b.testId ? 1 : 0),
    )
    return {
      totals: { ...this.totals },
      weeks: this.weeks.map((w) => ({ ...w })),
      owners: sortedGroups(this.owners),
      suites: sortedGroups(this.suites),
      tests: costly.slice(0, Math.max(0, this.opts.limit)),
      costlyTests: costly.length,
    }
  }
}
