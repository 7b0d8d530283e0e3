import { importBundle, type ImportSummary } from '../../export/import-bundle.js'
import { emitJson, type Io } from '../output.js'
import { withStore } from '../with-store.js'
import type { StoreFlags } from '../project-option.js'

export interface ImportCommandOptions extends StoreFlags {
  contextKeys?: string
  replace?: boolean
  json?: boolean
  output?: string
}

/** `flakewatch import bundle <file>`: stores a flake-history bundle v1 (runs, and each test's results per run). */
export async function importBundleFile(file: string, opts: ImportCommandOptions, io: Io): Promise<ImportSummary> {
  const contextKeys = opts.contextKeys
    ?.split(',')
    .map((k) => k.trim())
    .filter(Boolean)
  return withStore(opts, io, (store) => importBundle(store, file, { contextKeys, replace: opts.replace }))
}

export function printImport(s: ImportSummary, opts: ImportCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, s, opts.output)
  io.stderr.write(
    `imported ${s.file}: ${s.runs} runs, ${s.tests} tests, ${s.results} results` +
      (s.duplicateRuns.length ? `; ${s.duplicateRuns.length} run(s) already stored (use --replace to overwrite)` : '') +
      '\n',
  )
  if (s.contextMismatches) {
    const e = s.mismatchExamples[0]!
    io.stderr.write(
      `warning: ${s.contextMismatches} result(s) sit in a context that differs from their run's; ` +
        `flakewatch files them under the run's (e.g. ${e.testId} in run ${e.runId}: ` +
        `cell ${JSON.stringify(e.cell)}, run ${JSON.stringify(e.run)})\n`,
    )
  }
}
