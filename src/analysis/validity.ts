import type { TestHistory } from '../model.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'

const DAY_MS = 86_400_000

/** Bounds of a validity that no result limits: a row with no window edge ahead is valid for every later clock. */
export const VALID_EVER_FROM = -Number.MAX_SAFE_INTEGER
export const VALID_EVER_UNTIL = Number.MAX_SAFE_INTEGER

/**
 * A window of the analysis that ends at the clock: a result at time `at` counts in it for every clock up to
 * `at + ms`, and leaves it at the next millisecond. `scope` says whose results: the test's own, or (order
 * dependency, which compares the tests of one file) every file-mate's.
 */
export interface AnalysisWindow {
  name: string
  ms: number
  scope: 'test' | 'file'
}

/**
 * Every window through which an analysis depends on its clock, in one place: the analysis of a test at clock C
 * changes only when one of these windows loses a result. A window added to the analysis must be listed here, or
 * persisted analyses would stay in place after it moved (the property test in test/store catches it).
 * @example analysisWindows(resolveAnalysisConfig()).map((w) => w.name) // ['lookback', 'recent failures', …]
 */
export function analysisWindows(cfg: ResolvedAnalysisConfig): AnalysisWindow[] {
  return [
    { name: 'lookback', ms: cfg.scoring.lookbackDays * DAY_MS, scope: 'test' },
    { name: 'recent failures', ms: cfg.scoring.recentFailureWindow * DAY_MS, scope: 'test' },
    { name: 'success rate', ms: cfg.successRate.days * DAY_MS, scope: 'test' },
    { name: 'order dependency', ms: cfg.scoring.lookbackDays * DAY_MS, scope: 'file' },
  ]
}

/** The clocks `[from, until)` over which an analysis made at one clock stays exact. */
export interface Validity {
  from: number
  until: number
}

/** Tracks the validity edges of window results around one clock (see `validityAt`). */
class Edges {
  from = VALID_EVER_FROM
  until = VALID_EVER_UNTIL
  constructor(private readonly clock: number) {}

  add(at: number, ms: number): void {
    const leaves = Math.floor(at + ms) + 1
    if (leaves <= this.clock) {
      if (leaves > this.from) this.from = leaves
    } else if (leaves < this.until) this.until = leaves
  }
}

/**
 * The part of a validity that a file's executions give (the windows of `scope: 'file'`): the same for every test
 * of the file, so computed once per file, not once per test (a file of 3,000 ordered tests made it 9M steps).
 * @example const shared = fileValidityAt(clock, fileHistories, windows)
 */
export function fileValidityAt(
  clock: number,
  fileMates: readonly TestHistory[],
  windows: readonly AnalysisWindow[],
): Validity {
  const edges = new Edges(clock)
  for (const w of windows) {
    if (w.scope !== 'file') continue
    for (const h of fileMates) {
      for (const e of h.entries) if (e.position !== undefined && e.position !== null) edges.add(e.run.at, w.ms)
    }
  }
  return { from: edges.from, until: edges.until }
}

/**
 * Where an analysis made at `clock` stays exact: between the last moment at or before it and the first moment
 * after it at which a result leaves one of the windows. A window compares `at >= clock - ms`, so for whole
 * clocks a result at `at` leaves at `floor(at + ms) + 1`. Only whole clocks are meant: `analyze` uses a row only
 * at a whole clock. `fileMates` may be given as their {@link fileValidityAt} instead.
 * @example validityAt(100 * DAY, [history], [], analysisWindows(cfg)) // { from: …, until: … }
 */
export function validityAt(
  clock: number,
  own: TestHistory,
  fileMates: readonly TestHistory[] | Validity,
  windows: readonly AnalysisWindow[],
): Validity {
  const edges = new Edges(clock)
  for (const w of windows) {
    if (w.scope === 'test') for (const e of own.entries) edges.add(e.run.at, w.ms)
  }
  const file = 'from' in fileMates ? fileMates : fileValidityAt(clock, fileMates, windows)
  return { from: Math.max(edges.from, file.from), until: Math.min(edges.until, file.until) }
}
