import { isFailure, type HistoryEntry } from '../model.js'
import { binomialUpperTail } from './binomial-tail.js'
import { pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import type { TimeoutHint } from './types.js'
import { compareText } from '../compare-text.js'

/** Durations within this share of the ceiling count as "at the ceiling" (timer jitter, teardown time). */
export const CEILING_TOLERANCE = 0.05
/** A median duration this much higher in the last third of the history than in the first is called a rise. */
const TREND_RISE = 1.15
const TIMEOUT_MESSAGE = /time[ds]?[\s_-]?out|timed out|exceeded .*\d\s*m?s/i

/**
 * Timeouts: failures whose durations sit at a ceiling (the same duration ± 5%, or a timeout message), when passes
 * rarely come near it. The ceiling is the densest ±5% band of failure durations. p-value: P(X ≥ k) for
 * X ~ Binomial(failures, share of passes at or above the band), times the number of bands tried (Bonferroni).
 * Then relates them to runner speed, measured as this test's median duration on each runner: when the slowest
 * runners hold the timeouts (binomial test over the top-m runners, Bonferroni over m), the hint names them; and it
 * reports the test's own duration trend (first third against last third of its passes).
 * @example timeoutHint(entries, cfg.hints)?.message
 * // 'times out at 30 s: 9 of 9 failures at the ceiling; 8 of 9 on the 3 slowest runners (…), where its median …'
 */
export function timeoutHint(entries: readonly HistoryEntry[], cfg: HintsConfig): TimeoutHint | null {
  const failures: { e: HistoryEntry; ms: number | null; said: boolean }[] = []
  for (const e of entries) {
    if (!hadFailure(e)) continue
    const ms = isFailure(e.status)
      ? e.durationMs
      : e.failedAttempts > 0 && e.failedAttemptsMs > 0
        ? e.failedAttemptsMs / e.failedAttempts
        : null
    failures.push({ e, ms, said: e.message !== null && TIMEOUT_MESSAGE.test(e.message) })
  }
  const total = failures.length
  if (total < cfg.minFailures || total === entries.length) return null

  // The densest band [d, d·(1+2·tol)] anchored at each failure duration.
  const timed = failures.map((f) => f.ms).filter((ms): ms is number => ms !== null && ms > 0)
  timed.sort((a, b) => a - b)
  if (timed.length === 0) return null
  let bestLo = 0
  let bestHi = -1
  for (let lo = 0, hi = 0; lo < timed.length; lo++) {
    while (hi + 1 < timed.length && timed[hi + 1]! <= timed[lo]! * (1 + 2 * CEILING_TOLERANCE)) hi++
    if (hi - lo >= bestHi - bestLo) {
      bestLo = lo
      bestHi = hi
    }
  }
  const band = timed.slice(bestLo, bestHi + 1)
  const ceilingMs = band[band.length >> 1]!
  const lower = timed[bestLo]!
  const upper = timed[bestHi]!
  const atCeiling = failures.filter((f) => (f.ms !== null ? f.ms >= lower && f.ms <= upper : f.said))
  const k = atCeiling.length
  if (k < cfg.minFailures || k * 2 <= total) return null
  // A ceiling is a maximum: passes that reach it would be timeouts that happened to pass.
  let passesTimed = 0
  let passesNear = 0
  for (const e of entries) {
    if (e.durationMs === null || hadFailure(e)) continue
    passesTimed++
    if (e.durationMs >= lower) passesNear++
  }
  const share = (passesNear + 1) / (passesTimed + 1)
  const pValue = Math.min(1, binomialUpperTail(k, total, share) * timed.length)
  if (pValue >= hintAlpha(cfg, 'timeout')) return null

  const slow = slowRunners(entries, new Set(atCeiling.map((f) => f.e)), k, cfg)
  const trend = durationTrend(entries)
  let message = `times out at ${duration(ceilingMs)}: ${k} of ${total} failures at that duration (±${CEILING_TOLERANCE * 100}%), which passes reach in ${pct(passesNear / Math.max(1, passesTimed))} of executions (${pValueText(pValue)})`
  if (slow !== null) {
    message += `; ${slow.failures} of ${k} on the ${slow.runners.length === 1 ? 'slowest runner' : `${slow.runners.length} slowest runners`} (${slow.runners.join(', ')}), where its median duration is ${duration(slow.medianMs)} (${pValueText(slow.pValue)})`
  }
  if (trend.first !== null && trend.last !== null && trend.last >= trend.first * TREND_RISE) {
    message += `; its median duration rose from ${duration(trend.first)} to ${duration(trend.last)}`
  }
  return {
    kind: 'timeout',
    ceilingMs,
    failures: k,
    totalFailures: total,
    failureShare: k / total,
    executionShare: (k + passesNear) / entries.length,
    pValue,
    slowRunners: slow?.runners ?? [],
    slowRunnerFailures: slow?.failures ?? 0,
    slowRunnerExecutionShare: slow?.executionShare ?? 0,
    slowRunnerMedianMs: slow?.medianMs ?? null,
    slowRunnerPValue: slow?.pValue ?? null,
    medianFirstMs: trend.first,
    medianLastMs: trend.last,
    message,
  }
}

interface SlowRunners {
  runners: string[]
  failures: number
  executionShare: number
  medianMs: number
  pValue: number
}

/** The m slowest runners (by this test's median duration there) that hold the timeouts best, if significant. */
function slowRunners(
  entries: readonly HistoryEntry[],
  timeouts: Set<HistoryEntry>,
  k: number,
  cfg: HintsConfig,
): SlowRunners | null {
  const byRunner = new Map<string, { ms: number[]; n: number; t: number }>()
  for (const e of entries) {
    const id = e.run.runnerId
    if (id === null) continue
    let r = byRunner.get(id)
    if (r === undefined) byRunner.set(id, (r = { ms: [], n: 0, t: 0 }))
    r.n++
    if (timeouts.has(e)) r.t++
    if (e.durationMs !== null) r.ms.push(e.durationMs)
  }
  if (byRunner.size < 2) return null
  const ranked = [...byRunner]
    .map(([id, r]) => ({ id, ...r, median: median(r.ms) ?? -Infinity }))
    .sort((a, b) => b.median - a.median || compareText(a.id, b.id))
  const n = entries.length
  let best: SlowRunners | null = null
  let executions = 0
  let failures = 0
  const tests = ranked.length - 1
  for (let m = 1; m <= tests; m++) {
    executions += ranked[m - 1]!.n
    failures += ranked[m - 1]!.t
    const executionShare = executions / n
    if (failures < cfg.minFailures || failures / k <= executionShare) continue
    const pValue = Math.min(1, binomialUpperTail(failures, k, executionShare) * tests)
    if (pValue < hintAlpha(cfg, 'timeout') && (best === null || pValue < best.pValue)) {
      const top = ranked.slice(0, m)
      best = {
        runners: top.map((r) => r.id),
        failures,
        executionShare,
        medianMs: median(top.flatMap((r) => r.ms)) ?? 0,
        pValue,
      }
    }
  }
  return best
}

/** Median passing duration in the first and the last third of the history. */
function durationTrend(entries: readonly HistoryEntry[]): { first: number | null; last: number | null } {
  const third = Math.floor(entries.length / 3)
  if (third < 3) return { first: null, last: null }
  const passing = (from: number, to: number) => {
    const out: number[] = []
    for (let i = from; i < to; i++) {
      const e = entries[i]!
      if (!hadFailure(e) && e.durationMs !== null) out.push(e.durationMs)
    }
    return median(out)
  }
  return { first: passing(0, third), last: passing(entries.length - third, entries.length) }
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** `27 s`, `1.5 s`, `850 ms`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  return s < 10 ? `${Math.round(s * 10) / 10} s` : `${Math.round(s)} s`
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`
}
