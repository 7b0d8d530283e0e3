import type { ResolvedAnalysisConfig, TestAnalysisJson } from '../analysis/index.js'
import { analyseTestAfresh, analysisFingerprint, storeClock } from '../pipeline/persisted-analyses.js'
import type { AnalysisFilter, AnalysisStore } from '../store/analyses.js'
import type { Store } from '../store/store.js'
import type { LeaderboardRow } from './api-types.js'
import type { Selection } from './selection.js'
import type { RefreshAsk, RefreshOutcome } from './snapshot-builder.js'

const DAY_MS = 86_400_000

/**
 * How long an instance serves an answer of the persisted analyses (and the window it read them in) without
 * computing it again, counted from when its computation settled. Short: an upload through another instance shows
 * within it and {@link STALE_SHARE} times more (its own uploads drop them at once).
 */
export const ANSWER_TTL_MS = 500

/**
 * Past its time, an answer is still served for this many TTLs while the next one is computed (one computation per
 * answer): readers do not wait for a busy database (a default heatmap takes most of a second to compute on a loaded
 * two-core machine at 10^6 results), and what they see is at most 1.5 s old. Later than that, a read waits for the
 * new answer.
 */
export const STALE_SHARE = 2

/** Answers kept at most: keys come from requests (search text, offsets). */
const MAX_ANSWERS = 256

/** The reads of `AnalysisStore` whose answers are kept. */
const KEPT_READS = new Set([
  'pageAnalyses',
  'countAnalyses',
  'suiteHealth',
  'brokenSuites',
  'trendDays',
  'timeLost',
  'windowRuns',
])

/**
 * Rows a read asks the analysis worker to re-analyse when it finds rows not exact at its clock (an upload's
 * stragglers, a clock that moved past a few validities), at most one such refresh at a time per instance. The
 * read does not wait for it (but the instance's very first read, when no more are pending): it answers from the
 * rows as they are and says how many are pending; the answers kept are computed again once the refresh has
 * written rows.
 */
export const READ_REFRESH_ROWS = 500

/** The analysis window a read answers for, and how current the persisted rows are at its clock. */
export interface AnalysisWindow {
  /** The analysis clock: the app's, else just after the store's newest run. */
  clock: number
  /** The window's start: tests with a result since then are shown. */
  since: number
  /** Rows not exact at the clock (shown as last analysed). */
  pending: number
  /** When this answer was read. */
  computedAt: number
  runs: number
  newestRunAt: number | null
}

/**
 * Whether the persisted analyses answer a selection: the dashboard's default one (every run of the analysis
 * window), narrowed to a suite or not. A test's runs are all of its own suite, so a suite only narrows which tests
 * and runs are shown, at the default selection's clock. Selections of branches, env facets, last runs or revisions
 * see other results, so they are analysed from their histories (`SnapshotCache`), over a bounded window.
 */
export function answeredByRows(s: Selection): boolean {
  return s.branch === undefined && s.env.length === 0 && s.last === undefined && !s.rev
}

/** One kept answer: the last one computed, and the next while it is computed. */
interface Kept {
  /** The answer served: the last that settled, or the first while it is computed. */
  value: Promise<unknown>
  /** When `value` settled (`performance.now()`); null while the first computation runs. */
  settledAt: number | null
  /** The {@link PersistedReads} epoch `value` was computed in: an older one is out of date. */
  epoch: number
  /** The computation of the next answer, while it runs. */
  next: Promise<unknown> | null
}

/**
 * The server's reads of the persisted analyses (docs/server.md, "How reads are answered"): each read finds the
 * analysis clock and answers from indexed queries on the `analyses` table: nothing is built at start, and memory
 * does not grow with the store. Rows not exact at the clock are re-analysed in the background (in the analysis
 * worker, one refresh at a time for the whole instance), never on the read's path.
 *
 * Answers are kept (stale-while-revalidate): each for {@link ANSWER_TTL_MS} after its computation settled, then
 * served while the next one is computed, one computation per answer at a time. This instance's uploads drop them
 * (its uploader's next read sees the upload), and a read that must see a given write (a replica read pinned to
 * its client's own upload) uses none.
 */
