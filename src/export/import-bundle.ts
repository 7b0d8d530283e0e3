import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { InputError } from '../errors.js'
import type { EnvFacets, Result, RunMeta, RunStatus, TestRef } from '../model.js'
import type { ReportBatch, Store } from '../store/store.js'
import { bundleSchemaErrors } from './bundle-schema.js'
import { resolveTests } from '../pipeline/reconcile-ids.js'
import { resolveBundleExport } from './write-bundle.js'
import {
  BUNDLE_SCHEMA_VERSION,
  DEFAULT_CONTEXT_KEYS,
  type Bundle,
  type BundleRun,
  type BundleTest,
} from './bundle-types.js'

/** Results per stored batch: big enough for fast inserts, small enough that a year of runs is never in memory twice. */
const RESULTS_PER_BATCH = 50_000
const MAX_EXAMPLES = 5

export interface ImportBundleOptions {
  /** Env facets a run's context keys go into. Default GitLabViz's three. */
  contextKeys?: readonly string[]
  /** Overwrite results of runs already stored. */
  replace?: boolean
  /** Runs to leave out: those the store already holds from its own reports, which a bundle can only coarsen. */
  skipRuns?: ReadonlySet<string>
}

/** A result whose cell context differs from its run's facets: flakewatch keeps the run's, so the cell moves. */
export interface ContextMismatch {
  testId: string
  runId: string
  cell: Record<string, string | null>
  run: Record<string, string | null>
}

export interface ImportSummary {
  file: string
  runs: number
  tests: number
  results: number
  /** Runs stored before with the same content (use `replace` to overwrite). */
  duplicateRuns: string[]
  contextMismatches: number
  /** The first few mismatches, for the warning. */
  mismatchExamples: ContextMismatch[]
}

/**
 * Parses and checks a bundle: JSON, then `schema_version` (anything but 1 is refused before anything else, so a
 * v2 bundle gets a clear message rather than a list of schema errors), then the v1 schema, then the references
 * between tests and runs. Every error is an `InputError` that names the file.
 * @example const bundle = parseBundle(readFileSync('bundle.json', 'utf8'), 'bundle.json')
 */
export function parseBundle(text: string, file: string): Bundle {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw new InputError(`${file}: not JSON: ${(error as Error).message}`, { cause: error })
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InputError(`${file}: not a flake-history bundle (expected a JSON object)`)
  }
  const version = (data as { schema_version?: unknown }).schema_version
  if (version !== BUNDLE_SCHEMA_VERSION) {
    throw new InputError(
      version === undefined
        ? `${file}: not a flake-history bundle (no schema_version)`
        : `${file}: flake-history bundle schema_version ${JSON.stringify(version)} is not supported; ` +
            `flakewatch reads version ${BUNDLE_SCHEMA_VERSION}`,
    )
  }
  const errors = bundleSchemaErrors(data)
  if (errors.length) throw new InputError(`${file}: not a valid flake-history bundle v1: ${errors.join('; ')}`)
  const bundle = data as Bundle
  checkReferences(bundle, file)
  return bundle
}

