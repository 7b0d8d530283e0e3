import { z } from 'zod'
import type { ResultStatus } from '../model.js'
import { readJson } from './read-json.js'
import type { ParsedCase, ParsedReport, ReportRunMeta, ReportSource } from './types.js'

/**
 * The simple CI JSON some pipelines write instead of a test report: job context plus one boolean per test.
 * ```json
 * { "metadata": { "ref": "main", "pipeline_id": 1234, "pipeline_status": "success",
 *                 "job_id": 5678, "job_status": "failed" },
 *   "tests": { "Suite/Case/test": true, "Suite/Case/other": false } }
 * ```
 */
interface SimpleReport {
  metadata?: SimpleMetadata | null
  tests: Record<string, boolean>
}

interface SimpleMetadata {
  ref?: string | null
  pipeline_id?: string | number | null
  pipeline_status?: string | null
  job_id?: string | number | null
  job_status?: string | null
}

type SimpleOutcome = 'true' | 'false'

const STATUS: Record<SimpleOutcome, ResultStatus> = { true: 'passed', false: 'failed' }

const id = z.union([z.string(), z.number()]).nullish()
const schema: z.ZodType<SimpleReport> = z.object({
  metadata: z
    .object({
      ref: z.string().nullish(),
      pipeline_id: id,
      pipeline_status: z.string().nullish(),
      job_id: id,
      job_status: z.string().nullish(),
    })
    .nullish(),
  tests: z.record(z.string(), z.boolean()),
})

/**
 * Parses the simple CI JSON. A test key `Suite/Case/test` gives module `Suite/Case` (everything before the last
 * `/`) and name `test`; `metadata` gives branch, pipeline and job ids and statuses.
 * @example const report = await parseSimpleJson(sourceFromFile('test-results.json'))
 */
export async function parseSimpleJson(source: ReportSource): Promise<ParsedReport> {
  const report = await readJson(source, schema, 'simple CI JSON')
  const cases: ParsedCase[] = Object.entries(report.tests).map(([key, passed]) => {
    const slash = key.lastIndexOf('/')
    return {
      module: slash < 0 ? '' : key.slice(0, slash),
      name: slash < 0 ? key : key.slice(slash + 1),
      file: null,
      status: STATUS[passed ? 'true' : 'false'],
      flakyOnRetry: false,
      durationMs: null,
      errorType: null,
      message: null,
      stack: null,
      healingOccurred: false,
      attempts: [],
    }
  })
  const m = report.metadata
  const meta: ReportRunMeta = {}
  if (m?.ref) meta.branch = m.ref
  if (m?.pipeline_id !== null && m?.pipeline_id !== undefined) meta.pipelineId = String(m.pipeline_id)
  if (m?.pipeline_status) meta.pipelineStatus = m.pipeline_status
  if (m?.job_id !== null && m?.job_id !== undefined) meta.jobId = String(m.job_id)
  if (m?.job_status) meta.jobStatus = m.job_status
  return { format: 'simple-json', cases, meta }
}