export class PersistedReads {
  private refreshing: Promise<unknown> | null = null
  /** Kept answers, least recently computed first. */
  private answers = new Map<string, Kept>()
  /** Moves when this instance's refresh wrote rows: answers computed before are served only while recomputed. */
  private epoch = 0
  private readonly ttlMs: number
  private readonly staleMs: number
  /** Set once no row of another configuration is left: rows written later carry this one. */
  private configCurrent = false
  private readonly config: string
  /** Set once a window was read: from then on, no read waits for a refresh. */
  private answered = false

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
    this.staleMs = this.ttlMs * STALE_SHARE
  }

  /** This process wrote results: answers kept from before are dropped (computations running are not reused). */
  invalidate(): void {
    this.answers = new Map()
  }

  /** Whether this read uses no kept answer. */
  private bypass(): boolean {
    return this.ttlMs <= 0 || this.opts.fresh?.() === true
  }

  /**
   * The store's analysis reads in window `w`, each answer kept (see the class comment): twenty readers of one
   * page cost one query per TTL. Answers are keyed without the window's start, which moves with every new run:
   * the previous answer is served while the new window's is computed.
   */
  analyses(w: AnalysisWindow): AnalysisStore {
    const real = this.opts.store().analyses()
    if (this.bypass()) return real
    return new Proxy(real, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function' || typeof prop !== 'string' || !KEPT_READS.has(prop)) return value
        return (...args: unknown[]) =>
          this.kept(`${prop}:${JSON.stringify(args, (_, v: unknown) => (v === w.since ? '@since' : v))}`, () =>
            (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
          )
      },
    })
  }

  /**
   * A whole answer, kept as the store's reads are (see {@link PersistedReads.analyses}): for
   * answers that also read histories (the heatmap's cells). `compute` reads the store's analyses as they are (no
   * kept answer of theirs): a new answer is never made of old parts.
   */
  keep<T>(key: string, compute: (analyses: AnalysisStore) => Promise<T>): Promise<T> {
    const analyses = () => this.opts.store().analyses()
    if (this.bypass()) return compute(analyses())
    return this.kept(`answer:${key}`, () => compute(analyses())) as Promise<T>
  }

  private kept(key: string, compute: () => Promise<unknown>): Promise<unknown> {
    const now = performance.now()
    const answers = this.answers
    const hit = answers.get(key)
    if (hit) {
      // The first computation, shared while it runs.
      if (hit.settledAt === null) return hit.value
      const age = now - hit.settledAt
      if (age < this.ttlMs && hit.epoch === this.epoch) return hit.value
      hit.next ??= this.recompute(answers, key, hit, compute)
      return age < this.ttlMs + this.staleMs ? hit.value : hit.next
    }
    const kept: Kept = { value: compute(), settledAt: null, epoch: this.epoch, next: null }
    kept.value.then(
      () => (kept.settledAt = performance.now()),
      // A failed answer is not kept: the next read tries again.
      () => answers.get(key) === kept && answers.delete(key),
    )
    answers.set(key, kept)
    this.trim(answers, now)
    return kept.value
  }

  /** The next answer of `kept`, which replaces it once computed (a failure leaves the previous one). */
  private recompute(answers: Map<string, Kept>, key: string, kept: Kept, compute: () => Promise<unknown>) {
    const epoch = this.epoch
    const next = compute()
    next.then(
      () => {
        kept.value = next
        kept.settledAt = performance.now()
        kept.epoch = epoch
        kept.next = null
        // Least recently computed first, for the trim.
        if (answers.get(key) === kept) {
          answers.delete(key)
          answers.set(key, kept)
        }
      },
      () => (kept.next = null),
    )
    return next
  }

  /** Drops answers past any use (oldest first), and the oldest beyond {@link MAX_ANSWERS}. */
  private trim(answers: Map<string, Kept>, now: number): void {
    for (const [k, kept] of answers) {
      if (kept.settledAt === null || now - kept.settledAt < this.ttlMs + this.staleMs) break
      if (kept.next === null) answers.delete(k)
    }
    if (answers.size > MAX_ANSWERS) answers.delete(answers.keys().next().value!)
  }

  /**
   * The window of a read at the current clock, kept as answers are. Rows not exact at its clock are re-analysed
   * in the background, never awaited here.
   */
  window(): Promise<AnalysisWindow> {
    if (this.bypass()) return this.freshWindow()
    return this.kept('window', () => this.freshWindow()) as Promise<AnalysisWindow>
  }

  private async freshWindow(): Promise<AnalysisWindow> {
    const store = this.opts.store()
    const clock = this.opts.now?.() ?? (await storeClock(store))
    const since = clock - this.opts.cfg.scoring.lookbackDays * DAY_MS
    let pending = await this.pending(store, clock)
    if (pending > 0) {
      const refresh = this.refresh(clock)
      // The instance's first read, with nothing to show meanwhile: a small store's first page is exact.
      if (!this.answered && pending <= READ_REFRESH_ROWS) {
        await refresh
        pending = await this.pending(store, clock)
      }
    }
    const runs = await store.analyses().windowRuns(since)
    this.answered = true
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

  /**
   * One background refresh at a time for the instance, of at most {@link READ_REFRESH_ROWS} rows. Once it has
   * written rows, the answers kept are out of date: each is served while its next one is computed.
   */
  private refresh(clock: number): Promise<unknown> {
    if (this.refreshing) return this.refreshing
    const run = this.opts
      .refresh({ clock, maxRows: READ_REFRESH_ROWS, otherConfig: !this.configCurrent })
      .then(
        (outcome) => {
          if (outcome.written > 0) this.epoch++
        },
        (error: unknown) => this.opts.onError?.(error),
      )
      .finally(() => {
        if (this.refreshing === run) this.refreshing = null
      })
    this.refreshing = run
    return run
  }

  /** Settles once the background refresh running (if any) has: for tests and a clean close. */
  async settled(): Promise<void> {
    while (this.refreshing) await this.refreshing
  }

  /**
   * One test's analysis at the window's clock when its row holds none yet (never analysed, and no refresh could
   * write it, as on a read-only instance): from its file's histories, at the cost of that one file.
   */
  analyseAfresh(w: AnalysisWindow, testId: string): Promise<string | null> {
    return analyseTestAfresh(this.opts.store(), this.opts.cfg, w.clock, testId)
  }

  /** The filter of a read over the window, of one suite's tests if `suite` is given. */
  filter(
    w: AnalysisWindow,
    view: { search?: string; verdict?: AnalysisFilter['verdict'] },
    suite?: string,
  ): AnalysisFilter {
    return { since: w.since, search: view.search, verdict: view.verdict, suite }
  }

  /** How many runs the window has (of `suite` only, if given), and when the newest one is. */
  async runs(w: AnalysisWindow, suite: string | undefined): Promise<{ runs: number; newest: number | null }> {
    if (suite === undefined) return { runs: w.runs, newest: w.newestRunAt }
    return this.analyses(w).windowRuns(w.since, suite)
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
