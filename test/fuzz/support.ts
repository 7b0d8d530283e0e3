import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import { expect } from 'vitest'
import { ReportLimitError, ReportParseError } from '../../src/errors.js'
import { detectFormat, sourceFromBuffer, type Format } from '../../src/ingest/index.js'
import type { ParsedReport, ReportSource } from '../../src/ingest/types.js'
import { DEFAULT_MAX_ATTEMPTS_PER_RESULT, MAX_DURATION_MS, MAX_FACETS, MAX_NAME, MAX_TEXT } from '../../src/limits.js'

/**
 * Inputs each property tries: about 10^3 per surface in CI; `FLAKEWATCH_FUZZ_RUNS=100000` (bench/fuzz.mjs) runs a
 * deep search with the same properties.
 */
export function fuzzRuns(base: number): number {
  const raised = Number(process.env.FLAKEWATCH_FUZZ_RUNS)
  return Number.isInteger(raised) && raised > 0 ? raised : base
}

/** A test's timeout: a deep run (`FLAKEWATCH_FUZZ_RUNS`) may take an hour; the default run a small fraction. */
export const FUZZ_TIMEOUT = process.env.FLAKEWATCH_FUZZ_RUNS ? 3_600_000 : 120_000

/**
 * The fast-check settings every fuzz property shares. `FLAKEWATCH_FUZZ_SEED` replays one reported failure
 * (with the `path` fast-check printed, via `FLAKEWATCH_FUZZ_PATH`).
 */
export function fuzzParams(base: number): fc.Parameters<unknown> {
  const seed = Number(process.env.FLAKEWATCH_FUZZ_SEED)
  const path = process.env.FLAKEWATCH_FUZZ_PATH
  return {
    numRuns: fuzzRuns(base),
    ...(Number.isInteger(seed) ? { seed } : {}),
    ...(path ? { path } : {}),
    // Shrinking a mutated 20 KB report is slow and the counterexample is kept as a fixture anyway.
    endOnFailure: process.env.FLAKEWATCH_FUZZ_SHRINK !== '1',
  }
}

export const ROOT = join(import.meta.dirname, '..', '..')

/** A real report from the repository's fixtures, with the format its content is detected as. */
export interface Seed {
  path: string
  format: Format
  bytes: Buffer
}

/**
 * Set by bench/fuzz.mjs: the JSON-lines file each surface's summary is appended to. A bench run also uses smaller
 * inputs (seeds cut to {@link MAX_SEED_BYTES}, milder repeats and nesting), so that 10^5 inputs per surface fit its time.
 */
export const BENCH_OUT = process.env.FLAKEWATCH_FUZZ_BENCH || null

/**
 * Above this, a fixture is too slow to parse thousands of times per run. A line format's seed above it is cut at a
 * line (a prefix of a stream is a stream); another format's is left out unless it is the format's only one.
 */
const MAX_SEED_BYTES = BENCH_OUT ? 12 * 1024 : 48 * 1024
const LINE_FORMATS = new Set<Format>(['go-json', 'tap', 'bazel-bep', 'cucumber-messages'])

function sized(format: Format, bytes: Buffer): Buffer | null {
  if (bytes.length <= MAX_SEED_BYTES) return bytes
  if (!LINE_FORMATS.has(format)) return null
  const cut = bytes.lastIndexOf(0x0a, MAX_SEED_BYTES)
  return cut > 0 ? bytes.subarray(0, cut + 1) : null
}

