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

/**
 * Where an analysis made at `clock` stays exact: between the last moment at or before it and the first moment
 * after it at which a result leaves one of the windows. A window compares `at >= clock - ms`, so for whole
 * clocks a result at `at` leaves at `floor(at + ms) + 1`. Only whole clocks are meant: `analyze` uses a row only
 * at a whole clock.
 * @example validityAt(100 * DAY, [history], [], analysisWindows(cfg)) // { from: …, until: … }
 */
export function validityAt(
  clock: number,
  own: TestHistory,
  fileMates: readonly TestHistory[],
  windows: readonly AnalysisWindow[],
): Validity {
  let from = VALID_EVER_FROM
  let until = VALID_EVER_UNTIL
  const edge = (at: number, ms: number) => {
    const leaves = Math.floor(at + ms) + 1
    if (leaves <= clock) {
      if (leaves > from) from = leaves
    } else if (leaves < until) until = leaves
  }
  for (const w of windows) {
    if (w.scope === 'test') {
      for (const e of own.entries) edge(e.run.at, w.ms)
      continue
    }
    for (const h of fileMates) {
      for (const e of h.entries) if (e.position !== undefined && e.position !== null) edge(e.run.at, w.ms)
    }
  }
  return { from, until }
}
