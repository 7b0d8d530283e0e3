import { isFailure, type HistoryEntry } from '../model.js'

/**
 * Whether a run saw the test fail at all, even when a retry made up for it. Fixes, new flakiness, associations
 * and bursts count these; verdicts on final outcomes (broken, episodes) use `isFailure(status)`.
 * @example hadFailure({ ...entry, status: 'passed', failedAttempts: 1 }) // true
 */
export function hadFailure(e: HistoryEntry): boolean {
  return e.failedAttempts > 0 || e.flakyOnRetry || isFailure(e.status)
}