/** Every real report fixture small enough to fuzz, by detected format. */
export function realSeeds(): Map<Format, Seed[]> {
  const byFormat = new Map<Format, Seed[]>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      const info = statSync(path)
      if (info.isDirectory()) walk(path)
      else if (/\.(xml|json|ndjson|trx|tap)$/.test(entry) && info.size <= 256 * 1024) {
        const bytes = readFileSync(path)
        const format = detectFormat(bytes.toString('utf8', 0, 16 * 1024), entry)
        if (!format) continue
        const list = byFormat.get(format) ?? []
        list.push({ path: relative(ROOT, path), format, bytes })
        byFormat.set(format, list)
      }
    }
  }
  for (const dir of ['test/fixtures/public', 'test/fixtures/reports', 'test/fixtures/fuzz/seeds', 'examples/reports']) {
    walk(join(ROOT, dir))
  }
  for (const [format, list] of byFormat) {
    const kept = list.flatMap((s) => {
      const bytes = sized(format, s.bytes)
      return bytes ? [{ ...s, bytes }] : []
    })
    byFormat.set(format, kept.length > 0 ? kept : [list.reduce((a, b) => (a.bytes.length <= b.bytes.length ? a : b))])
  }
  return byFormat
}

/** A source that counts what the parser pulls from it: a parser that re-reads its input does work per byte. */
export interface CountingSource extends ReportSource {
  /** Characters handed out through `chunks()` and `text()` together. */
  charsRead(): number
}

/**
 * `bytes` as a report, handed out in chunks of `chunkChars` characters (decoded like a file), counting reads.
 * @example const src = countingSource('r.xml', bytes, 7); await parseReport(src); src.charsRead()
 */
export function countingSource(name: string, bytes: Uint8Array, chunkChars = 64 * 1024): CountingSource {
  const inner = sourceFromBuffer(name, bytes)
  let read = 0
  return {
    name,
    charsRead: () => read,
    async *chunks() {
      for await (const text of inner.chunks()) {
        for (let i = 0; i < text.length; i += chunkChars) {
          const piece = text.slice(i, i + chunkChars)
          read += piece.length
          yield piece
        }
      }
    },
    async text() {
      const text = await inner.text()
      read += text.length
      return text
    },
  }
}

/**
 * What a parse ended in: a report, or one of the two documented errors, naming the file first. Anything else
 * (a TypeError, a RangeError, a zod error escaping) fails the property, with the input's name in the message.
 */
export async function outcome(
  name: string,
  parse: () => Promise<ParsedReport>,
): Promise<{ report: ParsedReport } | { error: ReportParseError | ReportLimitError }> {
  try {
    return { report: await parse() }
  } catch (error) {
    if (!(error instanceof ReportParseError) && !(error instanceof ReportLimitError)) {
      const what = error instanceof Error ? (error.stack ?? error.message) : String(error)
      throw new Error(`${name}: undocumented error: ${what}`)
    }
    expect(error.file).toBe(name)
    expect(error.message.startsWith(`${name}:`) || error.message.startsWith(`${name} `)).toBe(true)
    return { error }
  }
}

/** Room for the cut marker `truncateText` appends to a text at its limit. */
const CUT_MARKER_CHARS = 64

/**
 * Every count and size the parser handed on is within the documented limits (src/limits.ts). Plain comparisons,
 * not `expect`: a report has hundreds of cases, and the bench checks 10^5 reports per format.
 */
export function expectWithinLimits(report: ParsedReport, maxAttempts = DEFAULT_MAX_ATTEMPTS_PER_RESULT): void {
  const fail = (what: string, c: { module: string; name: string }) => {
    throw new Error(`${what} beyond its limit in case ${JSON.stringify(`${c.module}::${c.name}`.slice(0, 200))}`)
  }
  for (const c of report.cases) {
    if (c.attempts.length > maxAttempts) fail(`${c.attempts.length} attempts`, c)
    for (const part of [c.name, c.module, c.file ?? '']) if (part.length > MAX_NAME) fail('a name', c)
    for (const text of [c.message, c.stack, ...c.attempts.flatMap((a) => [a.message, a.stack])]) {
      if ((text ?? '').length > MAX_TEXT + CUT_MARKER_CHARS) fail('a text', c)
    }
    for (const ms of [c.durationMs, ...c.attempts.map((a) => a.durationMs)]) {
      if (ms !== null && !(ms >= 0 && ms <= MAX_DURATION_MS)) fail(`duration ${ms}`, c)
    }
    if (Object.keys(c.env ?? {}).length > MAX_FACETS) fail('env facets', c)
  }
}

