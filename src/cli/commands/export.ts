import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { asOfTime } from '../../analysis/as-of.js'
import { parseAsOf } from './analyze.js'
import { successRateMap } from '../../analysis/success-rate.js'
import type { TestAnalysis } from '../../analysis/types.js'
import { analysisOptions } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { analysisCsvHeader, analysisCsvLine } from '../../export/analysis-csv.js'
import type { ClassificationMode } from '../../export/classify-bundle-test.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { writeBundle, type BundleExportOptions, type BundleSummary } from '../../export/write-bundle.js'
import { forEachAnalysis } from '../../pipeline/analyze-store.js'
import type { Store } from '../../store/store.js'
import { emitJson, jsonLine, writePieces, type Io } from '../output.js'
import { compareText } from '../../compare-text.js'
import { withStore } from '../with-store.js'
import type { StoreFlags } from '../project-option.js'

const DAY_MS = 86_400_000

/** The flags that shape a bundle, shared by `export bundle` and `publish gitlab`. */
export interface BundleFlags {
  db?: string
  config?: string
  days?: string
  suite?: string
  contextKeys?: string
  classification?: string
  asOf?: string
}

export interface ExportBundleCommandOptions extends BundleFlags, StoreFlags {
  output?: string
  json?: boolean
}

export interface ExportBundleResult extends BundleSummary {
  /** The file written, or null for stdout. */
  file: string | null
}

export interface ExportTableCommandOptions extends StoreFlags {
  suite?: string
  branch?: string
  days?: string
  output?: string
  asOf?: string
}

function parseDays(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const days = /^\d+$/.test(value) ? Number(value) : NaN
  if (!(days >= 1)) throw new InputError(`--days must be a whole number of days ≥ 1, got "${value}"`)
  return days
}

/** Flags to library options; the library checks the values and names the flag in its errors. */
export function bundleOptionsFromFlags(flags: BundleFlags): Omit<BundleExportOptions, 'analysis'> {
  return {
    days: parseDays(flags.days),
    suite: flags.suite,
    contextKeys: flags.contextKeys
      ?.split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    classification: flags.classification as ClassificationMode | undefined,
    now: parseAsOf(flags.asOf),
  }
}

/** Writes the bundle of `store` to `out`, with the analysis settings of the config for `--classification verdict`. */
export function writeBundleFromFlags(
  store: Store,
  config: Parameters<typeof analysisOptions>[0] & Parameters<typeof ownerLookupFromConfig>[0],
  flags: BundleFlags,
  out: NodeJS.WritableStream,
  end: boolean,
): Promise<BundleSummary> {
  const owners = ownerLookupFromConfig(config, process.cwd())
  return writeBundle(store, out, { ...bundleOptionsFromFlags(flags), analysis: analysisOptions(config), owners, end })
}

/**
 * `flakewatch export bundle`: streams the GitLabViz flake-history bundle v1 to `--output` or stdout. A file is
 * written beside its target and renamed into place, so that a failed export never leaves half a bundle where a
 * publish step or a viewer would pick it up.
 */
export async function exportBundle(opts: ExportBundleCommandOptions, io: Io): Promise<ExportBundleResult> {
  bundleOptionsFromFlags(opts)
  return withStore(
    opts,
    io,
    async (store, config) => {
      if (!opts.output) return { file: null, ...(await writeBundleFromFlags(store, config, opts, io.stdout, false)) }
      const tmp = join(dirname(opts.output), `.${basename(opts.output)}.${process.pid}.tmp`)
      try {
        const summary = await writeBundleFromFlags(store, config, opts, createWriteStream(tmp), true)
        await rename(tmp, opts.output)
        return { file: opts.output, ...summary }
      } catch (error) {
        await rm(tmp, { force: true })
        const code = (error as NodeJS.ErrnoException).code
        // A file-system error (missing folder, no permission) is the user's to fix, not a flakewatch bug.
        if (typeof code === 'string' && code.startsWith('E')) {
          throw new InputError(`${opts.output}: cannot write: ${code}`, { cause: error })
        }
        throw error
      }
    },
    'read',
  )
}

export function printExportBundle(r: ExportBundleResult, opts: ExportBundleCommandOptions, io: Io): void {
  // Without --output the bundle itself is on stdout, so the summary can only go to stderr.
  if (opts.json && r.file) return void io.stdout.write(`${jsonLine(r)}\n`)
  const mb = (r.bytes / 1024 / 1024).toFixed(2)
  io.stderr.write(`bundle: ${r.runs} runs, ${r.tests} tests, ${mb} MB${r.file ? ` → ${r.file}` : ''}\n`)
}

/**
 * Every test's analysis, one at a time and kept by no one (`forEachAnalysis`), for the exports whose rows need
 * no other test: a store of a million tests never holds a million analyses.
 */
async function eachAnalysis(
  opts: ExportTableCommandOptions,
  io: Io,
  onTest: (analysis: TestAnalysis) => void,
): Promise<void> {
  const days = parseDays(opts.days)
  const asOf = parseAsOf(opts.asOf)
  return withStore(
    opts,
    io,
    async (store, config) => {
      // --days counts back from the same as-of time as the analysis windows: the newest run unless --as-of.
      const now =
        asOf ?? asOfTime(await store.runSummaries({ suite: opts.suite, branch: opts.branch }), undefined, Date.now())
      const since = days === undefined ? undefined : now - days * DAY_MS
      await forEachAnalysis(
        store,
        { config: analysisOptions(config), now, filter: { suite: opts.suite, branch: opts.branch, since } },
        (_, a) => onTest(a),
      )
    },
    'read',
  )
}

/** The CSV export: one line per test, in test-id order. */
export interface CsvExport {
  header: string
  rows: { testId: string; line: string }[]
}

/** `flakewatch export csv`: every test's metrics, one row per test, made as each test is analysed. */
export async function exportCsv(opts: ExportTableCommandOptions, io: Io): Promise<CsvExport> {
  const rows: CsvExport['rows'] = []
  await eachAnalysis(opts, io, (a) => rows.push({ testId: a.testId, line: analysisCsvLine(a) }))
  rows.sort((a, b) => compareText(a.testId, b.testId))
  return { header: analysisCsvHeader(), rows }
}

// Terminal escapes in a test name must not reach a terminal; CR, LF and tab are CSV data and stay.
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g

export async function printExportCsv(csv: CsvExport, opts: ExportTableCommandOptions, io: Io): Promise<void> {
  // Not `emit`: it strips every control character, and CSV needs its CRLF line ends and the cells as they are.
  const clean = !opts.output && io.stdout.isTTY
  function* pieces() {
    yield csv.header
    for (const r of csv.rows) yield clean ? r.line.replace(TERMINAL_CONTROL, '') : r.line
  }
  await writePieces(io, pieces(), opts.output)
  if (opts.output) io.stderr.write(`wrote ${csv.rows.length} tests to ${opts.output}\n`)
}

/** `flakewatch export stats`: the quarantine blog's `{ "test id": success rate }`, for tests with relevant runs. */
export async function exportStats(opts: ExportTableCommandOptions, io: Io): Promise<Record<string, number>> {
  const rates: { testId: string; successRate: number | null }[] = []
  await eachAnalysis(opts, io, (a) => {
    if (a.successRate !== null) rates.push({ testId: a.testId, successRate: a.successRate })
  })
  return successRateMap(rates)
}

export function printExportStats(stats: Record<string, number>, opts: ExportTableCommandOptions, io: Io): void {
  emitJson(io, stats, opts.output)
}
