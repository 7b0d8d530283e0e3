import { startPeriodic, type Periodic } from './periodic.js'

/** Between sweeps when nothing was due: time moves rows out of date slowly (a window edge at a time). */
export const SWEEP_INTERVAL_MS = 30_000
/** Rows one sweep refreshes before it lets the server breathe; with more due, the next comes at once. */
const SWEEP_ROWS = 500
/**
 * Least pause between sweeps while rows are due. The pause is also at least as long as the chunk took, so that a
 * backlog (every row of a store just migrated) takes at most half of the thread it runs on from that thread's
 * other work (snapshot builds, looks; in process, requests).
 */
const BACKLOG_PAUSE_MS = 50
/** Every this many sweeps, rows made with another configuration are looked for too (that look uses no index). */
const OTHER_CONFIG_EVERY = 20

export type AnalysisSweep = Periodic

export interface SweepReport {
  claimed: number
  written: number
  error: Error | null
}

/** One sweep's chunk: the rows due (and, when asked, those made with another configuration), at most `maxRows`. */
export interface SweepChunk {
  maxRows: number
  otherConfig: boolean
}

/** Runs one chunk of the sweep where analyses run: in the analysis worker thread when there is one. */
export type SweepRefresh = (chunk: SweepChunk) => Promise<{ claimed: number; written: number }>

/**
 * The background sweep of every `serve` instance (docs/scaling.md, "When a row is re-analysed"): re-analyses the
 * persisted analyses that the clock moved past, that a writer left stale (it died between its commit and its own
 * refresh), or that another configuration made. Instances share the work through leases, so each row is done
 * once; a chunk at a time. The chunks run through `refresh`: the server's runs them in its analysis worker thread
 * (`SnapshotBuilder.refresh`), at a lower priority, so that the thread answering requests only times them (a
 * backlog of 100,000 rows after a migration took 9 minutes of it).
 * @example const sweep = startAnalysisSweep({ refresh: (c) => builder.refresh(c), onReport: (r) => log(r) })
 */
export function startAnalysisSweep(opts: {
  refresh: SweepRefresh
  onReport: (report: SweepReport) => void
  intervalMs?: number
  firstAfterMs?: number
}): AnalysisSweep {
  let sweeps = 0
  return startPeriodic(opts.firstAfterMs ?? 1000, async () => {
    let backlog = false
    const started = performance.now()
    try {
      const done = await opts.refresh({ maxRows: SWEEP_ROWS, otherConfig: sweeps++ % OTHER_CONFIG_EVERY === 0 })
      backlog = done.claimed >= SWEEP_ROWS
      if (done.claimed > 0) opts.onReport({ ...done, error: null })
    } catch (error) {
      opts.onReport({ claimed: 0, written: 0, error: error instanceof Error ? error : new Error(String(error)) })
    }
    return backlog ? Math.max(BACKLOG_PAUSE_MS, performance.now() - started) : (opts.intervalMs ?? SWEEP_INTERVAL_MS)
  })
}
