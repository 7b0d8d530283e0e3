import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { analysisOptions, loadConfig } from '../config/load.js'
import { REFRESH_BEFORE_ANSWER_ROWS, refreshAfterWrite } from '../pipeline/persisted-analyses.js'
import { IdentityReconciler } from '../pipeline/reconcile-ids.js'
import { isPostgresUrl, openStore } from '../store/open.js'
import { streamOfBatch } from '../store/store.js'
import { describeCases, type Recording } from './build-cases.js'
import { formatCtrf } from './ctrf.js'
import type { ResolvedReporterOptions } from './options.js'

/** Where a reporter speaks: stderr only, since stdout belongs to the runner. And the environment it reads. */
export interface ReporterIo {
  stderr: { write(chunk: string): unknown }
  env: Record<string, string | undefined>
}

/** The real process's stderr and environment. */
export function processIo(): ReporterIo {
  return { stderr: process.stderr, env: process.env }
}

export type WriteResult = { ok: true; where: string } | { ok: false; where: string; error: string }

/** Prints one `flakewatch:` line; a closed stderr must not turn into an exception inside the runner. */
export function say(io: ReporterIo, line: string): void {
  try {
    io.stderr.write(`flakewatch: ${line}\n`)
  } catch {
    // Nowhere left to say it.
  }
}

/** A store location fit to print: a PostgreSQL URL loses its credentials. */
export function describeDb(db: string): string {
  if (!isPostgresUrl(db)) return db
  try {
    const url = new URL(db)
    url.username = ''
    url.password = ''
    return url.toString()
  } catch {
    return 'postgres://…'
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A full disk or a crash mid-write must not leave a truncated report where a complete one is expected. */
async function writeFileAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
  try {
    await writeFile(tmp, text)
    await rename(tmp, file)
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined)
    throw error
  }
}

/**
 * Writes a reporter's recording to the store or to a CTRF file, and says what it did on stderr. Never throws: a
 * locked database, an unwritable path or a full disk is reported and the test run goes on with its own outcome.
 * @example await writeRecording(recording, options.target, processIo(), { name: 'vitest' })
 */
export async function writeRecording(
  rec: Recording,
  target: ResolvedReporterOptions['target'],
  io: ReporterIo,
  tool: { name: string; version?: string },
): Promise<WriteResult> {
  const where = target.kind === 'ctrf' ? target.file : describeDb(target.db)
  try {
    if (target.kind === 'ctrf') {
      const text = `${JSON.stringify(formatCtrf(rec.report, rec.context, tool), null, 2)}\n`
      await writeFileAtomic(target.file, text)
      say(io, `wrote ${describeCases(rec.report.cases)} to ${where}`)
      return { ok: true, where }
    }
    const store = await openStore({ db: target.db, env: io.env })
    try {
      // The names the store already knows its tests by (another reporter's, ingested before) win.
      const reconciled = new IdentityReconciler(store).reconcile(streamOfBatch(rec.batch))
      const outcomes = await store.ingestStream(reconciled.stream)
      await reconciled.remember()
      const stored = outcomes.filter((o) => o.outcome !== 'duplicate')
      const runs = outcomes.map((o) => o.runId).join(', ')
      if (stored.length === 0) say(io, `run ${runs} was already stored in ${where}; nothing written`)
      else say(io, `recorded ${describeCases(rec.report.cases)} as run ${runs} in ${where}`)
      // Its tests' persisted analyses, as `flakewatch ingest` refreshes them: a store fed by reporters alone is
      // then read from its rows, also by a read-only `serve`. Bounded as an upload is: the run is waiting.
      const analysis = projectAnalysis(io.env)
      const warning = await refreshAfterWrite(
        store,
        analysis,
        stored.map((o) => o.runId),
        REFRESH_BEFORE_ANSWER_ROWS,
      )
      if (warning !== null) say(io, `warning: ${warning}`)
    } finally {
      await store.close().catch(() => undefined)
    }
    return { ok: true, where }
  } catch (error) {
    const message = errorMessage(error)
    say(io, `could not record this run's results in ${where}: ${message}. The test run's outcome is unchanged.`)
    return { ok: false, where, error: message }
  }
}

/**
 * The project's analysis options when its flakewatch config loads, else the defaults: the rows are then re-analysed
 * by the first reader with another configuration, and a reporter never fails a run over a config.
 */
function projectAnalysis(env: Record<string, string | undefined>): ReturnType<typeof analysisOptions> | object {
  try {
    return analysisOptions(loadConfig({ env }))
  } catch {
    return {}
  }
}
