import type { HistoryFilter, RunFilter } from '../store.js'

/** A run's columns as `RunRow` names them, in table order. */
export const RUN_COLUMNS = `run_id, suite, branch, revision, pipeline_id, pipeline_url, job_id, job_url, artifacts_url,
  job_status, pipeline_status, runner_id, env, started_at, finished_at, duration_ms, status, uploaded_at, at`

/** Builds `$n` placeholders in step with their values. */
export class Params {
  readonly values: unknown[] = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/** Whether a history filter selects fewer runs than all. */
export function narrowed(filter: HistoryFilter): boolean {
  const bounds = [filter.since, filter.until, filter.lastRuns, filter.runIds]
  return Boolean(filter.suite || filter.branch) || bounds.some((v) => v !== undefined)
}

export function runWhere(filter: HistoryFilter | RunFilter, p: Params): string {
  const where: string[] = []
  if ('runIds' in filter && filter.runIds) where.push(`run_id = ANY(${p.add(filter.runIds)}::text[])`)
  if (filter.suite) where.push(`suite = ${p.add(filter.suite)}`)
  if (filter.branch) where.push(`branch = ${p.add(filter.branch)}`)
  if (filter.since !== undefined) where.push(`at >= ${p.add(filter.since)}`)
  if (filter.until !== undefined) where.push(`at <= ${p.add(filter.until)}`)
  return where.length ? `WHERE ${where.join(' AND ')}` : ''
}