/**
 * Work the parse did stays proportional to its input: the source is read at most a few times over, and the cases
 * and attempts handed on are no more than the input's characters (no amplification from a count in the report).
 */
export function expectBoundedWork(source: CountingSource, inputChars: number, report?: ParsedReport): void {
  // Detection reads the head once, the parser once more, a fallback (such as the whole text) once.
  expect(source.charsRead()).toBeLessThanOrEqual(3 * inputChars + 3 * 16 * 1024)
  if (!report) return
  const produced = report.cases.reduce((n, c) => n + 1 + c.attempts.length, 0)
  expect(produced).toBeLessThanOrEqual(inputChars + 1)
}

const ENTITY_TRICKS = [
  '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
  '<!DOCTYPE r SYSTEM "file:///etc/passwd">',
  '&a;',
  '&#0;',
  '&#x110000;',
  '&#xD800;',
  '&amp;amp;lt;',
  '&lt;![CDATA[',
  '<![CDATA[ ]]]]><![CDATA[> ]]>',
  '<?xml version="1.0"?>',
  '<!-- -- -->',
  ']]>',
]

const HUGE_NUMBERS = ['1e308', '-1', '9007199254740993', '99999999999999999999', 'NaN', '0x10', '1e-400', '-0']

/** Past the nesting limits (256), far enough to find an off-by-one, not so far that a bench input is mostly brackets. */
const MAX_NESTING = BENCH_OUT ? 600 : 3000
const MAX_REPEATS = BENCH_OUT ? 12 : 50
const MAX_REPEATED_BYTES = BENCH_OUT ? 1024 : 4096

/** One mutation of a real report, as a function of its bytes. Each is a way real files go wrong, or are made to. */
export type Mutation = (bytes: Buffer) => Buffer

/** Mutations as fast-check values, so that a failing one is printed and can be replayed from its seed. */
export function mutation(): fc.Arbitrary<{ label: string; apply: Mutation }> {
  const m = (label: string, apply: Mutation) => ({ label, apply })
  return fc.oneof(
    fc
      .double({ min: 0, max: 1, noNaN: true })
      .map((f) => m(`truncate at ${f.toFixed(4)}`, (b) => b.subarray(0, Math.floor(b.length * f)))),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 255 })).map(([f, byte]) =>
      m(`byte ${byte} at ${f.toFixed(4)}`, (b) => {
        const out = Buffer.from(b)
        if (out.length > 0) out[Math.min(out.length - 1, Math.floor(out.length * f))] = byte
        return out
      }),
    ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...HUGE_NUMBERS)).map(([f, n]) =>
      m(`number ${n} near ${f.toFixed(4)}`, (b) => {
        const text = b.toString('utf8')
        const digits = [...text.matchAll(/\d+(?:\.\d+)?/g)]
        if (digits.length === 0) return b
        const hit = digits[Math.min(digits.length - 1, Math.floor(digits.length * f))]!
        return Buffer.from(text.slice(0, hit.index) + n + text.slice(hit.index + hit[0].length))
      }),
    ),
    fc
      .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: MAX_NESTING }), fc.boolean())
      .map(([f, depth, json]) =>
        m(`nesting ${depth} (${json ? 'json' : 'xml'}) at ${f.toFixed(4)}`, (b) => {
          const cut = Math.floor(b.length * f)
          const nest = json ? '['.repeat(depth) + ']'.repeat(depth) : '<n>'.repeat(depth) + '</n>'.repeat(depth)
          return Buffer.concat([b.subarray(0, cut), Buffer.from(nest), b.subarray(cut)])
        }),
      ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...ENTITY_TRICKS)).map(([f, trick]) =>
      m(`insert ${JSON.stringify(trick)} at ${f.toFixed(4)}`, (b) => {
        const cut = Math.floor(b.length * f)
        return Buffer.concat([b.subarray(0, cut), Buffer.from(trick), b.subarray(cut)])
      }),
    ),
    fc.constant(m('UTF-8 BOM', (b) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]))),
    fc.constant(
      m('UTF-16LE with BOM', (b) =>
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(b.toString('utf8'), 'utf16le')]),
      ),
    ),
    fc.constant(m('CRLF', (b) => Buffer.from(b.toString('utf8').replace(/\r?\n/g, '\r\n')))),
    fc.constant(m('CR only', (b) => Buffer.from(b.toString('utf8').replace(/\r?\n/g, '\r')))),
    fc
      .tuple(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: MAX_REPEATS }),
      )
      .map(([f, g, times]) =>
        m(`repeat slice ${f.toFixed(4)}..${g.toFixed(4)} ×${times}`, (b) => {
          const [s, e] = [Math.floor(b.length * Math.min(f, g)), Math.floor(b.length * Math.max(f, g))]
          const slice = b.subarray(s, Math.min(e, s + MAX_REPEATED_BYTES))
          return Buffer.concat([b.subarray(0, e), ...Array.from({ length: times }, () => slice), b.subarray(e)])
        }),
      ),
    fc
      .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.string({ unit: 'binary', maxLength: 40 }))
      .map(([f, junk]) =>
        m(`insert ${JSON.stringify(junk)} at ${f.toFixed(4)}`, (b) => {
          const cut = Math.floor(b.length * f)
          return Buffer.concat([b.subarray(0, cut), Buffer.from(junk), b.subarray(cut)])
        }),
      ),
  )
}

