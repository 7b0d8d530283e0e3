import type { MaintenanceOutcome, Store } from '../store/store.js'
import { startPeriodic, type Periodic } from './periodic.js'

/** Between maintenances: daily. */
export const MAINTENANCE_INTERVAL_MS = 86_400_000
/** The first one comes this soon after start, so that a fresh deployment has its days ahead at once. */
const FIRST_AFTER_MS = 60_000

export type Maintenance = Periodic

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
  return startPeriodic(opts.firstAfterMs ?? FIRST_AFTER_MS, async () => {
    try {
      opts.onReport(await opts.store.maintain(opts.now()))
    } catch (error) {
      opts.onReport({ days: 0, moved: 0, failed: 1, error: (error as Error).message })
    }
    return opts.intervalMs ?? MAINTENANCE_INTERVAL_MS
  })
}
