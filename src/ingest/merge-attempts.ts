import { isFailure, type Attempt } from '../model.js'
import type { ParsedCase } from './types.js'

function envKey(c: ParsedCase): string {
  if (!c.env) return ''
  const entries = Object.entries(c.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify(entries)
}

/** A case's own attempts, or the one attempt its final status stands for. */
function attemptsOf(c: ParsedCase): Attempt[] {
  if (c.attempts.length > 0) return c.attempts
  return [{ retry: 0, status: c.status, durationMs: c.durationMs, message: c.message, stack: c.stack }]
}

/**
 * Folds cases that share an identity (module, name, env) within one report into one case whose attempts are
 * all of theirs, in report order, renumbered from 0. Reruns are reported this way by gotestsum
 * `--rerun-fails`, pytest-rerunfailures and Playwright `--repeat-each` (as CTRF), and a test id must be
 * unique per run. The final status is the last attempt that ran (skipped attempts do not decide unless all
 * were skipped), so a pass followed by a failure is a failure. flakyOnRetry: the final attempt passed after
 * an earlier one failed or errored.
 * @example mergeRepeatedCases([failedA, passedA]) // [{ ...passedA, flakyOnRetry: true, attempts: [failed, passed] }]
 */
export function mergeRepeatedCases(cases: ParsedCase[]): ParsedCase[] {
  // module → name → env → cases. Nested maps, not one concatenated key: modules are shared strings whose hash
  // V8 computes once, and a report of 100k+ cases should not build 100k+ throwaway keys.
  const byModule = new Map<string, Map<string, Map<string, ParsedCase[]>>>()
  const groups: ParsedCase[][] = []
  for (const c of cases) {
    let byName = byModule.get(c.module)
    if (!byName) byModule.set(c.module, (byName = new Map<string, Map<string, ParsedCase[]>>()))
    let byEnv = byName.get(c.name)
    if (!byEnv) byName.set(c.name, (byEnv = new Map<string, ParsedCase[]>()))
    const key = envKey(c)
    const group = byEnv.get(key)
    if (group) group.push(c)
    else {
      const fresh = [c]
      byEnv.set(key, fresh)
      groups.push(fresh)
    }
  }
  if (groups.length === cases.length) return cases
  return groups.map((g) => (g.length === 1 ? g[0]! : merge(g)))
}

function merge(group: ParsedCase[]): ParsedCase {
  const attempts: Attempt[] = []
  const sources: ParsedCase[] = []
  for (const c of group) {
    for (const a of attemptsOf(c)) {
      attempts.push({ ...a, retry: attempts.length })
      sources.push(c)
    }
  }
  const ran = attempts.map((a, i) => ({ a, source: sources[i]! })).filter(({ a }) => a.status !== 'skipped')
  const last = ran.at(-1)
  const status = last ? last.a.status : 'skipped'
  const flakyOnRetry = status === 'passed' && ran.slice(0, -1).some(({ a }) => isFailure(a.status))
  // Why it failed (or why it flaked): the latest failing attempt, with the error type of the case it came from.
  const shown = isFailure(status) ? last : flakyOnRetry ? ran.findLast(({ a }) => isFailure(a.status)) : undefined
  const durations = attempts.map((a) => a.durationMs).filter((d): d is number => d !== null)
  const first = group[0]!
  return {
    ...first,
    file: group.find((c) => c.file !== null)?.file ?? null,
    status,
    flakyOnRetry,
    durationMs: durations.length > 0 ? Math.round(durations.reduce((x, y) => x + y, 0) * 1000) / 1000 : null,
    errorType: shown?.source.errorType ?? null,
    message: shown?.a.message ?? null,
    stack: shown?.a.stack ?? null,
    healingOccurred: group.some((c) => c.healingOccurred),
    attempts,
  }
}
