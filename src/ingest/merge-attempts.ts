import { foldAttempts } from '../fold-attempts.js'
import type { ParsedCase } from './types.js'

function envKey(c: ParsedCase): string {
  if (!c.env) return ''
  const entries = Object.entries(c.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify(entries)
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
  const first = group[0]!
  return { ...first, file: group.find((c) => c.file !== null)?.file ?? null, ...foldAttempts(group) }
}
