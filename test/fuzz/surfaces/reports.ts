import { join } from 'node:path'
import fc from 'fast-check'
import { expect } from 'vitest'
import { FlakewatchError, InternalError, ReportLimitError, ReportParseError } from '../../../src/errors.js'
import { FORMATS, parseReport, sourceFromBuffer, type Format } from '../../../src/ingest/index.js'
import type { ParsedReport } from '../../../src/ingest/types.js'
import { openReportStream } from '../../../src/pipeline/ingest-files.js'
import { IdentityReconciler } from '../../../src/pipeline/reconcile-ids.js'
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/sqlite-store.js'
import type { StoreStats } from '../../../src/store/store.js'
import { tempDir } from '../../server/helpers.js'
import {
  countingSource,
  expectBoundedWork,
  expectWithinLimits,
  jsonFiles,
  liveHeap,
  mutations,
  outcome,
  probe,
  realSeeds,
  type Surface,
} from '../support.js'

/** A real report, mutated, as one parser input: which seed, what was done to it, how it is read. */
export interface ReportInput {
  seed: string
  label: string
  bytes: Buffer
  /** `--format` given, rather than detected from the content. */
  forced: boolean
  /** Characters per chunk the source hands out. */
  chunk: number
}

const seeds = realSeeds()
const EXT: Record<string, string> = { junit: 'xml', trx: 'trx', nunit: 'xml', xunit: 'xml', tap: 'tap' }
const extOf = (format: Format) => EXT[format] ?? (format === 'cucumber-messages' ? 'ndjson' : 'json')

/**
 * The heap a parsed report may hold, per byte of the report it came from, plus a constant: a report is held as
 * objects that cost more than the text they came from (a 40-byte `<testcase/>` becomes a case with an attempt,
 * strings and arrays), but a count, a repeat or a nesting in the report never makes the parser hold more than that.
 * JSON formats, parsed whole, peak at about 8× the file (src/limits.ts) while parsing; what they keep is this.
 */
export const HELD_PER_BYTE = 40
const HELD_CONSTANT = 2 * 1024 * 1024

/** Mutated real reports, read as files are: one of them, every time, ends in a report or a documented error. */
export function mutatedReport(format: Format, list = seeds.get(format) ?? []): fc.Arbitrary<ReportInput> {
  return fc
    .tuple(fc.nat({ max: Math.max(0, list.length - 1) }), mutations(), fc.boolean(), fc.integer({ min: 1, max: 8192 }))
    .map(([i, mutation, forced, chunk]) => ({
      seed: list[i]!.path,
      label: mutation.label,
      bytes: mutation.apply(list[i]!.bytes),
      forced,
      chunk,
    }))
}

/**
 * The parser of `format`: a report within the limits, or the documented error naming the file; its input read a
 * bounded number of times; and, on a sampled input, the heap the report holds within {@link HELD_PER_BYTE}.
 */
async function checkParse(format: Format, input: ReportInput): Promise<void> {
  const name = `${input.seed} [${input.label}]`
  const source = countingSource(name, input.bytes, input.chunk)
  const measure = probe.due()
  const before = measure ? await liveHeap() : 0
  const result = await outcome(name, () => parseReport(source, input.forced ? { format } : {}))
  const report = 'report' in result ? result.report : undefined
  if (measure) {
    const held = (await liveHeap()) - before
    const bound = HELD_PER_BYTE * input.bytes.length + HELD_CONSTANT
    probe.maxHeldShare = Math.max(probe.maxHeldShare, held / bound)
    expect(held, `${name}: heap held by the parse`).toBeLessThanOrEqual(bound)
  }
  expectBoundedWork(source, input.bytes.length, report)
  if (report) expectWithinLimits(report)
}

/** `<hash>.forced.<ext>` keeps that the format was given, not detected. */
const saveReport = (format: Format) => (input: ReportInput) => ({
  ext: `${input.forced ? 'forced.' : ''}${extOf(format)}`,
  bytes: input.bytes,
})
const loadReport = (bytes: Buffer, file: string): ReportInput => ({
  seed: file,
  label: 'kept',
  bytes,
  forced: file.includes('.forced.'),
  chunk: 4096,
})

/** One surface per report format: `report-junit`, `report-go-json`, … */
export const parserSurfaces: Surface<ReportInput>[] = FORMATS.map((format) => ({
  name: `report-${format}`,
  runs: 1000,
  arbitrary: () => mutatedReport(format),
  check: (input) => checkParse(format, input),
  save: saveReport(format),
  load: loadReport,
}))

let store: SqliteStore | undefined
let cleanup: (() => void) | undefined
let stored = 0
const counts = (s: StoreStats) => ({ runs: s.runs, tests: s.tests, results: s.results, attempts: s.attempts })

async function ingest(name: string, bytes: Buffer, hash: string) {
  const { stream } = await openReportStream(countingSource(name, bytes, 4096), hash, { context: { suite: 'fuzz' } })
  const identities = new IdentityReconciler(store!)
  const reconciled = identities.reconcile(stream)
  const outcomes = await store!.ingestStream(reconciled.stream, {})
  await reconciled.remember()
  return outcomes
}

const allSeeds = [...seeds.values()].flat()

/**
 * Mutated real reports stored in a real SQLite file, as `flakewatch ingest` stores them: a report is stored whole
 * or not at all. On refusal the store's counts are exactly as before; on success they grew by what the ingest says
 * it stored, and a second ingest of the same bytes stores nothing more.
 */
