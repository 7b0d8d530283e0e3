import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { asOfTime } from '../analysis/as-of.js'
import { analyzeTest } from '../analysis/analyze-test.js'
import { infraRunIds } from '../analysis/infra-run-ids.js'
import { resolveAnalysisConfig, type AnalysisConfigOptions } from '../analysis/resolve-analysis-config.js'
import { InputError } from '../errors.js'
import type { Run } from '../model.js'
import type { Store } from '../store/store.js'
import { VERSION } from '../version.js'
import { bundleRun, bundleTime } from './bundle-run.js'
import { createBundleTest, type BundleTestOptions } from './bundle-test.js'
import { BUNDLE_SCHEMA_VERSION, DEFAULT_CONTEXT_KEYS } from './bundle-types.js'
import { classifyByVerdict, CLASSIFICATION_MODES, type ClassificationMode } from './classify-bundle-test.js'

const DAY_MS = 86_400_000
/** Bytes gathered before a write: few enough syscalls, and still flat memory. */
const CHUNK = 64 * 1024

export interface BundleExportOptions {
  /** Days of history to include, counted back from `now` by run start time. Default 14. */
  days?: number
  /** Only runs of this suite. */
  suite?: string
  /** Env facets that make a context. Default GitLabViz's `gfx_api`, `quality`, `custom_profile_hash`. */
  contextKeys?: readonly string[]
  /** `thresholds` (default): GitLabViz's pass-rate classes. `verdict`: flakewatch's verdict mapped onto them. */
  classification?: ClassificationMode
  /** Analysis settings for `classification: 'verdict'`. */
  analysis?: AnalysisConfigOptions
  /** Epoch ms; the window ends here. Default: the newest run of the suite (`asOfTime`), as for `analyze`. */
  now?: number
  /** Tests' code owners, written as each test's additive `owners` field. */
  owners?: BundleTestOptions['owners']
}

export interface ResolvedBundleExport {
  days: number
  suite: string | undefined
  contextKeys: string[]
  classification: ClassificationMode
  analysis: AnalysisConfigOptions
  now: number
}

export interface BundleSummary {
  runs: number
  tests: number
  bytes: number
}

// A context key with one of these names would overwrite a field the schema gives another meaning.
const RESERVED_KEYS = new Set([
  'run_id',
  'suite',
  'source_revision',
  'source_branch',
  'pipeline_id',
  'pipeline_url',
  'artifacts_url',
  'started_at',
  'finished_at',
  'duration_seconds',
  'runner_id',
  'status',
  'job_id',
  'job_url',
  'job_status',
  'pipeline_status',
  'pipeline_ref',
  'uploaded_at',
  'env',
  'passing_run_ids',
  'failing_run_ids',
  'pass_count',
  'fail_count',
  'pass_rate',
  'last_status',
  'last_run_id',
  '__proto__',
])

/**
 * Checks and fills export options. Errors name the flag, as the CLI shows them.
 * @example resolveBundleExport({ days: 30 }).contextKeys // ['gfx_api', 'quality', 'custom_profile_hash']
 */
export function resolveBundleExport(opts: BundleExportOptions = {}): ResolvedBundleExport {
  const days = opts.days ?? 14
  if (!Number.isInteger(days) || days < 1) {
    throw new InputError(`--days must be a whole number of days ≥ 1, got ${days}`)
  }
  const contextKeys = [...(opts.contextKeys ?? DEFAULT_CONTEXT_KEYS)]
  for (const k of contextKeys) {
    if (!/^[A-Za-z0-9_.-]+$/.test(k) || RESERVED_KEYS.has(k)) {
      throw new InputError(`--context-keys: "${k}" cannot be a context key`)
    }
  }
  if (new Set(contextKeys).size !== contextKeys.length) throw new InputError('--context-keys: a key is listed twice')
  const classification = opts.classification ?? 'thresholds'
  if (!CLASSIFICATION_MODES.includes(classification)) {
    const modes = CLASSIFICATION_MODES.join(', ')
    throw new InputError(`--classification must be one of ${modes}, got "${String(classification)}"`)
  }
  const now = opts.now ?? Date.now()
  return { days, suite: opts.suite, contextKeys, classification, analysis: opts.analysis ?? {}, now }
}