/** Up to three mutations applied in turn: byte-level ones, and value swaps that keep JSON and XML well formed. */
export function mutations(): fc.Arbitrary<{ label: string; apply: Mutation }> {
  const one = fc.oneof({ arbitrary: mutation(), weight: 3 }, jsonValueSwap(), xmlAttributeSwap())
  return fc.array(one, { minLength: 1, maxLength: 3 }).map((list) => ({
    label: list.map((x) => x.label).join(' + '),
    apply: (b: Buffer) => list.reduce((acc, x) => x.apply(acc), b),
  }))
}

/**
 * The property most fuzzers here share: one of `originals`, mutated, handed to `check` with a label naming the
 * mutation (for the failure message) and the original's index.
 * @example await fc.assert(mutatedProperty(configs, (bytes) => load(bytes)), fuzzParams(300))
 */
export function mutatedProperty(
  originals: readonly Buffer[],
  check: (bytes: Buffer, label: string, index: number) => Promise<void> | void,
): fc.IAsyncProperty<[number, { label: string; apply: Mutation }]> {
  return fc.asyncProperty(fc.nat({ max: originals.length - 1 }), mutations(), async (i, mutation) => {
    await check(mutation.apply(originals[i]!), mutation.label, i)
  })
}

/** Values that real parsers have mistaken for what they expected: wrong types, edge numbers, odd strings. */
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  -1e308,
  2 ** 53 + 1,
  0.1,
  '',
  ' ',
  '0',
  '-1',
  'NaN',
  '1e308',
  'null',
  'true',
  '\u0000',
  '\uFFFD',
  '\u{1F600}',
  'a'.repeat(70_000),
  '../../etc/passwd',
  '<x>',
  '&amp;',
  '::',
  '/',
  '\\',
  [],
  {},
  [null],
  { '': null },
  { __proto__: { polluted: true } },
  { constructor: { prototype: { x: 1 } } },
  '2026-13-45T99:99:99Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '+275760-09-13T00:00:00.001Z',
]

function paths(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (out.length >= 2000) return out
  out.push(at)
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, i], out))
  else if (value && typeof value === 'object')
    for (const k of Object.keys(value)) paths((value as Record<string, unknown>)[k], [...at, k], out)
  return out
}

