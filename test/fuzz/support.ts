import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import fc from 'fast-check'
import { expect } from 'vitest'
import { ReportLimitError, ReportParseError } from '../../src/errors.js'
import { detectFormat, sourceFromBuffer, type Format } from '../../src/ingest/index.js'
import type { ParsedReport, ReportSource } from '../../src/ingest/types.js'
import { DEFAULT_MAX_ATTEMPTS_PER_RESULT, MAX_DURATION_MS, MAX_FACETS, MAX_NAME, MAX_TEXT } from '../../src/limits.js'

/**
 * Inputs each property tries. Kept small so that the fuzz suite stays well under a minute on a loaded 2-core
 * machine; `FLAKEWATCH_FUZZ_RUNS=100000` (see docs/security.md) runs a deep search with the same properties.
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

/** Above this, a fixture is too slow to parse hundreds of times per run; the smaller ones cover every format. */
const MAX_SEED_BYTES = 130 * 1024

/** Every real report fixture small enough to fuzz, by detected format. */
export function realSeeds(): Map<Format, Seed[]> {
  const byFormat = new Map<Format, Seed[]>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      const info = statSync(path)
      if (info.isDirectory()) walk(path)
      else if (/\.(xml|json|ndjson|trx|tap)$/.test(entry) && info.size <= MAX_SEED_BYTES) {
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

/** Every count and size the parser handed on is within the documented limits (src/limits.ts). */
export function expectWithinLimits(report: ParsedReport, maxAttempts = DEFAULT_MAX_ATTEMPTS_PER_RESULT): void {
  for (const c of report.cases) {
    expect(c.attempts.length).toBeLessThanOrEqual(maxAttempts)
    for (const part of [c.name, c.module, c.file ?? '']) expect(part.length).toBeLessThanOrEqual(MAX_NAME)
    for (const text of [c.message, c.stack, ...c.attempts.flatMap((a) => [a.message, a.stack])]) {
      expect((text ?? '').length).toBeLessThanOrEqual(MAX_TEXT + CUT_MARKER_CHARS)
    }
    for (const ms of [c.durationMs, ...c.attempts.map((a) => a.durationMs)]) {
      if (ms !== null) expect(ms >= 0 && ms <= MAX_DURATION_MS).toBe(true)
    }
    expect(Object.keys(c.env ?? {}).length).toBeLessThanOrEqual(MAX_FACETS)
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
      .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 3000 }), fc.boolean())
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
        fc.integer({ min: 2, max: 50 }),
      )
      .map(([f, g, times]) =>
        m(`repeat slice ${f.toFixed(4)}..${g.toFixed(4)} ×${times}`, (b) => {
          const [s, e] = [Math.floor(b.length * Math.min(f, g)), Math.floor(b.length * Math.max(f, g))]
          const slice = b.subarray(s, Math.min(e, s + 4096))
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
