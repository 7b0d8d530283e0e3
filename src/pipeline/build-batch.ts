import type { ParsedCase, ParsedReport } from '../ingest/types.js'
import { makeTestId, type EnvFacets, type Result } from '../model.js'
import type { ReportBatch, RunBatch } from '../store/store.js'
import { mergeContexts, toRunMeta, type RunContext } from './run-context.js'

/** The suite a run belongs to when nobody names one. */
export const DEFAULT_SUITE = 'default'

export interface BuildBatchInput {
  parsed: ParsedReport
  /** File or upload name, for provenance. */
  file: string
  contentHash: string
  /** CLI flags and CI variables; they win over what the report says. */
  context: RunContext
}

function facetKey(env: EnvFacets | undefined): string {
  if (!env) return ''
  return Object.keys(env)
    .sort()
    .map((k) => `${k}=${env[k]}`)
    .join(',')
}

function toResult(c: ParsedCase, suite: string): Result {
  return {
    test: { testId: makeTestId(suite, c.module, c.name), suite, module: c.module, name: c.name, file: c.file },
    status: c.status,
    flakyOnRetry: c.flakyOnRetry,
    durationMs: c.durationMs,
    errorType: c.errorType,
    message: c.message,
    healingOccurred: c.healingOccurred,
    attempts: c.attempts,
  }
}

/**
 * Turns a parsed report into what the store keeps: run metadata layered as report < context, a run id (the
 * context's, the report's, or one derived from the content so that re-ingesting the same file is recognised),
 * and one run per set of case facets (a Playwright report with two projects is two runs of the suite).
 * @example buildReportBatch({ parsed, file: 'junit.xml', contentHash, context: { suite: 'unit' } })
 */
export function buildReportBatch(input: BuildBatchInput): ReportBatch {
  const { parsed, context } = input
  const merged = mergeContexts(parsed.meta, context)
  const suite = merged.suite ?? DEFAULT_SUITE
  const baseRunId = merged.runId ?? `local-${input.contentHash.slice(0, 16)}`
  const groups = new Map<string, { env: EnvFacets | undefined; cases: ParsedCase[] }>()
  for (const c of parsed.cases) {
    const key = facetKey(c.env)
    let g = groups.get(key)
    if (!g) groups.set(key, (g = { env: c.env, cases: [] }))
    g.cases.push(c)
  }
  if (groups.size === 0) groups.set('', { env: undefined, cases: [] })
  const runs: RunBatch[] = []
  for (const [key, g] of groups) {
    const runId = groups.size > 1 && key ? `${baseRunId}[${key}]` : baseRunId
    const run = toRunMeta(runId, suite, { ...merged, env: { ...(merged.env ?? {}), ...(g.env ?? {}) } })
    runs.push({ run, results: g.cases.map((c) => toResult(c, suite)) })
  }
  return { file: input.file, contentHash: input.contentHash, runs }
}