export const storeSurface: Surface<ReportInput> = {
  name: 'store-ingest',
  runs: 1000,
  setup: async () => {
    const tmp = tempDir('fw-fuzz-store-')
    cleanup = tmp.cleanup
    store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  },
  teardown: async () => {
    await store?.close()
    cleanup?.()
  },
  arbitrary: () => fc.constantFrom(...FORMATS).chain((f) => mutatedReport(f, allSeeds)),
  check: async (input) => {
    const name = `${input.seed} [${input.label}]`
    const hash = `fuzz-${stored++}`
    const before = counts(await store!.stats())
    try {
      const outcomes = await ingest(name, input.bytes, hash)
      const after = counts(await store!.stats())
      const kept = outcomes.filter((o) => o.outcome !== 'duplicate')
      // A report naming a run already stored (its run id, other bytes) adds to that run: no new run row.
      expect(after.runs - before.runs).toBeLessThanOrEqual(kept.length)
      expect(after.results - before.results).toBe(kept.reduce((s, o) => s + o.results, 0))
      expect(after.attempts - before.attempts).toBe(kept.reduce((s, o) => s + o.attempts, 0))
      // The same report again (same content hash) is a duplicate: nothing is counted twice.
      const again = await ingest(name, input.bytes, hash)
      expect(again.every((o) => o.outcome === 'duplicate')).toBe(true)
      expect(counts(await store!.stats())).toEqual(after)
    } catch (error) {
      if (!(error instanceof FlakewatchError) || error instanceof InternalError) throw error
      if (error instanceof ReportParseError || error instanceof ReportLimitError) expect(error.file).toBe(name)
      expect(counts(await store!.stats())).toEqual(before)
    }
  },
  save: (input) => ({ ext: 'bin', bytes: input.bytes }),
  load: loadReport,
}

/**
 * A name a runner could write: printable, no surrounding whitespace (runners trim, and so does flakewatch). Not
 * U+FFFD: the binary-file check cannot tell a literal replacement character near the top of a report from invalid
 * UTF-8, and refuses both (docs/ingest.md, "Bad input").
 */
const name = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
  .map((s) => s.replace(/[\p{Cc}\p{Cs}\uFFFD\uFFFE\uFFFF]/gu, '').trim())
  .filter((s) => s.length > 0)

interface GenCase {
  module: string
  name: string
  status: 'passed' | 'failed' | 'skipped'
  ms: number
  message: string
}

const testCase: fc.Arbitrary<GenCase> = fc.record({
  module: name,
  name,
  status: fc.constantFrom('passed' as const, 'failed' as const, 'skipped' as const),
  ms: fc.integer({ min: 0, max: 3_600_000 }),
  message: name,
})

const xml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')

/** JUnit XML written from arbitrary cases (any printable name, every status) reads back as exactly those cases. */
export const junitRoundTrip: Surface<GenCase[]> = {
  name: 'round-trip-junit',
  runs: 1000,
  // A classname that is the name, or ends it after a space, is the test's own title to the parser (mocha-junit-reporter
  // and jest-junit's default templates, docs/ingest.md), and `test` with no timestamp is node --test's placeholder:
  // their module comes from the file or suite, not from this property's case.
  arbitrary: () =>
    fc.uniqueArray(
      testCase.filter((c) => c.name !== c.module && !c.name.endsWith(` ${c.module}`) && c.module !== 'test'),
      { maxLength: 20, selector: (c) => `${c.module}\u0000${c.name}` },
    ),
  check: async (cases) => {
    const body = cases
      .map((c) => {
        const inner =
          c.status === 'failed'
            ? `<failure message="${xml(c.message)}">${xml(c.message)}</failure>`
            : c.status === 'skipped'
              ? '<skipped/>'
              : ''
        return `<testcase classname="${xml(c.module)}" name="${xml(c.name)}" time="${(c.ms / 1000).toFixed(3)}">${inner}</testcase>`
      })
      .join('\n')
    const text = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="s" tests="${cases.length}">\n${body}\n</testsuite>\n`
    const report: ParsedReport = await parseReport(sourceFromBuffer('gen.xml', text))
    expect(report.format).toBe('junit')
    const read = report.cases.map((c) => ({
      module: c.module,
      name: c.name,
      status: c.status,
      ms: c.durationMs,
      message: c.status === 'failed' ? c.message : null,
    }))
    expect(read).toEqual(cases.map((c) => ({ ...c, message: c.status === 'failed' ? c.message : null })))
  },
  ...jsonFiles<GenCase[]>(),
}

/** The simple CI JSON written from arbitrary results reads back as them. */
export const simpleJsonRoundTrip: Surface<Record<string, boolean>> = {
  name: 'round-trip-simple-json',
  runs: 1000,
  arbitrary: () => {
    const key = fc
      .tuple(
        name,
        name.filter((n) => !n.includes('/')),
      )
      .map(([m, n]) => `${m}/${n}`)
    return fc.dictionary(key, fc.boolean(), { maxKeys: 20 })
  },
  check: async (tests) => {
    const text = JSON.stringify({ metadata: { ref: 'main', pipeline_id: 7 }, tests })
    const report = await parseReport(sourceFromBuffer('gen.json', text), { format: 'simple-json' })
    const read = Object.fromEntries(report.cases.map((c) => [`${c.module}/${c.name}`, c.status === 'passed']))
    expect(read).toEqual(tests)
  },
  ...jsonFiles<Record<string, boolean>>(),
}
