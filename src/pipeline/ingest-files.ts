import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, statSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { FlakewatchError, ReportLimitError } from '../errors.js'
import type { Format } from '../ingest/formats.js'
import { streamReport } from '../ingest/parse-report.js'
import { MAX_FILES_PER_COMMAND, resolveIngestLimits, type IngestLimits } from '../limits.js'
import { sourceFromBuffer, sourceFromFile } from '../ingest/source.js'
import type { ReportSource } from '../ingest/types.js'
import type { ReportStream, RunBatch, Store } from '../store/store.js'
import type { IngestWarnings } from '../ingest/warnings.js'
import { buildReportStream } from './build-batch.js'
import { parseAhead } from './parse-ahead.js'
import { IdentityReconciler } from './reconcile-ids.js'
import type { RunContext } from './run-context.js'
import type { UploadResponse } from '../server/api-types.js'

/** Reports up to this size are hashed from one read; larger ones stream. */
export const WHOLE_READ_BYTES = 8 * 1024 * 1024

/** Report files a directory may hold. */
const REPORT_GLOB = '**/*.{xml,json,trx,tap,ndjson}'

/** One stored report, as `flakewatch ingest --json` prints it. */
export type IngestedEntry = IngestSummary['ingested'][number]

/**
 * The JSON shape `flakewatch ingest --json` prints, also returned by the upload endpoint: declared once, with the
 * API's browser-safe types, so the CLI's output and the HTTP answer cannot drift apart.
 */
export type IngestSummary = UploadResponse

export interface IngestSourceOptions {
  store: Store
  format?: Format
  context: RunContext
  replace?: boolean
  /** Limits on counts from the report (attempts per result); defaults in `src/limits.ts`. */
  limits?: Partial<IngestLimits>
  /** Absolute test paths inside this directory become relative to it (see `resolveRepoRoot`). */
  root?: string | null
  /**
   * Matches each report's test names to the tests the store knows (see `reconcile-ids.ts`); one is made per call
   * when absent. A command of several reports passes one, so that the store's tests are read once.
   */
  identities?: IdentityReconciler
}

export interface IngestFilesOptions extends IngestSourceOptions {
  inputs: string[]
  /** Called after each file, for progress bars. */
  onProgress?: (done: number, total: number, file: string) => void
}

export function emptySummary(): IngestSummary {
  return { ingested: [], duplicates: [], failed: [] }
}

/**
 * Expands files, directories (searched for .xml, .json, .trx, .tap and .ndjson) and globs into a sorted, de-duplicated list.
 * Inputs that match nothing are returned separately so that the caller can report them.
 */
export async function expandInputs(inputs: string[]): Promise<{ files: string[]; missing: string[] }> {
  // Loaded only when needed: the gate's common case names plain files, and start-up time is its budget.
  const glob = async (pattern: string, opts: { cwd?: string; absolute: boolean }) =>
    (await import('tinyglobby')).glob(pattern, opts)
  const files = new Set<string>()
  const missing: string[] = []
  for (const input of inputs) {
    const info = await stat(input).catch(() => null)
    if (info?.isFile()) files.add(input)
    else if (info?.isDirectory()) {
      for (const f of await glob(REPORT_GLOB, { cwd: input, absolute: false }))
        files.add(`${input.replace(/\/$/, '')}/${f}`)
    } else {
      const matched = await glob(input, { absolute: false })
      if (matched.length === 0) missing.push(input)
      for (const f of matched) files.add(f)
    }
  }
  return { files: [...files].sort(), missing }
}

/** sha256 of a report's bytes, streamed: the key that makes re-ingesting the same file a duplicate. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256')
  // One read for the common report; streaming only where a whole-file buffer would cost real memory.
  if ((await stat(path)).size <= WHOLE_READ_BYTES) return hash.update(await readFile(path)).digest('hex')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/**
 * A report file as a source and its content hash. A file up to a few MB (nearly every report) is read once for
 * both; a larger one is hashed and parsed as two streams, so that it is never held whole.
 */
export async function openReportFile(path: string): Promise<{ source: ReportSource; hash: string }> {
  if ((await stat(path)).size > WHOLE_READ_BYTES) return { source: sourceFromFile(path), hash: await hashFile(path) }
  const content = await readFile(path)
  return { source: sourceFromBuffer(path, content), hash: createHash('sha256').update(content).digest('hex') }
}

/**
 * {@link openReportFile} for a thread that has nothing else to do (the parse worker), or null for a file over 8 MB.
 * Read synchronously: an asynchronous read is a trip through the thread pool for each of stat, open, read and
 * close, and with 200,000 small reports those trips, not the reading, were most of the ingest's time.
 */
