import type { AnalysisConfigOptions } from '../analysis/resolve-analysis-config.js'
import { appendAll } from '../extent.js'
import type { Format } from '../ingest/formats.js'
import { sourceFromBuffer, sourceFromFile } from '../ingest/source.js'
import { emptySummary, ingestSource, type IngestSummary } from '../pipeline/ingest-files.js'
import { REFRESH_BEFORE_ANSWER_ROWS, refreshAfterWrite } from '../pipeline/persisted-analyses.js'
import type { RunContext } from '../pipeline/run-context.js'
import type { Store } from '../store/store.js'

/**
 * One upload: its report files, each spooled by the HTTP thread (in memory, or in a temporary file when large) and
 * hashed on arrival, and what the request said about the run. Plain data, to cross to a worker.
 */
export interface UploadJob {
  files: { name: string; hash: string; path: string | null; content: Uint8Array | null }[]
  context: RunContext
  format: Format | undefined
  replace: boolean
  /** The uploading checkout's repository root, for test paths (see `relativeToRoot`). */
  root: string | null
  /** The server's analysis configuration: each report's tests are re-analysed with it just after its commit. */
  analysis?: AnalysisConfigOptions
}

/**
 * Re-analyses uploads' runs elsewhere than on the connection that stored them: the server's analysis thread
 * (`SnapshotBuilder.refresh`), for the uploads of every worker, several at once (see `UploadPool`).
 */
export type UploadRefresh = (runIds: string[], maxRows: number) => Promise<unknown>

/**
 * Stores each file of an upload as `flakewatch ingest` would: one transaction per report, failures listed; then,
 * when the job carries the analysis configuration, re-analyses its tests' persisted analyses on `store` (at most
 * {@link REFRESH_BEFORE_ANSWER_ROWS}). A server's pool takes that part away from its workers (see `UploadPool`).
 */
export async function ingestUpload(store: Store, job: UploadJob): Promise<IngestSummary> {
  const summary = await storeUpload(store, job)
  // Just after the commits, before the answer: the uploader's next read finds its tests' analyses current.
  if (job.analysis !== undefined) {
    const runIds = summary.ingested.map((i) => i.run_id)
    warnAll(summary, await refreshAfterWrite(store, job.analysis, runIds, REFRESH_BEFORE_ANSWER_ROWS))
  }
  return summary
}

/** Stores each file of an upload as `flakewatch ingest` would: one transaction per report, failures listed. */
async function storeUpload(store: Store, job: UploadJob): Promise<IngestSummary> {
  const summary = emptySummary()
  for (const file of job.files) {
    const source = file.path
      ? sourceFromFile(file.path, file.name)
      : // A view, not a copy: a message gives the worker a plain Uint8Array.
        sourceFromBuffer(
          file.name,
          Buffer.from(file.content!.buffer, file.content!.byteOffset, file.content!.byteLength),
        )
    const one = await ingestSource(source, file.hash, {
      store,
      context: job.context,
      format: job.format,
      replace: job.replace,
      root: job.root,
    })
    appendAll(summary.ingested, one.ingested)
    appendAll(summary.duplicates, one.duplicates)
    appendAll(summary.failed, one.failed)
  }
  return summary
}

/** Adds a refresh's warning to each report of an upload that it stored. */
export function warnAll(summary: IngestSummary, warning: string | null): void {
  if (warning !== null) for (const i of summary.ingested) (i.warnings ??= []).push(warning)
}