function replaced(value: unknown, path: (string | number)[], next: unknown): unknown {
  if (path.length === 0) return next
  const [head, ...rest] = path
  if (Array.isArray(value)) return (value as unknown[]).map((v, i) => (i === head ? replaced(v, rest, next) : v))
  const obj = value as Record<string, unknown>
  return { ...obj, [head!]: replaced(obj[head!], rest, next) }
}

/**
 * A structure-aware mutation of a JSON report (or of one line of a JSON-lines report): one value somewhere in it
 * replaced by a hostile value or an arbitrary JSON value, so that the document still parses as JSON and the
 * parser's own checks are what is tested. Non-JSON input is returned unchanged.
 */
export function jsonValueSwap(): fc.Arbitrary<{ label: string; apply: Mutation }> {
  const next = fc.oneof(fc.constantFrom(...HOSTILE_VALUES), fc.jsonValue({ maxDepth: 3 }))
  return fc
    .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), next)
    .map(([f, g, v]) => ({
      label: `JSON value ${JSON.stringify(v)?.slice(0, 60)} at ${f.toFixed(4)}/${g.toFixed(4)}`,
      apply: (b: Buffer) => {
        const text = b.toString('utf8')
        const swap = (doc: string): string | null => {
          let value: unknown
          try {
            value = JSON.parse(doc)
          } catch {
            return null
          }
          const all = paths(value)
          const path = all[Math.min(all.length - 1, Math.floor(all.length * g))]!
          return JSON.stringify(replaced(value, path, v))
        }
        const whole = swap(text)
        if (whole !== null) return Buffer.from(whole)
        const lines = text.split('\n')
        const i = Math.min(lines.length - 1, Math.floor(lines.length * f))
        const line = swap(lines[i]!)
        if (line === null) return b
        lines[i] = line
        return Buffer.from(lines.join('\n'))
      },
    }))
}

/** An XML attribute's value replaced by a hostile one (escaped, so that the XML stays well formed). */
export function xmlAttributeSwap(): fc.Arbitrary<{ label: string; apply: Mutation }> {
  const next = fc.oneof(
    fc.constantFrom(...HOSTILE_VALUES.filter((v) => typeof v !== 'object' || v === null)).map(String),
    fc.string({ maxLength: 30 }),
  )
  return fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), next).map(([f, v]) => ({
    label: `XML attribute ${JSON.stringify(v.slice(0, 60))} at ${f.toFixed(4)}`,
    apply: (b: Buffer) => {
      const text = b.toString('utf8')
      const attrs = [...text.matchAll(/=\s*"([^"<]*)"/g)]
      if (attrs.length === 0) return b
      const hit = attrs[Math.min(attrs.length - 1, Math.floor(attrs.length * f))]!
      const escaped = v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
      const start = hit.index + hit[0].indexOf('"') + 1
      return Buffer.from(text.slice(0, start) + escaped + text.slice(start + hit[1]!.length))
    },
  }))
}

/**
 * One input surface under fuzz: how its inputs are made, what must hold for each, and how an input is kept as a
 * regression case (test/fixtures/fuzz/regressions/<name>/) and read back.
 */
export interface Surface<T> {
  /** Names the surface in reports and the folder its kept inputs live in: `report-junit`, `config-file`, … */
  name: string
  /** Inputs per CI run (`FLAKEWATCH_FUZZ_RUNS` overrides). */
  runs: number
  arbitrary: () => fc.Arbitrary<T>
  check: (input: T) => Promise<void> | void
  /** The input as the bytes of a file (with its extension), and back: a failing input becomes a regression case. */
  save: (input: T) => { ext: string; bytes: Buffer }
  load: (bytes: Buffer, file: string) => T
  /** Opens what the checks need (a seeded server, a store); `teardown` closes it. */
  setup?: () => Promise<void>
  teardown?: () => Promise<void>
}

