import { isFailure, type Attempt, type ResultStatus } from './model.js'

/** What folding needs of a case or a result: its outcome and its attempts (empty: one attempt, the outcome). */
export interface Repeatable {
  status: ResultStatus
  flakyOnRetry: boolean
  durationMs: number | null
  errorType: string | null
  message: string | null
  stack?: string | null
  healingOccurred: boolean
  attempts: Attempt[]
}

/** The outcome of several executions of one test in one run, folded into one. */
export type Folded = Required<Repeatable>

/** An execution's own attempts, or the one attempt its final status stands for. */
export function attemptsOf(c: Repeatable): Attempt[] {
  if (c.attempts.length > 0) return c.attempts
  return [{ retry: 0, status: c.status, durationMs: c.durationMs, message: c.message, stack: c.stack ?? null }]
}

/**
 * The one rule for repeated executions of a test within one report (reruns by gotestsum `--rerun-fails`,
 * pytest-rerunfailures, Playwright `--repeat-each`): all attempts, in report order, renumbered from 0. The final
 * status is the last attempt that ran (skipped attempts do not decide unless all were skipped), so a pass followed
 * by a failure is a failure. flakyOnRetry: the final attempt passed after an earlier one failed or errored. The
 * message, stack and error type are the latest failing attempt's. Used by ingest (cases in one chunk) and by the
 * stores (a repeat that arrives after its first execution was written).
 * @example foldAttempts([failed, passed]).flakyOnRetry // true
 */
export function foldAttempts(group: readonly Repeatable[]): Folded {
  const attempts: Attempt[] = []
  const sources: Repeatable[] = []
  for (const c of group) {
    for (const a of attemptsOf(c)) {
      attempts.push({ ...a, retry: attempts.length })
      sources.push(c)
    }
  }
  let last = -1
  for (let i = attempts.length - 1; i >= 0 && last < 0; i--) if (attempts[i]!.status !== 'skipped') last = i
  const status = last >= 0 ? attempts[last]!.status : 'skipped'
  let earlierFailure = -1
  for (let i = last - 1; i >= 0 && earlierFailure < 0; i--) if (isFailure(attempts[i]!.status)) earlierFailure = i
  const flakyOnRetry = status === 'passed' && earlierFailure >= 0
  // Why it failed (or why it flaked): the latest failing attempt, with the error type of the execution it came from.
  const shown = isFailure(status) ? last : flakyOnRetry ? earlierFailure : -1
  let total = 0
  let timed = false
  for (const a of attempts) {
    if (a.durationMs !== null) {
      total += a.durationMs
      timed = true
    }
  }
  return {
    status,
    flakyOnRetry,
    durationMs: timed ? Math.round(total * 1000) / 1000 : null,
    errorType: shown >= 0 ? sources[shown]!.errorType : null,
    message: shown >= 0 ? attempts[shown]!.message : null,
    stack: shown >= 0 ? attempts[shown]!.stack : null,
    healingOccurred: group.some((c) => c.healingOccurred),
    attempts,
  }
}
