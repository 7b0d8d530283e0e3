import { SingleBar } from 'cli-progress'
import { InputError } from '../../errors.js'
import { resolveIngestLimits, type IngestLimits } from '../../limits.js'
import type { Format } from '../../ingest/formats.js'
import { ingestFiles, type IngestSummary } from '../../pipeline/ingest-files.js'
import { envRunContext, mergeContexts, parseEnvPairs, type RunContext } from '../../pipeline/run-context.js'
import type { RunStatus } from '../../model.js'
import { openStore } from '../../store/open.js'
import { analysisOptions, loadConfig } from '../../config/load.js'
import { resolveAnalysisConfig } from '../../analysis/resolve-analysis-config.js'
import { refreshAfterWrite, refreshAnalyses } from '../../pipeline/persisted-analyses.js'
import { projectStoreFlags, type StoreFlags } from '../project-option.js'
import { resolveRepoRoot } from '../../ingest/repo-root.js'
import { emitJson, isInteractive, renderTable, type Io } from '../output.js'

/** The run flags shared by `ingest`, `gate --ingest` and `run`. */
export interface RunFlags {
  runId?: string
  suite?: string
  branch?: string
  revision?: string
  pipelineId?: string
  pipelineUrl?: string
  jobId?: string
  jobUrl?: string
  jobStatus?: string
  pipelineStatus?: string
  runner?: string
  artifactsUrl?: string
  runStatus?: RunStatus
  env?: string[]
  /** Repository root for test paths; see `repoRootFromFlags`. */
  root?: string
}

export interface IngestCommandOptions extends RunFlags, StoreFlags {
  format?: Format
  replace?: boolean
  /** Attempts one result may have; FLAKEWATCH_MAX_ATTEMPTS otherwise, else the default. */
  maxAttempts?: string
  json?: boolean
  output?: string
}

/** `--max-attempts` over `FLAKEWATCH_MAX_ATTEMPTS` over the default, checked (exit 2 on a bad value). */
export function ingestLimits(flag: string | undefined, env: NodeJS.ProcessEnv): IngestLimits {
  const raw = flag ?? env.FLAKEWATCH_MAX_ATTEMPTS
  try {
    return resolveIngestLimits(raw === undefined ? {} : { maxAttemptsPerResult: Number(raw) })
  } catch (error) {
    throw new InputError(`--max-attempts: ${(error as Error).message}`)
  }
}

/**
 * The root absolute test paths are made relative to: `--root`, `FLAKEWATCH_ROOT`, the config's `root`, else the
 * git repository around the working directory.
 */
export function repoRootFromFlags(flags: RunFlags & { config?: string }, env: NodeJS.ProcessEnv): string | null {
  const flag = flags.root ?? env.FLAKEWATCH_ROOT
  // The config is read only when needed: a bad config file must not break a command that never reads it.
  return resolveRepoRoot(flag, flag ? null : loadConfig({ file: flags.config, env }).root, process.cwd())
}

/** Flags win over `FLAKEWATCH_*`, which wins over the CI's own variables. */
export function runContextFromFlags(flags: RunFlags, env: NodeJS.ProcessEnv): RunContext {
  return mergeContexts(envRunContext(env), {
    runId: flags.runId,
    suite: flags.suite,
    branch: flags.branch,
    revision: flags.revision,
    pipelineId: flags.pipelineId,
    pipelineUrl: flags.pipelineUrl,
    jobId: flags.jobId,
    jobUrl: flags.jobUrl,
    jobStatus: flags.jobStatus,
    pipelineStatus: flags.pipelineStatus,
    runnerId: flags.runner,
    artifactsUrl: flags.artifactsUrl,
    status: flags.runStatus,
    env: parseEnvPairs(flags.env),
  })
}

/** Rows beyond its own that one `flakewatch ingest` re-analyses before it exits (see `refreshAnalyses`). */
const WRITER_SWEEP_ROWS = 5000

export async function ingest(inputs: string[], opts: IngestCommandOptions, io: Io): Promise<IngestSummary> {
  const context = runContextFromFlags(opts, io.env)
  const limits = ingestLimits(opts.maxAttempts, io.env)
  const store = await openStore({ db: projectStoreFlags(opts, io.env).db, env: io.env, createFolder: false })
  const bar =
    isInteractive(io) && !opts.json
      ? new SingleBar({ stream: io.stderr, format: 'ingesting [{bar}] {value}/{total} {file}' })
      : null
  const analysis = analysisOptions(loadConfig({ file: opts.config, env: io.env }))
  try {
    const summary = await ingestFiles({
      store,
      inputs,
      format: opts.format,
      context,
      replace: opts.replace,
      limits,
      root: repoRootFromFlags(opts, io.env),
      onProgress: (done, total, file) => {
        if (!bar) return
        if (done === 1) bar.start(total, 0, { file })
        bar.update(done, { file })
      },
    })
    // Once per command, not per report: each test of its reports is analysed once, at the clock they end at.
    const warning = await refreshAfterWrite(
      store,
      analysis,
      summary.ingested.map((i) => i.run_id),
    )
    if (warning !== null) io.stderr.write(`warning: ${warning}\n`)
    // The rows that the clock this command moved left behind, a bounded share of them, so that a store fed by
    // CI alone (no server sweeping) stays read from its persisted analyses. What is left waits for the next.
    await refreshAnalyses(store, resolveAnalysisConfig(analysis), { maxRows: WRITER_SWEEP_ROWS }).catch(() => undefined)
    return summary
  } finally {
    bar?.stop()
    await store.close()
  }
}

export function printIngest(summary: IngestSummary, opts: IngestCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, summary, opts.output)
  if (summary.ingested.length) {
    io.stdout.write(
      `${renderTable(
        ['file', 'run', 'tests', 'results', 'attempts'],
        summary.ingested.map((e) => [e.file, e.run_id, String(e.tests), String(e.results), String(e.attempts)]),
        { right: [2, 3, 4] },
      )}\n`,
    )
  }
  const results = summary.ingested.reduce((n, e) => n + e.results, 0)
  io.stderr.write(
    `stored ${results} results from ${summary.ingested.length} report(s)` +
      (summary.duplicates.length ? `; ${summary.duplicates.length} already stored (use --replace to overwrite)` : '') +
      '\n',
  )
  const warned = new Set<string>()
  for (const e of summary.ingested) {
    if (!e.warnings || warned.has(e.file)) continue
    warned.add(e.file)
    for (const w of e.warnings) io.stderr.write(`warning: ${e.file}: ${w}\n`)
  }
  for (const d of summary.duplicates) io.stderr.write(`duplicate: ${d.file} (run ${d.run_id})\n`)
  for (const f of summary.failed) io.stderr.write(`error: ${f.error}\n`)
}
