import type { ResolvedAnalysisConfig, TestAnalysisJson } from '../analysis/index.js'
import { analysisFingerprint, storeClock } from '../pipeline/persisted-analyses.js'
import type { AnalysisFilter } from '../store/analyses.js'
import type { Store } from '../store/store.js'
import type { LeaderboardRow } from './api-types.js'
import type { Selection } from './selection.js'
import type { RefreshAsk, RefreshOutcome } from './snapshot-builder.js'

const DAY_MS = 86_400_000

/**
 * Rows a read re-analyses before it answers, when no more than this many are not exact at its clock (an upload's
 * stragglers, a small store, a clock that moved past a few validities). With more (a large store after a
 * configuration change), the read answers at once from the rows as they are and says how many are pending; the
 * sweep catches up.
 */
export const READ_REFRESH_ROWS = 500

/** The analysis window a read answers for, and how current the persisted rows are at its clock. */
export interface AnalysisWindow {
  /** The analysis clock: the app's, else just after the store's newest run. */
  clock: number
  /** The window's start: tests with a result since then are shown. */
  since: number
  /** Rows not exact at the clock (shown as last analysed, at most {@link READ_REFRESH_ROWS} old answers apart). */
  pending: number
  /** When this answer was read. */
  computedAt: number
  runs: number
  newestRunAt: number | null
}

/**
 * Whether the persisted analyses answer a selection: the dashboard's default one (every run of the analysis
 * window). Narrower selections (suite, branch, env, last runs, revisions) see other results and another clock, so
 * they are still analysed from their histories (`SnapshotCache`).
 */
export function answeredByRows(s: Selection): boolean {
  return s.suite === undefined && s.branch === undefined && s.env.length === 0 && s.last === undefined && !s.rev
}

/**
 * The server's reads of the persisted analyses (docs/server.md, "How reads are answered"): each read finds the
 * analysis clock, re-analyses the few rows not exact there (in the analysis worker, one refresh at a time for the
 * whole instance), and answers from indexed queries on the `analyses` table: nothing is built at start, and memory
 * does not grow with the store.
 */
export class PersistedReads {
  private refreshing: Promise<unknown> | null = null
  /** Set once no row of another configuration is left: rows written later carry this one. */
  private configCurrent = false
  private readonly config: string

  constructor(
    private readonly opts: {
      /** Where reads go (the replica, with `serve --read-db`). */
      store: () => Store
      cfg: ResolvedAnalysisConfig
      /** The analysis clock; without it, just after the store's newest run. */
      now?: () => number
      /** Re-analyses rows (in the analysis worker thread when there is one), on the primary. */
      refresh: (ask: RefreshAsk) => Promise<RefreshOutcome>
      onError?: (error: unknown) => void
    },
  ) {
    this.config = analysisFingerprint(opts.cfg)
  }

  /** The window of a read at the current clock, its few stale rows re-analysed first. */
  async window(): Promise<AnalysisWindow> {
    const store = this.opts.store()
    const clock = this.opts.now?.() ?? (await storeClock(store))
    const since = clock - this.opts.cfg.scoring.lookbackDays * DAY_MS
    let pending = await this.pending(store, clock)
    if (pending > 0) {
      const refresh = this.refresh(clock, pending > READ_REFRESH_ROWS)
      if (pending <= READ_REFRESH_ROWS) {
        await refresh
        pending = await this.pending(store, clock)
      }
    }
    const runs = await store.analyses().windowRuns(since)
    return { clock, since, pending, computedAt: Date.now(), runs: runs.runs, newestRunAt: runs.newest }
  }

  private async pending(store: Store, clock: number): Promise<number> {
    const analyses = store.analyses()
    const due = await analyses.dueAnalyses(clock)
    if (this.configCurrent) return due
    const other = await analyses.otherConfigAnalyses(this.config)
    if (other === 0) this.configCurrent = true
    // Rows of another configuration that are also due are counted twice: a bound for the answer, not a tally.
    return due + other
  }

  /** One refresh at a time for the instance; a read waits for the one running (its rows may be among them). */
  private refresh(clock: number, background: boolean): Promise<unknown> {
    if (this.refreshing) return this.refreshing
    const run = this.opts
      .refresh({ clock, maxRows: READ_REFRESH_ROWS, otherConfig: !this.configCurrent })
      .catch((error: unknown) => this.opts.onError?.(error))
      .finally(() => {
        if (this.refreshing === run) this.refreshing = null
      })
    this.refreshing = run
    return background ? Promise.resolve() : run
  }

  /** The filter of a read over the window. */
  filter(w: AnalysisWindow, view: { search?: string; verdict?: AnalysisFilter['verdict'] }): AnalysisFilter {
    return { since: w.since, search: view.search, verdict: view.verdict }
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4

/**
 * A leaderboard row but its `quarantined` flag and owners, from a persisted analysis (`analyze --json`'s form,
 * already rounded) and its test's ref.
 */
export function leaderboardRowOf(
  ref: { name: string; module: string; suite: string },
  a: TestAnalysisJson,
): Omit<LeaderboardRow, 'quarantined'> {
  return {
    test_id: a.test_id,
    name: ref.name,
    module: ref.module,
    suite: ref.suite,
    runs: a.runs,
    passes: a.passes,
    failures: a.failures,
    pass_rate: a.pass_rate === null ? null : round(a.pass_rate),
    last_status: a.last_status,
    pass_rate_class: a.pass_rate_class,
    flip_rate_class: a.flip_rate_class,
    verdict: a.verdict,
    reason: a.reason,
    score: round(a.score),
    confidence: round(a.confidence),
    flip_rate: round(a.flip_rate),
    evidence: a.evidence.map((e) => ({
      kind: e.kind,
      detail: e.detail,
      ...(e.run_ids ? { run_ids: e.run_ids.slice(0, 20) } : {}),
      ...(e.revision !== undefined ? { revision: e.revision } : {}),
    })),
    recommendation: { ...a.recommendation },
  }
}
