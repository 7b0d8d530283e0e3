import { ReportLimitError } from '../errors.js'
import { relativeToRoot } from '../ingest/repo-root.js'
import { trustCase, trustRun } from '../ingest/trust.js'
import type { ParsedCase, ParsedReport, ParsedStream } from '../ingest/types.js'
import { IngestWarnings } from '../ingest/warnings.js'
import {
  MAX_CASES_PER_REPORT,
  MAX_FACET_TEXT,
  MAX_FACETS,
  MAX_RUNS_PER_REPORT,
  resolveIngestLimits,
  type IngestLimits,
} from '../limits.js'
import { makeTestId, type EnvFacets, type Result, type RunMeta } from '../model.js'
import type { ReportBatch, ReportStream, RunBatch } from '../store/store.js'
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
  /** Absolute test paths inside this directory become relative to it (see `resolveRepoRoot`). */
  root?: string | null
}

function facetKey(env: EnvFacets | undefined): string {
  if (!env) return ''
  return Object.keys(env)
    .sort()
    .map((k) => `${k}=${env[k]}`)
    .join(',')
}

/**
 * The run id of one facet set of a report: cases that carry their own facets (a Playwright project) form their
 * own run, `<run id>[project=chromium]`, whether or not the report holds other projects, so that a project has
 * the same run id when its report is split per project.
 */
function runIdFor(baseRunId: string, key: string): string {
  return key ? `${baseRunId}[${key}]` : baseRunId
}

/**
 * `index` is the case's place in the report: its execution order unless the parser knew better (start times), so
 * that order-dependency hints work on every format that lists tests in the order they ran.
 */
function toResult(c: ParsedCase, suite: string, index: number, root: string | null | undefined): Result {
  // A report with absolute paths (Jest's JSON, CTRF) names the same file differently on each machine, and
  // differently from the formats that write relative paths: relative to the repository, the test has one id.
  const module = root ? relativeToRoot(c.module, root) : c.module
  const file = root && c.file !== null ? relativeToRoot(c.file, root) : c.file
  return {
    test: {
      testId: makeTestId(suite, module, c.name),
      suite,
      module,
      name: c.name,
      file,
      ...(c.moduleIsLabel ? { moduleIsLabel: true } : {}),
    },
    status: c.status,
    flakyOnRetry: c.flakyOnRetry,
    durationMs: c.durationMs,
    errorType: c.errorType,
    message: c.message,
    healingOccurred: c.healingOccurred,
    attempts: c.attempts,
    position: c.position ?? index,
  }
}

/** Suite and base run id: context over report, else a run id derived from the content (re-ingest = duplicate). */
function runBase(meta: ParsedReport['meta'], context: RunContext, contentHash: string) {
  const merged = mergeContexts(meta, context)
  return {
    merged,
    suite: merged.suite ?? DEFAULT_SUITE,
    baseRunId: merged.runId ?? `local-${contentHash.slice(0, 16)}`,
  }
}

function runMeta(runId: string, suite: string, merged: RunContext, env: EnvFacets | undefined): RunMeta {
  return toRunMeta(runId, suite, { ...merged, env: { ...(merged.env ?? {}), ...(env ?? {}) } })
}

/**
 * Turns a parsed report into what the store keeps: run metadata layered as report < context, a run id (the
 * context's, the report's, or one derived from the content so that re-ingesting the same file is recognised),
 * and one run per set of case facets (a Playwright report with two projects is two runs of the suite).
 * @example buildReportBatch({ parsed, file: 'junit.xml', contentHash, context: { suite: 'unit' } })
 */
export function buildReportBatch(input: BuildBatchInput): ReportBatch {
  const { parsed, context } = input
  const { merged, suite, baseRunId } = runBase(parsed.meta, context, input.contentHash)
  const groups = new Map<string, { env: EnvFacets | undefined; results: Result[] }>()
  parsed.cases.forEach((c, index) => {
    const key = facetKey(c.env)
    let g = groups.get(key)
    if (!g) groups.set(key, (g = { env: c.env, results: [] }))
    g.results.push(toResult(trustCase(c), suite, index, input.root))
  })
  if (groups.size === 0) groups.set('', { env: undefined, results: [] })
  const now = Date.now()
  const runs: RunBatch[] = []
  for (const [key, g] of groups) {
    const run = trustRun(runMeta(runIdFor(baseRunId, key), suite, merged, g.env), now)
    const timings = parsed.meta.timings
    runs.push({ run: timings?.length ? { ...run, timings } : run, results: g.results })
  }
  return { file: input.file, contentHash: input.contentHash, runs }
}

