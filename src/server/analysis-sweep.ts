import type { ResolvedAnalysisConfig } from '../analysis/resolve-analysis-config.js'
import { refreshAnalyses } from '../pipeline/persisted-analyses.js'
import type { Store } from '../store/store.js'

/** Between sweeps when nothing was due: time moves rows out of date slowly (a window edge at a time). */
export const SWEEP_INTERVAL_MS = 30_000
/** Rows one sweep refreshes before it lets the server breathe; with more due, the next comes at once. */
const SWEEP_ROWS = 500
/**
 * Least pause between sweeps while rows are due. The pause is also at least as long as the chunk took, so that a
 * backlog (every row of a store just migrated) takes at most half of the server's thread from its requests.
 */
const BACKLOG_PAUSE_MS = 50
/** Every this many sweeps, rows made with another configuration are looked for too (that look uses no index). */
const OTHER_CONFIG_EVERY = 20

export interface AnalysisSweep {
  stop(): Promise<void>
}

export interface SweepReport {
  claimed: number
  written: number
  error: string | null
}

/**
 * The background sweep of every `serve` instance (docs/scaling.md, "When a row is re-analysed"): re-analyses the
 * persisted analyses that the clock moved past, that a writer left stale (it died between its commit and its own
 * refresh), or that another configuration made. Instances share the work through leases, so each row is done
 * once; a chunk at a time, so that an instance keeps answering.
 * @example const sweep = startAnalysisSweep({ store, cfg, onReport: (r) => log(r) })
 */
export function startAnalysisSweep(opts: {
  store: Store
  cfg: ResolvedAnalysisConfig
  onReport: (report: SweepReport) => void
  intervalMs?: number
  firstAfterMs?: number
}): AnalysisSweep {
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  let sweeps = 0
  const tick = () => {
    running = (async () => {
      let backlog = false
      const started = performance.now()
      try {
        const done = await refreshAnalyses(opts.store, opts.cfg, {
          maxRows: SWEEP_ROWS,
          otherConfig: sweeps++ % OTHER_CONFIG_EVERY === 0,
        })
        backlog = done.claimed >= SWEEP_ROWS
        if (done.claimed > 0) opts.onReport({ ...done, error: null })
      } catch (error) {
        opts.onReport({ claimed: 0, written: 0, error: (error as Error).message })
      }
      if (!stopped)
        timer = setTimeout(
          tick,
          backlog ? Math.max(BACKLOG_PAUSE_MS, performance.now() - started) : (opts.intervalMs ?? SWEEP_INTERVAL_MS),
        ).unref()
    })()
  }
  timer = setTimeout(tick, opts.firstAfterMs ?? 1000).unref()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
