import type { MaintenanceOutcome, Store } from '../store/store.js'

/** Between maintenances: daily. */
export const MAINTENANCE_INTERVAL_MS = 86_400_000
/** The first one comes this soon after start, so that a fresh deployment has its days ahead at once. */
const FIRST_AFTER_MS = 60_000

export interface Maintenance {
  stop(): Promise<void>
}

/**
 * Runs the store's upkeep (`Store.maintain`: on PostgreSQL, the time partitions of the days ahead, and rows of
 * the default partition moved into days of their own) a minute after start and then daily, one at a time. Every
 * instance may run it: each day is made once, under a lock, and a day already made is skipped.
 * @example const maintenance = startMaintenance({ store, now: Date.now, onReport: (o) => log(o) })
 */
export function startMaintenance(opts: {
  store: Pick<Store, 'maintain'>
  now: () => number
  onReport: (outcome: MaintenanceOutcome) => void
  intervalMs?: number
  firstAfterMs?: number
}): Maintenance {
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const tick = () => {
    running = (async () => {
      try {
        opts.onReport(await opts.store.maintain(opts.now()))
      } catch (error) {
        opts.onReport({ days: 0, moved: 0, failed: 1, error: (error as Error).message })
      }
      if (!stopped) timer = setTimeout(tick, opts.intervalMs ?? MAINTENANCE_INTERVAL_MS).unref()
    })()
  }
  timer = setTimeout(tick, opts.firstAfterMs ?? FIRST_AFTER_MS).unref()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