export interface BuildStreamInput {
  parsed: ParsedStream
  file: string
  contentHash: string
  context: RunContext
  limits?: Partial<IngestLimits>
  /** The moment of ingest (epoch ms): untrusted run times are replaced by it. */
  now?: number
  /** Absolute test paths inside this directory become relative to it (see `resolveRepoRoot`). */
  root?: string | null
}

interface RunGroup {
  env: EnvFacets | undefined
  runId: string
  run: RunMeta
}

/**
 * The streaming {@link buildReportBatch}: each chunk of parsed cases becomes a chunk of run batches as the store
 * pulls it. Counts are checked against the limits as they stream (cases per report, runs per report, attempts per
 * case, facets), untrusted durations and times are replaced and noted in `warnings`. The run id and suite are
 * fixed when the first chunk arrives; the rest of the run's metadata is final in `stream.runs()`.
 * @example const { stream, warnings } = buildReportStream({ parsed, file, contentHash, context })
 */
export function buildReportStream(input: BuildStreamInput): {
  stream: ReportStream<RunBatch>
  warnings: IngestWarnings
} {
  const { parsed, context, file } = input
  const limits = resolveIngestLimits(input.limits)
  const now = input.now ?? Date.now()
  const warnings = new IngestWarnings()
  const groups = new Map<string, RunGroup>()
  let base: ReturnType<typeof runBase> | null = null
  const baseNow = () => (base ??= runBase(parsed.meta, context, input.contentHash))

  const groupOf = (env: EnvFacets | undefined): RunGroup => {
    const key = facetKey(env)
    let g = groups.get(key)
    if (g) return g
    if (groups.size >= MAX_RUNS_PER_REPORT) {
      throw new ReportLimitError(file, 'runs (facet sets such as Playwright projects)', MAX_RUNS_PER_REPORT, undefined)
    }
    checkFacets(file, env)
    const { merged, suite, baseRunId } = baseNow()
    const runId = runIdFor(baseRunId, key)
    g = { env, runId, run: trustRun(runMeta(runId, suite, merged, env), now, warnings) }
    groups.set(key, g)
    return g
  }

  async function* chunks(): AsyncGenerator<RunBatch[], void, undefined> {
    let cases = 0
    for await (const chunk of parsed.cases) {
      let index = cases
      cases += chunk.length
      if (cases > MAX_CASES_PER_REPORT) throw new ReportLimitError(file, 'test cases', MAX_CASES_PER_REPORT, undefined)
      const { suite } = baseNow()
      const out = new Map<RunGroup, Result[]>()
      let lastEnv: EnvFacets | undefined | null = null
      let lastResults: Result[] = []
      for (const c of chunk) {
        if (c.attempts.length > limits.maxAttemptsPerResult) {
          throw new ReportLimitError(
            file,
            `attempts of "${c.name.slice(0, 100)}"`,
            limits.maxAttemptsPerResult,
            c.attempts.length,
          )
        }
        // Consecutive cases mostly share their facets object: one lookup per run of them, not per case.
        if (c.env !== lastEnv) {
          const g = groupOf(c.env)
          let list = out.get(g)
          if (!list) out.set(g, (list = []))
          lastEnv = c.env
          lastResults = list
        }
        lastResults.push(toResult(trustCase(c, warnings), suite, index++, input.root))
      }
      const batch: RunBatch[] = []
      for (const [g, results] of out) batch.push({ run: g.run, results })
      yield batch
    }
    // Complete now that every case was read.
    for (const w of parsed.warnings ?? []) warnings.note(w)
  }

  const runs = (): RunMeta[] => {
    // Final metadata: what the report said by its end, under the context.
    const { suite } = baseNow()
    const merged = mergeContexts(parsed.meta, context)
    if (groups.size === 0) groupOf(undefined)
    const timings = parsed.meta.timings
    return [...groups.values()].map((g) => {
      const run = trustRun(runMeta(g.runId, suite, merged, g.env), now, warnings)
      return timings?.length ? { ...run, timings } : run
    })
  }

  return { stream: { file, contentHash: input.contentHash, chunks: chunks(), runs }, warnings }
}

function checkFacets(file: string, env: EnvFacets | undefined): void {
  if (!env) return
  const entries = Object.entries(env)
  if (entries.length > MAX_FACETS) throw new ReportLimitError(file, 'env facets of one run', MAX_FACETS, entries.length)
  for (const [k, v] of entries) {
    const longest = Math.max(k.length, v.length)
    if (longest > MAX_FACET_TEXT) {
      throw new ReportLimitError(file, `env facet "${k.slice(0, 40)}" (characters)`, MAX_FACET_TEXT, longest)
    }
  }
}
