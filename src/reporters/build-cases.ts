import { createHash } from 'node:crypto'
import type { ParsedCase, ParsedReport } from '../ingest/types.js'
import { isFailure } from '../model.js'
import { resolveRepoRoot } from '../ingest/repo-root.js'
import { buildReportBatch } from '../pipeline/build-batch.js'
import { envRunContext, mergeContexts, type RunContext } from '../pipeline/run-context.js'
import type { ReportBatch } from '../store/store.js'

/**
 * The annotation flakewatch's healing `page` adds to a test it healed (`flakewatch/playwright` defines the same
 * name). Kept here as well because the reporter must not load `@playwright/test` at runtime, which that module does.
 */
export const HEALED_ANNOTATION = 'flakewatch-healed'

/** A runner's annotation: Playwright's `{ type, description }`, Vitest's `{ type, message }` as description. */
export interface CaseAnnotation {
  type: string
  description?: string
}

/** A case as a reporter saw it: what ingest stores, plus tags and annotations, which only CTRF output has room for. */
export interface RecordedCase extends ParsedCase {
  tags: string[]
  annotations: CaseAnnotation[]
}

export interface RecordedReport extends ParsedReport {
  cases: RecordedCase[]
}

/** What one reporter run turns into: the report, the run context it was stored under, and the batch for the store. */
export interface Recording {
  report: RecordedReport
  context: RunContext
  batch: ReportBatch
}

type Env = Record<string, string | undefined>

/**
 * Layers the run context as `flakewatch ingest` does (CI variables < `FLAKEWATCH_*` < explicit options) and builds
 * the store batch with the same function ingest uses, so that a reporter and an ingested report of the same run
 * give the same test ids, run ids and facet split.
 * @example const { batch } = prepareRecording(report, { suite: 'e2e', env: process.env, source: 'flakewatch/vitest' })
 */
export function prepareRecording(
  report: RecordedReport,
  opts: { suite: string | undefined; env: Env; source: string; cwd?: string },
): Recording {
  const context = mergeContexts(envRunContext(opts.env), { suite: opts.suite })
  // The hash names a local run (no CI run id) and recognises a second write of the very same content.
  const contentHash = createHash('sha256').update(JSON.stringify(report)).digest('hex')
  // The same root as `flakewatch ingest` run in the project: the runners give absolute file paths.
  const root = resolveRepoRoot(opts.env.FLAKEWATCH_ROOT, null, opts.cwd ?? process.cwd())
  const batch = buildReportBatch({ parsed: report, file: opts.source, contentHash, context, root })
  return { report, context, batch }
}

/** Counts for the one line a reporter prints. */
export function describeCases(cases: ParsedCase[]): string {
  let failed = 0
  let flaky = 0
  for (const c of cases) {
    if (isFailure(c.status)) failed++
    else if (c.flakyOnRetry) flaky++
  }
  return `${cases.length} test${cases.length === 1 ? '' : 's'} (${failed} failed, ${flaky} flaky)`
}

/** A case's identity within one report (module, name, project): the one ingest folds repeated cases by. */
export function caseKey(module: string, name: string, project: string | undefined): string {
  return `${module}\u0000${name}\u0000${project ?? ''}`
}
