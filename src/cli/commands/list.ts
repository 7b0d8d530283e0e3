import type { Format } from '../../ingest/formats.js'
import type { TestRef } from '../../model.js'
import { analysisOptions } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { analyzeStore } from '../../pipeline/analyze-store.js'
import { playwrightGrep, testNamePattern } from '../../retry/test-patterns.js'
import { parseTestId } from '../../tracker.js'
import { emit, emitJson, type Io } from '../output.js'
import { withReadStore } from '../with-store.js'
import type { RunFlags } from './ingest.js'
import type { StoreFlags } from '../project-option.js'
import { compareText } from '../../compare-text.js'

/** Why a test is listed. */
export type ListReason = 'flaky' | 'quarantined' | 'new'

export const LIST_FORMATS = ['lines', 'json', 'grep', 'test-name'] as const
export type ListFormat = (typeof LIST_FORMATS)[number]

export interface ListCommandOptions extends RunFlags, StoreFlags {
  flaky?: boolean
  quarantined?: boolean
  new?: boolean
  /** The branch a test must have run on to count as known (default: the config's defaultBranch). */
  defaultBranch?: string
  quarantineFile?: string
  format?: ListFormat
  reportFormat?: Format
  output?: string
}

export interface ListedTest extends TestRef {
  reasons: ListReason[]
}

export interface ListResult {
  tests: ListedTest[]
}

/**
 * The tests a CI needs to aim retries at: known flaky (by verdict), quarantined, and new (in the given reports but
 * never seen on the default branch). Several selections are a union; each test says why it is listed.
 */
export async function listTests(reports: string[], opts: ListCommandOptions, io: Io): Promise<ListResult> {
  if (!opts.flaky && !opts.quarantined && !opts.new)
    throw new InputError('list: choose at least one of --flaky, --quarantined, --new')
  if (opts.new && !reports.length)
    throw new InputError('list --new: give the reports (or the test list) of the current run')
  if (!opts.new && reports.length) throw new InputError('list: report arguments are only read with --new')
  const current = opts.new ? await readCurrentTests(reports, opts, io) : []
  const listed = new Map<string, ListedTest>()
  const add = (ref: TestRef, reason: ListReason) => {
    const seen = listed.get(ref.testId)
    if (!seen) listed.set(ref.testId, { ...ref, reasons: [reason] })
    else if (!seen.reasons.includes(reason)) seen.reasons.push(reason)
  }
  const needsStore = opts.flaky || opts.new || (opts.quarantined && !opts.quarantineFile)
  if (opts.quarantined && opts.quarantineFile) {
    const { readQuarantineFile } = await import('../../quarantine/file.js')
    for (const q of readQuarantineFile(opts.quarantineFile).records) add(parseTestId(q.testId), 'quarantined')
  }
  if (needsStore) {
    await withReadStore(opts, io, async (store, config) => {
      if (opts.flaky) {
        await analyzeStore(store, {
          config: analysisOptions(config),
          onTest: (h, a) => a.verdict === 'flaky' && add(h.test, 'flaky'),
        })
      }
      if (opts.quarantined && !opts.quarantineFile) {
        for (const q of await store.listQuarantines())
          add((await store.getTest(q.testId)) ?? parseTestId(q.testId), 'quarantined')
      }
      if (opts.new && current.length) {
        const branch = opts.defaultBranch ?? config.defaultBranch
        const known = new Set<string>()
        for await (const h of store.scanHistory({ branch, testIds: current.map((t) => t.testId) }))
          if (h.entries.length) known.add(h.test.testId)
        for (const t of current) if (!known.has(t.testId)) add(t, 'new')
      }
    })
  }
  return { tests: [...listed.values()].sort((a, b) => compareText(a.testId, b.testId)) }
}

/** The tests of the current run, from its report files (any format flakewatch reads), each once. */
async function readCurrentTests(reports: string[], opts: ListCommandOptions, io: Io): Promise<TestRef[]> {
  const { readJobResults } = await import('./gate.js')
  const { results } = await readJobResults(reports, { ...opts, format: opts.reportFormat }, io, { all: true })
  const byId = new Map<string, TestRef>()
  for (const r of results) if (!byId.has(r.test.testId)) byId.set(r.test.testId, r.test)
  return [...byId.values()]
}

/** `lines`: test ids; `grep`: a Playwright `--grep` pattern; `test-name`: a Vitest/Jest `-t` pattern; `json`. */
export function printList(result: ListResult, opts: ListCommandOptions, io: Io): void {
  const format = opts.format ?? 'lines'
  if (format === 'json') {
    return emitJson(
      io,
      {
        tests: result.tests.map((t) => ({
          test_id: t.testId,
          suite: t.suite,
          module: t.module,
          name: t.name,
          file: t.file,
          reasons: t.reasons,
        })),
        playwright_grep: playwrightGrep(result.tests),
        test_name_pattern: testNamePattern(result.tests),
      },
      opts.output,
    )
  }
  if (format === 'grep') return emit(io, playwrightGrep(result.tests), opts.output)
  if (format === 'test-name') return emit(io, testNamePattern(result.tests), opts.output)
  if (!result.tests.length) {
    if (opts.output) emit(io, '', opts.output)
    return void io.stderr.write('no tests match\n')
  }
  emit(io, result.tests.map((t) => t.testId).join('\n'), opts.output)
}
