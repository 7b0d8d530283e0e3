import type { ResultStatus } from '../model.js'
import type { RunContext } from '../pipeline/run-context.js'
import type { RecordedReport } from './build-cases.js'

type CtrfStatus = 'passed' | 'failed' | 'skipped'

/** CTRF has no "error": an error is a failure whose `rawStatus` says what it was. */
const CTRF_STATUS: Record<ResultStatus, CtrfStatus> = {
  passed: 'passed',
  failed: 'failed',
  error: 'failed',
  skipped: 'skipped',
}

const MODULE_SEPARATOR = ' > '

const ms = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : 0)

/**
 * A CTRF report (ctrf.io, spec 0.0.0) of recorded cases, written so that `flakewatch ingest` reads it back with the
 * same test ids: `suite` is the module and every attempt is listed in `retryAttempts`. What CTRF has no field for
 * (the Playwright project, annotations, healing) goes to `extra`.
 * @example writeFileSync('ctrf.json', JSON.stringify(formatCtrf(report, context, { name: 'playwright' }), null, 2))
 */
export function formatCtrf(report: RecordedReport, context: RunContext, tool: { name: string; version?: string }) {
  const start = ms(report.meta.startedAt)
  const stop = ms(report.meta.finishedAt) || (start && report.meta.durationMs ? start + report.meta.durationMs : 0)
  const tests = report.cases.map((c) => {
    const extra: Record<string, unknown> = {}
    if (c.env && Object.keys(c.env).length > 0) extra.env = c.env
    if (c.healingOccurred) extra.healingOccurred = true
    if (c.annotations.length > 0) extra.annotations = c.annotations
    if (c.errorType) extra.errorType = c.errorType
    // Where it ran in the run: start times alone tie for quick tests, and the list follows the source.
    if (typeof c.position === 'number') extra.position = c.position
    return {
      name: c.name,
      status: CTRF_STATUS[c.status],
      duration: Math.round(c.durationMs ?? 0),
      ...(c.message ? { message: c.message } : {}),
      ...(c.stack ? { trace: c.stack } : {}),
      // The CTRF parser reads `timedOut` back as a timeout; `error` keeps the distinction CTRF's statuses lose.
      ...(c.errorType === 'timeout' ? { rawStatus: 'timedOut' } : c.status === 'error' ? { rawStatus: 'error' } : {}),
      // CTRF's suite is the hierarchy as an array; the parser joins it back with the same separator.
      ...(c.module ? { suite: c.module.split(MODULE_SEPARATOR) } : {}),
      ...(c.file ? { filePath: c.file } : {}),
      tags: c.tags,
      retries: Math.max(0, c.attempts.length - 1),
      flaky: c.flakyOnRetry,
      // CTRF lists only the attempts before the final one (the test object itself), numbered from 1, and never
      // an empty list.
      ...(c.attempts.length > 1
        ? {
            retryAttempts: c.attempts.slice(0, -1).map((a, i) => ({
              attempt: i + 1,
              status: CTRF_STATUS[a.status],
              duration: Math.round(a.durationMs ?? 0),
              ...(a.message ? { message: a.message } : {}),
              ...(a.stack ? { trace: a.stack } : {}),
            })),
          }
        : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    }
  })
  const count = (s: CtrfStatus) => tests.filter((t) => t.status === s).length
  const environment: Record<string, unknown> = {}
  if (context.branch) environment.branchName = context.branch
  if (context.revision) environment.commit = context.revision
  // CTRF's build is the CI job (GitLab's CI_JOB_ID in the ctrf-io reporters); the pipeline has no CTRF field.
  if (context.jobId) environment.buildId = context.jobId
  if (context.jobUrl) environment.buildUrl = context.jobUrl
  const pipeline: Record<string, string> = {}
  if (context.pipelineId) pipeline.pipelineId = context.pipelineId
  if (context.pipelineUrl) pipeline.pipelineUrl = context.pipelineUrl
  if (Object.keys(pipeline).length > 0) environment.extra = pipeline
  return {
    reportFormat: 'CTRF',
    specVersion: '0.0.0',
    ...(context.runId ? { runId: context.runId } : {}),
    timestamp: new Date(start || Date.now()).toISOString(),
    generatedBy: 'flakewatch',
    results: {
      tool: { name: tool.name, ...(tool.version ? { version: tool.version } : {}) },
      summary: {
        tests: tests.length,
        passed: count('passed'),
        failed: count('failed'),
        pending: 0,
        skipped: count('skipped'),
        other: 0,
        flaky: tests.filter((t) => t.flaky).length,
        start,
        stop,
      },
      tests,
      ...(Object.keys(environment).length > 0 ? { environment } : {}),
      extra: { ...(context.runId ? { runId: context.runId } : {}), runStatus: report.meta.status ?? 'complete' },
    },
  }
}