/** For a surface whose inputs are JSON values: kept as JSON files. */
export function jsonFiles<T>(): Pick<Surface<T>, 'save' | 'load'> {
  return {
    save: (input) => ({ ext: 'json', bytes: Buffer.from(`${JSON.stringify(input, null, 2)}\n`) }),
    load: (bytes) => JSON.parse(bytes.toString('utf8')) as T,
  }
}

let gcFn: (() => void) | undefined
/** V8's collector, exposed at run time: the memory property measures live heap, which needs a full collection. */
export function collectGarbage(): void {
  if (!gcFn) {
    setFlagsFromString('--expose-gc')
    gcFn = runInNewContext('gc') as () => void
  }
  gcFn()
}

/**
 * Live heap in bytes after a full collection. The event loop turns first: callbacks queued with `setImmediate`
 * (light-my-request's null socket queues one per write) hold their request until they run, and a loop of awaited
 * injects never lets them, which would look like a leak of ~10 KB per request that no real server has.
 */
export async function liveHeap(): Promise<number> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve))
  collectGarbage()
  return process.memoryUsage().heapUsed
}

/**
 * The heap a surface may keep after handling its inputs, over what it held before the first: what it handed on is
 * dropped after each input, so what is left is a leak (a cache or a list that grows with the inputs). Generous for
 * fast-check's and vitest's own bookkeeping, far below what keeping every input (10^3 × tens of KB) would take.
 */
export const MAX_RETAINED_HEAP = 24 * 1024 * 1024

/** How often (in inputs) the live heap is measured: a full collection costs milliseconds. */
const HEAP_EVERY = BENCH_OUT ? 2000 : 100

/**
 * Samples an input in `HEAP_EVERY` for the memory checks that need a full collection, and measures the heap a
 * surface keeps over its run.
 */
export class MemoryProbe {
  private n = 0
  private baseline = 0
  /** Largest heap kept over the baseline at a sample, in bytes. */
  maxRetained = 0
  /** Largest share of its bound the heap held by one sampled input's result took (reports only). */
  maxHeldShare = 0

  /**
   * The baseline is the live heap after the first sample's inputs, not before them: bounded caches (the server's
   * snapshots of a store that other surfaces grew, memoised answers) fill during those, and what is kept beyond
   * them is what grows with the inputs.
   */
  private baselineTaken = false

  async start(): Promise<void> {
    this.baseline = await liveHeap()
  }

  /** Whether this input is one sampled for a per-input measurement. */
  due(): boolean {
    return this.n % HEAP_EVERY === HEAP_EVERY - 1
  }

  /** Called after each input: on a sample, the live heap must be within {@link MAX_RETAINED_HEAP} of the start. */
  async after(surface: string): Promise<void> {
    if (this.n++ % HEAP_EVERY !== HEAP_EVERY - 1) return
    if (!this.baselineTaken) {
      this.baselineTaken = true
      this.baseline = await liveHeap()
      return
    }
    const retained = (await liveHeap()) - this.baseline
    if (process.env.FLAKEWATCH_FUZZ_DEBUG) console.log(`${surface} ${this.n} ${(retained / 2 ** 20).toFixed(1)} MB`)
    this.maxRetained = Math.max(this.maxRetained, retained)
    if (retained > MAX_RETAINED_HEAP) {
      throw new Error(
        `${surface}: ${(retained / 2 ** 20).toFixed(1)} MB of heap kept after ${this.n} inputs, over the bound of ${MAX_RETAINED_HEAP / 2 ** 20} MB: something keeps what each input made`,
      )
    }
  }
}

/** The probe of the surface running now: a surface's check samples per-input memory through it. */
export let probe = new MemoryProbe()

/** Folder of the inputs that once failed, by surface. */
export const REGRESSIONS = join(ROOT, 'test', 'fixtures', 'fuzz', 'regressions')

/** The first line of an error, digits blanked: failures with the same signature are one finding. */
function signature(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return (text.split('\n').find((l) => /\S/.test(l)) ?? '')
    .replace(/\[[^\]]*\]/g, '[…]')
    .replace(/\d+/g, '#')
    .slice(0, 200)
}

