import type { Run } from '../model.js'
import type { BundleRun } from './bundle-types.js'

/**
 * A timestamp as an RFC 3339 `date-time` in UTC (whole seconds without `.000`, like GitLabViz's sample), or null
 * when it is missing or unparsable: the schema's `format: date-time` must hold for every value we write.
 * @example bundleTime('2026-05-19T08:00:00.000Z') // '2026-05-19T08:00:00Z'
 */
export function bundleTime(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null
  const ms = typeof value === 'number' ? value : Date.parse(value)
  if (!Number.isFinite(ms)) return null
  const d = new Date(ms)
  const year = d.getUTCFullYear()
  // toISOString writes '+010000-…' outside 0000–9999, which is not an RFC 3339 date-time.
  if (year < 0 || year > 9999) return null
  return d.toISOString().replace('.000Z', 'Z')
}

/**
 * The schema types `pipeline_id` as an integer. flakewatch keeps CI ids as text (CircleCI and others use UUIDs),
 * so only a canonical decimal that fits a double exactly becomes the number; anything else is null here and
 * travels as the additive `pipeline_ref` instead, so that nothing is lost or made up.
 * @example bundlePipelineId('12345') // 12345
 * @example bundlePipelineId('a1b2-…') // null
 */
export function bundlePipelineId(id: string | null): number | null {
  if (id === null || !/^(0|[1-9]\d{0,15})$/.test(id)) return null
  const n = Number(id)
  return Number.isSafeInteger(n) ? n : null
}

/**
 * A URL that satisfies the schema's `format: uri`, or null. The WHATWG parser accepts what RFC 3986 does not
 * (spaces, for one), so the URL goes out in its serialised, percent-encoded form.
 * @example bundleUri('https://ci.example.com/a b') // 'https://ci.example.com/a%20b'
 */
export function bundleUri(url: string | null): string | null {
  if (url === null || url === '') return null
  try {
    return new URL(url).href
  } catch {
    return null
  }
}

/**
 * One `runs[]` entry: every field flakewatch knows, null where it does not. The context facets come from the
 * run's env; the additive fields (`job_id`, `job_url`, statuses, `uploaded_at`, the whole `env`) are allowed by
 * v1's `additionalProperties: true` and let a bundle import back without loss.
 * @example bundleRun(run, ['gfx_api', 'quality', 'custom_profile_hash']).pipeline_id // 12345
 */
export function bundleRun(run: Run, contextKeys: readonly string[]): BundleRun {
  const out: Record<string, unknown> = { run_id: run.runId, suite: run.suite || null }
  for (const key of contextKeys) out[key] = Object.hasOwn(run.env, key) ? run.env[key] : null
  const pipelineId = bundlePipelineId(run.pipelineId)
  out.source_revision = run.revision
  out.source_branch = run.branch
  out.pipeline_id = pipelineId
  out.pipeline_url = bundleUri(run.pipelineUrl)
  out.artifacts_url = bundleUri(run.artifactsUrl)
  // A report without timestamps still arrived at a known time: GitLabViz's "Last" column, date axis and kiosk
  // need a start, and the upload is the nearest one known.
  out.started_at = bundleTime(run.startedAt) ?? bundleTime(run.uploadedAt)
  // An interrupted suite never finished: whatever time the report carried is when it was killed.
  out.finished_at = run.status === 'interrupted' ? null : bundleTime(run.finishedAt)
  out.duration_seconds = run.durationMs === null || run.durationMs < 0 ? null : Math.round(run.durationMs / 1000)
  out.runner_id = run.runnerId
  out.status = run.status
  out.job_id = run.jobId
  out.job_url = bundleUri(run.jobUrl)
  out.job_status = run.jobStatus
  out.pipeline_status = run.pipelineStatus
  if (pipelineId === null && run.pipelineId !== null) out.pipeline_ref = run.pipelineId
  out.uploaded_at = bundleTime(run.uploadedAt)
  out.env = run.env
  return out as BundleRun
}
