import type { RunMeta } from '../model.js'
import { ownString } from './bounded-text.js'
import type { ReportRunMeta } from './types.js'

/** The free-text run fields a report may fill (not the id, the suite or the enumerated status). */
type StringField = {
  [K in keyof RunMeta]: string | null extends RunMeta[K] ? K : never
}[keyof RunMeta]

/**
 * Run context a report may carry as key/value properties: JUnit `<property>` elements on `<testsuites>` or
 * `<testsuite>`, and Playwright's `config.metadata`. The documented set, and the only one read:
 *
 * | property              | run field       |
 * |-----------------------|-----------------|
 * | `ci.branch`           | branch          |
 * | `ci.revision`         | revision        |
 * | `ci.pipeline_id`      | pipelineId      |
 * | `ci.pipeline_url`     | pipelineUrl     |
 * | `ci.pipeline_status`  | pipelineStatus  |
 * | `ci.job_id`           | jobId           |
 * | `ci.job_url`          | jobUrl          |
 * | `ci.job_status`       | jobStatus       |
 * | `ci.artifacts_url`    | artifactsUrl    |
 * | `ci.runner`           | runnerId        |
 * | `env.<facet>`         | env[facet], e.g. `env.browser=firefox` |
 *
 * Anything else (JVM properties, Ginkgo's suite settings, pytest's `record_property`) is ignored.
 */
export const RUN_PROPERTIES: Readonly<Record<string, StringField>> = {
  'ci.branch': 'branch',
  'ci.revision': 'revision',
  'ci.pipeline_id': 'pipelineId',
  'ci.pipeline_url': 'pipelineUrl',
  'ci.pipeline_status': 'pipelineStatus',
  'ci.job_id': 'jobId',
  'ci.job_url': 'jobUrl',
  'ci.job_status': 'jobStatus',
  'ci.artifacts_url': 'artifactsUrl',
  'ci.runner': 'runnerId',
}

const ENV_PREFIX = 'env.'

/**
 * Applies one property to `meta` if it is one of {@link RUN_PROPERTIES} or an `env.*` facet. The first value
 * seen for a field wins, so `<testsuites>`-level properties take precedence over per-suite ones.
 * @example applyRunProperty(meta, 'ci.branch', 'main')
 */
export function applyRunProperty(meta: ReportRunMeta, name: string, value: string): void {
  const key = name.trim()
  const text = value.trim()
  if (text === '') return
  const field = RUN_PROPERTIES[key]
  if (field) {
    meta[field] ??= ownString(text)
  } else if (key.startsWith(ENV_PREFIX) && key.length > ENV_PREFIX.length) {
    const env = (meta.env ??= {})
    env[ownString(key.slice(ENV_PREFIX.length))] ??= ownString(text)
  }
}
