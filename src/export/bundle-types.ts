/**
 * The GitLabViz flake-history bundle v1, as flakewatch writes and reads it. The normative contract is
 * `schema/flake-history-bundle.v1.schema.json` (copied verbatim from BeamNG/GitLabViz); these interfaces are the
 * subset we produce and consume. Every object allows additional properties in v1, so the fields past the
 * schema's own (job ids, env, verdicts) are additive and stay v1.
 */

/** The only version this code writes and reads; a viewer refuses any other. */
export const BUNDLE_SCHEMA_VERSION = 1

/** GitLabViz's own context facets: one heatmap column per combination of these. */
export const DEFAULT_CONTEXT_KEYS: readonly string[] = ['gfx_api', 'quality', 'custom_profile_hash']

/** The package name GitLabViz fetches by default. */
export const DEFAULT_PACKAGE_NAME = 'flake-history'

export type BundleRunStatus = 'complete' | 'interrupted' | 'unknown'
export type FlakeClassification = 'stable' | 'intermittent' | 'actively_flaky' | 'broken'

export interface BundleRun {
  run_id: string
  suite?: string | null
  source_revision?: string | null
  source_branch?: string | null
  pipeline_id?: number | null
  pipeline_url?: string | null
  artifacts_url?: string | null
  started_at?: string | null
  finished_at?: string | null
  duration_seconds?: number | null
  runner_id?: string | null
  status: BundleRunStatus
  /** Context facets (`gfx_api`, `quality`, `custom_profile_hash`, or the configured keys), and additive fields. */
  [key: string]: unknown
}

export interface BundleContextResult {
  passing_run_ids: string[]
  failing_run_ids: string[]
  pass_count?: number
  fail_count?: number
  pass_rate?: number | null
  last_status?: 'pass' | 'fail' | null
  last_run_id?: string | null
  /** Context facet values (string or null). */
  [key: string]: unknown
}

export interface BundleOverall {
  pass_count: number
  fail_count: number
  pass_rate?: number | null
  is_flaky: boolean
  flake_classification: FlakeClassification
  [key: string]: unknown
}

export interface BundleTest {
  test_id: string
  suite?: string | null
  name: string
  module?: string | null
  results_by_context: BundleContextResult[]
  overall: BundleOverall
  [key: string]: unknown
}

export interface BundleWindow {
  retention_days?: number
  oldest_run_uploaded_at?: string | null
  newest_run_uploaded_at?: string | null
  [key: string]: unknown
}

export interface Bundle {
  _comment?: string
  schema_version: 1
  generated_at: string
  generator?: { name?: string; version?: string; [key: string]: unknown }
  window?: BundleWindow
  runs: BundleRun[]
  tests: BundleTest[]
  [key: string]: unknown
}