async function classifierFor(
  store: Store,
  r: ResolvedBundleExport,
  since: number,
): Promise<BundleTestOptions['classify']> {
  if (r.classification === 'thresholds') return undefined
  const cfg = resolveAnalysisConfig(r.analysis)
  // The same infrastructure guard as `flakewatch analyze`, so that the bundle and the CLI agree on verdicts.
  const excludedRuns = infraRunIds(await store.runSummaries({ suite: r.suite, since }), cfg)
  const ctx = { now: r.now, excludedRuns }
  return (history, pass, fail) => {
    const a = analyzeTest(history, cfg, ctx)
    return { ...classifyByVerdict(a.verdict, pass, fail), extra: { verdict: a.verdict, verdict_reason: a.reason } }
  }
}

/**
 * The bundle as a stream of text chunks: the header and every run first, then the tests one at a time from
 * one `scanHistory` pass, so that memory stays flat however large the store. Compact JSON.
 * `summary` is filled in as the chunks go out.
 * @example for await (const chunk of bundleChunks(store, { days: 14 }, summary)) out.write(chunk)
 */
export async function* bundleChunks(
  store: Store,
  opts: BundleExportOptions = {},
  summary: BundleSummary = { runs: 0, tests: 0, bytes: 0 },
): AsyncGenerator<string> {
  // The one clock: without an explicit time, the window ends at the newest run, as every analysis does.
  const now = opts.now ?? asOfTime(await store.runSummaries({ suite: opts.suite }), undefined, Date.now())
  const r = resolveBundleExport({ ...opts, now })
  const since = r.now - r.days * DAY_MS
  const classify = await classifierFor(store, r, since)
  // Runs come first and are few (one per suite execution), so they are held; results never are.
  const runs: Run[] = (await store.listRuns({ suite: r.suite, since, until: r.now })).reverse()
  const runIds = new Set(runs.map((run) => run.runId))
  let oldest: string | null = null
  let newest: string | null = null
  for (const run of runs) {
    if (oldest === null || run.uploadedAt < oldest) oldest = run.uploadedAt
    if (newest === null || run.uploadedAt > newest) newest = run.uploadedAt
  }

  let buf = ''
  const flush = () => {
    const out = buf
    summary.bytes += Buffer.byteLength(out)
    buf = ''
    return out
  }
  const head = {
    schema_version: BUNDLE_SCHEMA_VERSION,
    generated_at: bundleTime(r.now),
    generator: { name: 'flakewatch', version: VERSION },
    window: {
      retention_days: r.days,
      oldest_run_uploaded_at: bundleTime(oldest),
      newest_run_uploaded_at: bundleTime(newest),
    },
  }
  buf = `${JSON.stringify(head).slice(0, -1)},"runs":[`
  runs.forEach((run, i) => {
    buf += (i ? ',' : '') + JSON.stringify(bundleRun(run, r.contextKeys))
  })
  summary.runs = runs.length
  buf += '],"tests":['

  const toTest = createBundleTest({ contextKeys: r.contextKeys, runIds, classify, owners: opts.owners })
  // Tests whose module is only a label (jest-junit's defaults): said in the bundle, so that an import can match
  // them to the same test named with its file (an extension field; GitLabViz ignores it).
  const names = await store.testNames().listNames(r.suite === undefined ? {} : { suite: r.suite })
  const labels = new Set(names.filter((n) => n.moduleIsLabel && n.nameId === n.testId).map((n) => n.testId))
  let first = true
  if (runs.length > 0) {
    // runs[] is already written: `runIds` keeps out any run stored since, so every reference resolves.
    for await (const history of store.scanHistory({ suite: r.suite, since, until: r.now })) {
      const test = toTest(history)
      if (test === null) continue
      if (labels.has(test.test_id)) test.module_is_label = true
      buf += (first ? '' : ',') + JSON.stringify(test)
      first = false
      summary.tests++
      if (buf.length >= CHUNK) yield flush()
    }
  }
  buf += ']}\n'
  yield flush()
}

/**
 * Writes the bundle to a stream with backpressure. Ends the stream unless `end: false` (for stdout).
 * @example await writeBundle(store, createWriteStream('bundle.json'), { days: 14 })
 */
export async function writeBundle(
  store: Store,
  out: NodeJS.WritableStream,
  opts: BundleExportOptions & { end?: boolean } = {},
): Promise<BundleSummary> {
  const summary: BundleSummary = { runs: 0, tests: 0, bytes: 0 }
  const source = Readable.from(bundleChunks(store, opts, summary), { objectMode: false })
  await pipeline(source, out, { end: opts.end ?? true })
  return summary
}