export function openSmallReportFileSync(path: string): { source: ReportSource; hash: string } | null {
  if (statSync(path).size > WHOLE_READ_BYTES) return null
  const content = readFileSync(path)
  return { source: sourceFromBuffer(path, content), hash: createHash('sha256').update(content).digest('hex') }
}

function errorText(error: unknown): string {
  if (error instanceof FlakewatchError) return error.message
  return error instanceof Error ? error.message : String(error)
}

/**
 * Parses one report and stores it in one transaction, streaming: cases go from the parser to the store a chunk at
 * a time, so memory follows the chunk, not the report. Adds the outcome to `summary`; a report that fails to
 * parse or store (or passes a limit) is listed under `failed` and leaves the store as it was.
 */
export async function ingestSource(
  source: ReportSource,
  contentHash: string,
  opts: IngestSourceOptions,
  summary: IngestSummary = emptySummary(),
): Promise<IngestSummary> {
  try {
    const { stream, warnings } = await openReportStream(source, contentHash, opts)
    await storeReportStream(stream, () => warnings.list(), opts, summary)
  } catch (error) {
    summary.failed.push({ file: source.name, error: errorText(error) })
  }
  return summary
}

/** What parsing needs of the ingest options: plain data, so that a worker thread can be given it. */
export type ParseReportOptions = Pick<IngestSourceOptions, 'format' | 'context' | 'limits' | 'root'>

/** Detects, opens and normalises one report as the stream the store writes (nothing is parsed until pulled). */
export async function openReportStream(
  source: ReportSource,
  contentHash: string,
  opts: ParseReportOptions,
): Promise<{ stream: ReportStream<RunBatch>; warnings: IngestWarnings }> {
  const limits = resolveIngestLimits(opts.limits)
  const parsed = await streamReport(source, { format: opts.format, limits })
  return buildReportStream({ parsed, file: source.name, contentHash, context: opts.context, limits, root: opts.root })
}

/** Stores one report stream in one transaction and adds its outcome to `summary`; throws what the store throws. */
async function storeReportStream(
  stream: ReportStream,
  warnings: () => string[],
  opts: IngestSourceOptions,
  summary: IngestSummary,
): Promise<void> {
  const reconciled = (opts.identities ?? new IdentityReconciler(opts.store)).reconcile(stream)
  const outcomes = await opts.store.ingestStream(reconciled.stream, {
    replace: opts.replace,
    maxAttemptsPerResult: resolveIngestLimits(opts.limits).maxAttemptsPerResult,
  })
  await reconciled.remember()
  const noted = [...warnings(), ...reconciled.warnings()]
  for (const o of outcomes) {
    if (o.outcome === 'duplicate') summary.duplicates.push({ file: stream.file, run_id: o.runId })
    else
      summary.ingested.push({
        file: stream.file,
        run_id: o.runId,
        tests: o.tests,
        results: o.results,
        attempts: o.attempts,
        ...(noted.length > 0 ? { warnings: noted } : {}),
      })
  }
}

/** Ingests in-memory content (an HTTP upload). */
export function ingestBuffer(name: string, content: Buffer, opts: IngestSourceOptions): Promise<IngestSummary> {
  const hash = createHash('sha256').update(content).digest('hex')
  return ingestSource(sourceFromBuffer(name, content), hash, opts)
}

/**
 * Ingests every report the inputs name, one transaction per report; the other files still ingest when one fails.
 * @example await ingestFiles({ store, inputs: ['reports/'], context: { suite: 'unit' } })
 */
export async function ingestFiles(options: IngestFilesOptions): Promise<IngestSummary> {
  const opts = { ...options, identities: options.identities ?? new IdentityReconciler(options.store) }
  const summary = emptySummary()
  const { files, missing } = await expandInputs(opts.inputs)
  if (files.length > MAX_FILES_PER_COMMAND) {
    throw new ReportLimitError(
      opts.inputs.join(' '),
      'report files in one command',
      MAX_FILES_PER_COMMAND,
      files.length,
    )
  }
  for (const m of missing) summary.failed.push({ file: m, error: `${m}: no such file, directory or matching glob` })
  let done = 0
  const ahead = parseAhead(files, opts)
  try {
    for (const file of files) {
      try {
        const parsed = await ahead?.next(file)
        if (parsed) {
          await storeReportStream(parsed.stream, parsed.warnings, opts, summary)
        } else {
          const { source, hash } = await openReportFile(file)
          await ingestSource(source, hash, opts, summary)
        }
      } catch (error) {
        summary.failed.push({ file, error: errorText(error) })
      }
      opts.onProgress?.(++done, files.length, file)
    }
  } finally {
    await ahead?.close()
  }
  return summary
}