function checkReferences(bundle: Bundle, file: string): void {
  const runs = new Set<string>()
  for (const [i, r] of bundle.runs.entries()) {
    if (runs.has(r.run_id)) throw new InputError(`${file}: runs[${i}]: run_id "${r.run_id}" appears twice`)
    runs.add(r.run_id)
  }
  const tests = new Set<string>()
  for (const [i, t] of bundle.tests.entries()) {
    if (tests.has(t.test_id)) throw new InputError(`${file}: tests[${i}]: test_id "${t.test_id}" appears twice`)
    tests.add(t.test_id)
    const status = new Map<string, 'pass' | 'fail'>()
    for (const [j, cell] of t.results_by_context.entries()) {
      for (const [ids, s] of [
        [cell.passing_run_ids, 'pass'],
        [cell.failing_run_ids, 'fail'],
      ] as const) {
        for (const id of ids) {
          if (!runs.has(id)) {
            throw new InputError(`${file}: tests[${i}].results_by_context[${j}]: run "${id}" is not in runs[]`)
          }
          const seen = status.get(id)
          if (seen !== undefined && seen !== s) {
            throw new InputError(`${file}: tests[${i}] ("${t.test_id}") both passed and failed in run "${id}"`)
          }
          status.set(id, s)
        }
      }
    }
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/**
 * A bundle run as flakewatch's `RunMeta`: context keys and any additive `env` object become env facets, and the
 * additive fields flakewatch itself writes (`job_id`, `job_url`, statuses, `pipeline_ref`) come back.
 * @example runMetaFromBundle({ run_id: 'r1', status: 'complete', gfx_api: 'dx12' }, ['gfx_api']).env // { gfx_api: … }
 */
export function runMetaFromBundle(r: BundleRun, contextKeys: readonly string[]): RunMeta {
  const env: EnvFacets = {}
  if (typeof r.env === 'object' && r.env !== null && !Array.isArray(r.env)) {
    for (const [k, v] of Object.entries(r.env)) if (typeof v === 'string') env[k] = v
  }
  for (const key of contextKeys) {
    const v = r[key]
    if (typeof v === 'string') env[key] = v
    else if (v === null) delete env[key]
  }
  return {
    runId: r.run_id,
    // Empty stands for unknown: RunMeta has no null suite, and the export writes it back as null.
    suite: r.suite ?? '',
    branch: r.source_branch ?? null,
    revision: r.source_revision ?? null,
    pipelineId: typeof r.pipeline_id === 'number' ? String(r.pipeline_id) : str(r.pipeline_ref),
    pipelineUrl: r.pipeline_url ?? null,
    jobId: str(r.job_id),
    jobUrl: str(r.job_url),
    artifactsUrl: r.artifacts_url ?? null,
    jobStatus: str(r.job_status),
    pipelineStatus: str(r.pipeline_status),
    runnerId: r.runner_id ?? null,
    env,
    startedAt: r.started_at ?? null,
    finishedAt: r.finished_at ?? null,
    durationMs: typeof r.duration_seconds === 'number' ? r.duration_seconds * 1000 : null,
    status: r.status satisfies RunStatus,
  }
}

function testRefFromBundle(t: BundleTest): TestRef {
  const ref: TestRef = { testId: t.test_id, suite: t.suite ?? '', module: t.module ?? '', name: t.name, file: null }
  return t.module_is_label === true ? { ...ref, moduleIsLabel: true } : ref
}

/** A test's fields as a bundle names them, from the ref it is stored under. */
function bundleRefOf(ref: TestRef): Pick<BundleTest, 'test_id' | 'suite' | 'module' | 'name'> {
  return { test_id: ref.testId, suite: ref.suite, module: ref.module, name: ref.name }
}

function contextValues(source: Record<string, unknown>, keys: readonly string[]): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  for (const k of keys) out[k] = str(source[k])
  return out
}

/**
 * Turns a checked bundle into report batches for `Store.ingestReport`, a few runs at a time, with every run
 * present (runs without results too). A result's context is its run's facets: a cell that files a run under
 * another context is reported through `onMismatch`, as flakewatch has one context per run.
 * @example for (const batch of bundleBatches(bundle, { file, contentHash })) await store.ingestReport(batch)
 */
export function* bundleBatches(
  bundle: Bundle,
  opts: {
    file: string
    contentHash: string
    contextKeys?: readonly string[]
    onMismatch?: (m: ContextMismatch) => void
    skipRuns?: ReadonlySet<string>
  },
): Generator<ReportBatch> {
  const keys = opts.contextKeys ?? DEFAULT_CONTEXT_KEYS
  const tests = bundle.tests.map(testRefFromBundle)
  // Per run: test index × 2 + failed, as plain numbers, so that 730k results cost a few MB here, not objects.
  const perRun = new Map<string, number[]>(bundle.runs.map((r) => [r.run_id, []]))
  const runContext = new Map(bundle.runs.map((r) => [r.run_id, contextValues(r, keys)]))
  bundle.tests.forEach((t, ti) => {
    const seen = new Set<string>()
    for (const cell of t.results_by_context) {
      const cellContext = contextValues(cell, keys)
      for (const [ids, failed] of [
        [cell.passing_run_ids, 0],
        [cell.failing_run_ids, 1],
      ] as const) {
        for (const id of ids) {
          const run = runContext.get(id)!
          if (opts.onMismatch && keys.some((k) => cellContext[k] !== run[k])) {
            opts.onMismatch({ testId: t.test_id, runId: id, cell: cellContext, run })
          }
          // The same run listed under two contexts is one result.
          if (seen.has(id)) continue
          seen.add(id)
          perRun.get(id)!.push(ti * 2 + failed)
        }
      }
    }
  })

  let runs: ReportBatch['runs'] = []
  let size = 0
  for (const r of bundle.runs) {
    if (opts.skipRuns?.has(r.run_id)) continue
    const results: Result[] = perRun.get(r.run_id)!.map((code) => ({
      test: tests[code >> 1]!,
      status: code & 1 ? 'failed' : 'passed',
      flakyOnRetry: false,
      durationMs: null,
      errorType: null,
      message: null,
      healingOccurred: false,
      attempts: [],
    }))
    perRun.delete(r.run_id)
    runs.push({ run: runMetaFromBundle(r, keys), results })
    size += results.length + 1
    if (size >= RESULTS_PER_BATCH) {
      yield { file: opts.file, contentHash: opts.contentHash, runs }
      runs = []
      size = 0
    }
  }
  if (runs.length) yield { file: opts.file, contentHash: opts.contentHash, runs }
}

/**
 * Reads a bundle file and stores it. Runs already stored from the same bundle are duplicates unless `replace`;
 * a newer bundle that overlaps adds only what is new. Stored a batch of runs at a time, so a failure part-way
 * leaves whole runs, and importing again completes the rest.
 * @example const summary = await importBundle(store, 'bundle.json')
 */
export async function importBundle(store: Store, file: string, opts: ImportBundleOptions = {}): Promise<ImportSummary> {
  let bytes: Buffer
  try {
    bytes = await readFile(file)
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new InputError(`${file}: cannot read: ${why}`, { cause: error })
  }
  return importBundleBytes(store, bytes, file, opts)
}

/**
 * `importBundle` for a bundle already in memory (downloaded, say); `file` names it in errors.
 * @example await importBundleBytes(store, body, 'flake-history 1764000000', { skipRuns })
 */
export async function importBundleBytes(
  store: Store,
  bytes: Buffer,
  file: string,
  opts: ImportBundleOptions = {},
): Promise<ImportSummary> {
  // The same key rules as the export, so that what one writes the other reads.
  const contextKeys = resolveBundleExport({ contextKeys: opts.contextKeys }).contextKeys
  const bundle = parseBundle(bytes.toString('utf8'), file)
  const contentHash = createHash('sha256').update(bytes).digest('hex')
  const summary: ImportSummary = {
    file,
    runs: 0,
    tests: bundle.tests.length,
    results: 0,
    duplicateRuns: [],
    contextMismatches: 0,
    mismatchExamples: [],
  }
  const onMismatch = (m: ContextMismatch) => {
    if (summary.contextMismatches++ < MAX_EXAMPLES) summary.mismatchExamples.push(m)
  }
  const skipRuns = opts.skipRuns
  // The bundle's tests under the ids this store knows them by (a bundle from another reporter or another
  // flakewatch names them its own way), matched once for the whole bundle as at ingest.
  const { refs, remember } = await resolveTests(
    store,
    bundle.tests.map((t) => ({ ref: testRefFromBundle(t) })),
  )
  const known = { ...bundle, tests: bundle.tests.map((t, i) => ({ ...t, ...bundleRefOf(refs[i]!) })) }
  for (const batch of bundleBatches(known, { file, contentHash, contextKeys, onMismatch, skipRuns })) {
    for (const o of await store.ingestReport(batch, { replace: opts.replace })) {
      if (o.outcome === 'duplicate') summary.duplicateRuns.push(o.runId)
      else summary.runs++
      summary.results += o.results
    }
  }
  await remember()
  return summary
}