/**
 * Runs one surface: in CI, `runs` inputs through fast-check (a failure prints its seed and path, which replay it);
 * under bench/fuzz.mjs (`FLAKEWATCH_FUZZ_BENCH`), `FLAKEWATCH_FUZZ_RUNS` inputs in batches of fresh seeds, each
 * failure shrunk and saved as a regression case, and a summary line appended to the bench's file. Either way the
 * heap the surface keeps is measured as it goes.
 */
export async function runSurface<T>(surface: Surface<T>): Promise<void> {
  const only = process.env.FLAKEWATCH_FUZZ_SURFACES?.split(',').filter(Boolean)
  if (only && !only.includes(surface.name)) return
  await surface.setup?.()
  try {
    probe = new MemoryProbe()
    await probe.start()
    const property = fc.asyncProperty(surface.arbitrary(), async (input) => {
      await surface.check(input)
      await probe.after(surface.name)
    })
    if (!BENCH_OUT) {
      await fc.assert(property, fuzzParams(surface.runs))
      return
    }
    await benchSurface(surface, property)
  } finally {
    await surface.teardown?.()
  }
}

interface Finding {
  error: string
  seed: number
  path?: string
  file?: string
  repeats: number
}

async function benchSurface<T>(surface: Surface<T>, property: fc.IAsyncProperty<[T]>): Promise<void> {
  const total = fuzzRuns(surface.runs)
  const firstSeed = Number(process.env.FLAKEWATCH_FUZZ_SEED) || 1
  // The bench's time is shared out: this surface gets an equal part of what the surfaces before it left.
  const finalDeadline = Number(process.env.FLAKEWATCH_FUZZ_DEADLINE) || Date.now() + 3_600_000
  const count = Number(process.env.FLAKEWATCH_FUZZ_SURFACE_COUNT) || 1
  const done0 = readFileSync(BENCH_OUT!, 'utf8').split('\n').filter(Boolean).length
  const deadline = Date.now() + (finalDeadline - Date.now()) / Math.max(1, count - done0)
  const started = performance.now()
  const findings = new Map<string, Finding>()
  let done = 0
  let batch = 0
  let stopped: string | null = null
  while (done < total && findings.size < 3) {
    const left = deadline - Date.now()
    if (left <= 0) {
      stopped = 'deadline'
      break
    }
    const seed = firstSeed + batch++ * 7919
    const result = await fc.check(property, {
      numRuns: Math.min(total - done, 10_000),
      seed,
      // Shrinking keeps the smallest input that still fails; it stops at the deadline with the smallest so far.
      interruptAfterTimeLimit: left,
      markInterruptAsFailure: false,
    })
    done += result.numRuns
    if (result.failed && result.counterexample) {
      const sig = signature(result.errorInstance)
      const seen = findings.get(sig)
      if (seen) seen.repeats++
      else {
        const { ext, bytes } = surface.save(result.counterexample[0])
        const dir = join(REGRESSIONS, surface.name)
        mkdirSync(dir, { recursive: true })
        const file = `${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}.${ext}`
        writeFileSync(join(dir, file), bytes)
        findings.set(sig, {
          error: (result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance))
            .split('\n')
            .slice(0, 3)
            .join(' ')
            .slice(0, 400),
          seed,
          path: result.counterexamplePath ?? undefined,
          file: relative(ROOT, join(dir, file)),
          repeats: 1,
        })
      }
    }
    if (result.interrupted) {
      stopped = 'deadline'
      break
    }
  }
  appendFileSync(
    BENCH_OUT!,
    `${JSON.stringify({
      surface: surface.name,
      runs: done,
      target: total,
      seed: firstSeed,
      ms: Math.round(performance.now() - started),
      stopped,
      maxRetainedMB: +(probe.maxRetained / 2 ** 20).toFixed(1),
      maxHeldShare: +probe.maxHeldShare.toFixed(2),
      findings: [...findings.values()],
    })}\n`,
  )
}
