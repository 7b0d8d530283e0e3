import { isFailure, type HistoryEntry } from '../model.js'
import { normalizeMessage } from './normalize-message.js'
import type { FailureMode } from './types.js'

const EXAMPLE_CHARS = 500

/**
 * Groups the failures in `entries` (oldest first) by normalised message: each mode with its count, first and last
 * sighting and one raw example, most frequent first. A run that passed on retry counts when it kept a message.
 * @example failureModes(history.entries, 10)[0]?.signature // 'timeout of <duration> exceeded'
 */
export function failureModes(entries: readonly HistoryEntry[], limit = 10): FailureMode[] {
  let modes: Map<string, FailureMode> | null = null
  for (const e of entries) {
    const failed = isFailure(e.status)
    if (!failed && !(e.failedAttempts > 0 && e.message)) continue
    const norm = e.message ? normalizeMessage(e.message) : '(no message)'
    const signature = e.errorType ? `${e.errorType.toLowerCase()}: ${norm}` : norm
    modes ??= new Map()
    const mode = modes.get(signature)
    if (mode === undefined) {
      modes.set(signature, {
        signature,
        count: 1,
        firstSeen: e.run.at,
        lastSeen: e.run.at,
        firstRunId: e.run.runId,
        lastRunId: e.run.runId,
        errorType: e.errorType,
        example: e.message === null ? null : e.message.slice(0, EXAMPLE_CHARS),
      })
    } else {
      mode.count++
      mode.lastSeen = e.run.at
      mode.lastRunId = e.run.runId
    }
  }
  if (modes === null) return []
  return [...modes.values()].sort((a, b) => b.count - a.count || b.lastSeen - a.lastSeen).slice(0, limit)
}
