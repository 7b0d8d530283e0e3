import { compareText } from '../compare-text.js'
import type { TestHistory, TestRef } from '../model.js'
import { pValueText } from './format.js'
import { hadFailure } from './had-failure.js'
import { hintAlpha } from './hint-alpha.js'
import { hypergeometricUpperTail } from './hypergeometric-tail.js'
import type { HintsConfig } from './resolve-analysis-config.js'
import type { OrderHint } from './types.js'

const DAY_MS = 86_400_000

/** One test's executions with a known order: run number, position in the run, and whether it failed. */
export interface OrderSeries {
  test: TestRef
  runs: number[]
  positions: number[]
  failed: number[]
}

/**
 * Order dependency: does `target` fail when a particular other test of its file ran before it in the same run?
 * For each candidate, the executions of `target` split into "candidate ran first" and the rest; the p-value of the
 * failures falling into the first group is Fisher's exact test (hypergeometric upper tail), times the number of
 * candidates whose order varied (Bonferroni). A candidate that always or never ran first tells nothing and is not
 * counted. Returns the most significant polluter below `alpha`, else null.
 * @example orderDependency(victim, [polluter, other], cfg.hints)?.polluter // 'unit::a.test.ts::sets global'
 */
export function orderDependency(
  target: OrderSeries,
  candidates: readonly OrderSeries[],
  cfg: HintsConfig,
): OrderHint | null {
  const n = target.runs.length
  let total = 0
  for (const f of target.failed) total += f
  if (total < cfg.minFailures || total === n) return null
  const at = new Map<number, number>()
  for (let i = 0; i < n; i++) at.set(target.runs[i]!, i)

  let tested = 0
  let best: { c: OrderSeries; before: number; failures: number; p: number } | null = null
  for (const c of candidates) {
    if (c.test.testId === target.test.testId) continue
    let before = 0
    let failures = 0
    for (let j = 0; j < c.runs.length; j++) {
      const i = at.get(c.runs[j]!)
      if (i === undefined || c.positions[j]! >= target.positions[i]!) continue
      before++
      failures += target.failed[i]!
    }
    if (before === 0 || before === n) continue
    tested++
    if (failures < cfg.minFailures || failures / total <= before / n) continue
    const p = hypergeometricUpperTail(failures, n, before, total)
    // Ties go to the first test id, so that the hint does not depend on the order tests were read in.
    if (best === null || p < best.p || (p === best.p && compareText(c.test.testId, best.c.test.testId) < 0))
      best = { c, before, failures, p }
  }
  if (best === null) return null
  const pValue = Math.min(1, best.p * tested)
  if (pValue >= hintAlpha(cfg, 'order_dependency')) return null
  const { c, before, failures } = best
  const failureShare = failures / total
  const executionShare = before / n
  const failRateAfter = failures / before
  const failRateOtherwise = (total - failures) / (n - before)
  return {
    kind: 'order_dependency',
    polluter: c.test.testId,
    polluterName: c.test.name,
    failures,
    totalFailures: total,
    executions: before,
    totalExecutions: n,
    failureShare,
    executionShare,
    failRateAfter,
    failRateOtherwise,
    candidates: tested,
    pValue,
    message:
      `fails after "${c.test.name}" ran before it in the same run: ${failures} of ${total} failures ` +
      `(${pct(failureShare)}) came in the ${pct(executionShare)} of executions that followed it; it fails ` +
      `${pct(failRateAfter)} of the time after it and ${pct(failRateOtherwise)} otherwise ` +
      `(${pValueText(pValue)}, ${tested} candidate polluters)`,
  }
}

export interface OrderIndexContext {
  now: number
  excludedRuns?: ReadonlySet<string>
  lookbackDays: number
}

/**
 * Collects the execution order of every test of a scan, grouped by file (suite and module), then finds the
 * order-dependent tests among them. Order dependency is the one hint that needs other tests' histories, so the
 * analysis adds it after the scan: `add` each history as it streams by, then `hints()`. Memory: three small
 * numbers per result that has a position; histories without positions cost nothing.
 * @example const order = createOrderIndex(cfg.hints, ctx); for (const h of hs) order.add(h); order.hints().get(id)
 */
export function createOrderIndex(cfg: HintsConfig, ctx: OrderIndexContext) {
  const since = ctx.now - ctx.lookbackDays * DAY_MS
  const runNumbers = new Map<string, number>()
  const files = new Map<string, OrderSeries[]>()
  return {
    add(history: TestHistory): void {
      const counted = (e: TestHistory['entries'][number]) =>
        e.position !== undefined &&
        e.position !== null &&
        e.status !== 'skipped' &&
        e.run.at >= since &&
        !ctx.excludedRuns?.has(e.run.runId)
      let count = 0
      for (const e of history.entries) if (counted(e)) count++
      if (count === 0) return
      // Arrays of exactly the size needed: every test of the scan is held until the end, and arrays grown by
      // push reserve room for 17 numbers, several times what a test with a few runs needs.
      const series: OrderSeries = {
        test: history.test,
        runs: new Array<number>(count),
        positions: new Array<number>(count),
        failed: new Array<number>(count),
      }
      let i = 0
      for (const e of history.entries) {
        if (!counted(e)) continue
        let run = runNumbers.get(e.run.runId)
        if (run === undefined) runNumbers.set(e.run.runId, (run = runNumbers.size))
        series.runs[i] = run
        series.positions[i] = e.position!
        series.failed[i] = hadFailure(e) ? 1 : 0
        i++
      }
      const key = `${history.test.suite}\u0000${history.test.module}`
      const file = files.get(key)
      if (file === undefined) files.set(key, [series])
      else file.push(series)
    },
    hints(): Map<string, OrderHint> {
      const out = new Map<string, OrderHint>()
      for (const tests of files.values()) {
        if (tests.length < 2) continue
        for (const t of tests) {
          const hint = orderDependency(t, tests, cfg)
          if (hint !== null) out.set(t.test.testId, hint)
        }
      }
      return out
    },
  }
}

export type OrderIndex = ReturnType<typeof createOrderIndex>

function pct(x: number): string {
  return `${Math.round(x * 100)}%`
}
