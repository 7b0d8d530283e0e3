import type { ResolvedAnalysisConfig, TestAnalysisJson } from '../analysis/index.js'
import { analyseTestAfresh, analysisFingerprint, storeClock } from '../pipeline/persisted-analyses.js'
import type { AnalysisFilter, AnalysisStore } from '../store/analyses.js'
import type { Store } from '../store/store.js'
import type { LeaderboardRow } from './api-types.js'
import type { Selection } from './selection.js'
import type { RefreshAsk, RefreshOutcome } from './snapshot-builder.js'

const DAY_MS = 86_400_000

/**
 * How long an instance keeps an answer of the persisted analyses (and the window it read them in). Short: an upload
 * through another instance shows within it (its own uploads drop them at once).
 */
export const ANSWER_TTL_MS = 1000

/** Answers kept at most: keys come from requests (search text, offsets). */
const MAX_ANSWERS = 256

/** The reads of `AnalysisStore` whose answers are kept. */
const KEPT_READS = new Set(['pageAnalyses', 'countAnalyses', 'suiteHealth', 'brokenSuites', 'trendDays', 'timeLost'])

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
  /** Answers of the store's analysis reads, each kept for {@link ANSWER_TTL_MS}; dropped on this process's writes. */
  private readonly answers = new Map<string, { at: number; value: Promise<unknown> }>()
  private lastWindow: { at: number; value: AnalysisWindow } | null = null
  /** Moves with each write of this process: a window read before one is not kept. */
  private generation = 0
  private readonly ttlMs: number
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
      /** How long an answer is kept (default and most {@link ANSWER_TTL_MS}). */
      ttlMs?: number
      /** True while a read must see a given write (see `SnapshotCacheOptions.fresh`): nothing kept is used. */
      fresh?: () => boolean
    },
  ) {
    this.config = analysisFingerprint(opts.cfg)
    this.ttlMs = Math.min(ANSWER_TTL_MS, opts.ttlMs ?? ANSWER_TTL_MS)
  }

  /** This process wrote results: answers kept from before are dropped. */
  invalidate(): void {
    this.generation++
    this.answers.clear()
    this.lastWindow = null
  }

  /**
   * The store's analysis reads in window `w`, each answer kept a moment: twenty readers of one page cost one query, and an
   * upload through another instance shows within {@link ANSWER_TTL_MS} of its rows being written.
   */
  analyses(w: AnalysisWindow): AnalysisStore {
    const real = this.opts.store().analyses()
    // With rows pending, answers change as they are re-analysed: none is kept.
    if (this.ttlMs <= 0 || w.pending > 0 || this.opts.fresh?.()) return real
    return new Proxy(real, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function' || typeof prop !== 'string' || !KEPT_READS.has(prop)) return value
        return (...args: unknown[]) =>
          this.kept(`${prop}:${JSON.stringify(args)}`, () =>
            (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
          )
      },
    })
  }

  /**
   * A whole answer computed in window `w`, kept as the store's reads are (see {@link PersistedReads.analyses}): for
   * answers that also read histories (the heatmap's cells).
   */
  keep<T>(w: AnalysisWindow, key: string, compute: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0 || w.pending > 0 || this.opts.fresh?.()) return compute()
    return this.kept(`answer:${w.clock}:${key}`, compute) as Promise<T>
  }

  private kept(key: string, compute: () => Promise<unknown>): Promise<unknown> {
    const now = performance.now()
    const hit = this.answers.get(key)
    if (hit && now - hit.at < this.ttlMs) return hit.value
    const value = compute()
    value.catch(() => this.answers.delete(key))
    this.answers.delete(key)
    // Oldest first: those past their time go now, so that what is kept is at most a second's answers.
    for (const [k, kept] of this.answers) {
      if (now - kept.at < this.ttlMs) break
      this.answers.delete(k)
    }
    this.answers.set(key, { at: now, value })
    if (this.answers.size > MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value!)
    return value
  }

  /** The window of a read at the current clock, its few stale rows re-analysed first. */
  async window(): Promise<AnalysisWindow> {
    const kept = this.lastWindow
    if (kept && performance.now() - kept.at < this.ttlMs && !this.opts.fresh?.()) return kept.value
    const at = performance.now()
    const generation = this.generation
    const value = await this.freshWindow()
    // Only a window with nothing pending is kept: with rows pending, the next read looks (and refreshes) again.
    if (value.pending === 0 && this.ttlMs > 0 && generation === this.generation) this.lastWindow = { at, value }
    return value
  }

  private async freshWindow(): Promise<AnalysisWindow> {
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

  /**
   * One test's analysis at the window's clock when its row holds none yet (never analysed, and no refresh could
   * write it, as on a read-only instance): from its file's histories, at the cost of that one file.
   */
  analyseAfresh(w: AnalysisWindow, testId: string): Promise<string | null> {
    return analyseTestAfresh(this.opts.store(), this.opts.cfg, w.clock, testId)
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
