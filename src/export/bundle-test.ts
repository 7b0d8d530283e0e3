import { isFailure, type RunInfo, type TestHistory, type TestRef } from '../model.js'
import type { BundleContextResult, BundleTest } from './bundle-types.js'
import { classifyByThresholds, type BundleClassification } from './classify-bundle-test.js'

export interface BundleTestOptions {
  /** The env facets that make a context: one `results_by_context` entry per combination seen. */
  contextKeys: readonly string[]
  /** Only these runs may be referenced (the bundle's `runs[]`); entries of other runs are left out. */
  runIds?: ReadonlySet<string>
  /**
   * Decides `overall.is_flaky` and `flake_classification` from the counted results (default: GitLabViz's
   * thresholds). May add fields to `overall` through `extra`.
   */
  /** The test's code owners; a non-empty list is written as the additive field `owners`. */
  owners?: (test: TestRef) => string[]
  classify?: (
    history: TestHistory,
    pass: number,
    fail: number,
  ) => BundleClassification & { extra?: Record<string, unknown> }
}

/**
 * Pass rates are written to 4 decimals, as GitLabViz's sample does: enough for a heatmap, and it keeps
 * 2,000 tests × several contexts from spending bytes on `0.6666666666666666`.
 * @example roundRate(2 / 3) // 0.6667
 */
export function roundRate(x: number): number {
  return Math.round(x * 10_000) / 10_000
}

interface Cell {
  values: (string | null)[]
  passing: string[]
  failing: string[]
  lastStatus: 'pass' | 'fail'
  lastRunId: string
}

/**
 * Builds the function that turns one test's history into its `tests[]` entry, or null when nothing in it counts
 * (only skips, or only runs outside the bundle). Skipped results are neither passing nor failing; `error`
 * counts as failing. Run ids are listed newest first, like GitLabViz's sample. Pure apart from a per-run cache.
 * @example const toTest = createBundleTest({ contextKeys: ['gfx_api'] }); toTest(history)?.overall.is_flaky
 */
export function createBundleTest(opts: BundleTestOptions): (history: TestHistory) => BundleTest | null {
  const { contextKeys, runIds } = opts
  const classify: NonNullable<BundleTestOptions['classify']> =
    opts.classify ?? ((_h, pass, fail) => classifyByThresholds(pass, fail))
  // RunInfo objects are shared by every entry of a run, so each run's context is worked out once per export.
  const contextOf = new WeakMap<RunInfo, { key: string; values: (string | null)[] }>()
  const context = (run: RunInfo) => {
    let c = contextOf.get(run)
    if (c === undefined) {
      const values = contextKeys.map((k) => (Object.hasOwn(run.env, k) ? run.env[k]! : null))
      c = { key: JSON.stringify(values), values }
      contextOf.set(run, c)
    }
    return c
  }

  return (history) => {
    const cells = new Map<string, Cell>()
    let pass = 0
    let fail = 0
    const entries = history.entries
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!
      if (e.status === 'skipped') continue
      const runId = e.run.runId
      if (runIds !== undefined && !runIds.has(runId)) continue
      const ctx = context(e.run)
      let cell = cells.get(ctx.key)
      const failed = isFailure(e.status)
      if (cell === undefined) {
        // Newest first, so the first entry seen in a context is its last status.
        cell = { values: ctx.values, passing: [], failing: [], lastStatus: failed ? 'fail' : 'pass', lastRunId: runId }
        cells.set(ctx.key, cell)
      }
      if (failed) {
        cell.failing.push(runId)
        fail++
      } else {
        cell.passing.push(runId)
        pass++
      }
    }
    if (pass + fail === 0) return null

    const results_by_context: BundleContextResult[] = []
    // Sorted by facet values, so that two exports of the same data are byte-identical and diff cleanly.
    const keys = [...cells.keys()].sort()
    for (const key of keys) {
      const cell = cells.get(key)!
      const r: Record<string, unknown> = {}
      contextKeys.forEach((k, i) => (r[k] = cell.values[i]))
      const p = cell.passing.length
      const f = cell.failing.length
      r.passing_run_ids = cell.passing
      r.failing_run_ids = cell.failing
      r.pass_count = p
      r.fail_count = f
      r.pass_rate = roundRate(p / (p + f))
      r.last_status = cell.lastStatus
      r.last_run_id = cell.lastRunId
      results_by_context.push(r as BundleContextResult)
    }
    const { extra, ...classification } = classify(history, pass, fail)
    const t = history.test
    const owners = opts.owners?.(t) ?? []
    return {
      test_id: t.testId,
      // Empty means unknown (an imported bundle without them): written back as the schema's null.
      suite: t.suite || null,
      name: t.name,
      module: t.module || null,
      results_by_context,
      ...(owners.length ? { owners } : {}),
      overall: {
        pass_count: pass,
        fail_count: fail,
        pass_rate: roundRate(pass / (pass + fail)),
        ...classification,
        ...extra,
      },
    }
  }
}
