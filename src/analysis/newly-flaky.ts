import type { HistoryEntry } from '../model.js'
import { hadFailure } from './had-failure.js'
import { day, shortRev } from './format.js'
import type { VerdictConfig } from './resolve-analysis-config.js'
import type { ChangeHint } from './types.js'

/**
 * When a test that used to pass started failing: the first failure, if the clean run before it is at least
 * `fixedMinRuns` long and too long for the failure rate since ((1 − p_after)^clean < fixedAlpha).
 * @example newlyFlaky(entries, resolveAnalysisConfig().verdict)?.revision // 'a1b2c3d'
 */
export function newlyFlaky(entries: readonly HistoryEntry[], cfg: VerdictConfig): ChangeHint | null {
  const n = entries.length
  let first = 0
  while (first < n && !hadFailure(entries[first]!)) first++
  if (first === n || first < cfg.fixedMinRuns) return null
  let failuresAfter = 0
  for (let i = first; i < n; i++) if (hadFailure(entries[i]!)) failuresAfter++
  const after = n - first
  if (failuresAfter < 2 || Math.pow(1 - failuresAfter / after, first) >= cfg.fixedAlpha) return null
  const start = entries[first]!
  const rev = shortRev(start.run.revision)
  const since = `${failuresAfter} failures in ${after} runs since`
  return {
    kind: 'newly_flaky',
    since: start.run.at,
    runId: start.run.runId,
    revision: start.run.revision,
    runsBefore: first,
    runsAfter: after,
    failuresBefore: 0,
    failuresAfter,
    message: `newly flaky: no failures in the ${first} runs before revision ${rev} (${day(start.run.at)}), ${since}`,
  }
}
