import { isFailure, type HistoryEntry, type TestHistory } from '../model.js'
import { periodSignals } from './period-signals.js'
import type { AnalysisContext } from './analyze-test.js'
import type { ResolvedAnalysisConfig } from './resolve-analysis-config.js'

const DAY_MS = 86_400_000

/** One character per result: P passed, R passed on retry, F failed, E error, S skipped. */
export type ResultCell = 'P' | 'R' | 'F' | 'E' | 'S'

export function cellOf(e: Pick<HistoryEntry, 'status' | 'flakyOnRetry'>): ResultCell {
  switch (e.status) {
    case 'passed':
      return e.flakyOnRetry ? 'R' : 'P'
    case 'failed':
      return 'F'
    case 'error':
      return 'E'
    default:
      return 'S'
  }
}

/**
 * What the server's kiosk and trends show of a test beside its analysis, over the results inside the analysis
 * window (as the dashboard's default selection sees them). Persisted with the analysis, so that those pages read
 * rows instead of histories.
 */
export interface WindowFacts {
  /** The last five results as cells, oldest first. */
  last5: string
  /** Failures in a row at the end of the countable results (skipped and infrastructure-failure runs left out). */
  streak: number
  /** When that streak began. */
  streakSince: number | null
  /** When it last failed (countable results only), for its suite's days without failures. */
  windowFailureAt: number | null
  /** Its share of the trends, flat `[day, flaky, broken, …]` (see `periodSignals`). */
  days: number[]
}

/**
 * The {@link WindowFacts} of one history at the analysis clock. Pure.
 * @example windowFacts(history, cfg, { now, excludedRuns }).streak
 */
export function windowFacts(h: TestHistory, cfg: ResolvedAnalysisConfig, ctx: AnalysisContext): WindowFacts {
  const since = ctx.now - cfg.scoring.lookbackDays * DAY_MS
  return entryFacts(
    h.entries.filter((e) => e.run.at >= since),
    ctx.excludedRuns ?? new Set<string>(),
    cfg,
  )
}

/**
 * The {@link WindowFacts} of these results, oldest first, whatever selected them: the analysis window's for a
 * persisted row, a dashboard selection's for the server's snapshot. Pure.
 */
export function entryFacts(
  entries: readonly HistoryEntry[],
  excluded: ReadonlySet<string>,
  cfg: ResolvedAnalysisConfig,
): WindowFacts {
  let streak = 0
  let streakSince: number | null = null
  let lastFailure: number | null = null
  for (const e of entries) {
    if (e.status === 'skipped' || excluded.has(e.run.runId)) continue
    if (isFailure(e.status)) {
      if (streak++ === 0) streakSince = e.run.at
      if (lastFailure === null || e.run.at > lastFailure) lastFailure = e.run.at
    } else {
      streak = 0
      streakSince = null
    }
  }
  return {
    last5: entries
      .slice(-5)
      .map((e) => cellOf(e))
      .join(''),
    streak,
    streakSince,
    windowFailureAt: lastFailure,
    days: periodSignals(entries, excluded, cfg.verdict.brokenMinConsecutive, (at) => Math.floor(at / DAY_MS)),
  }
}
