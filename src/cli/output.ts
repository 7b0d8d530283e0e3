import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { colorEnabled } from './color.js'
import { toWireJson, wireText } from '../wire-json.js'

/** Where a command writes: data to stdout, human messages to stderr. Injected so that tests capture both. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  env: NodeJS.ProcessEnv
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, env: process.env })

/** Progress bars and colour only for a person at a terminal: never in CI logs or pipes. */
export function isInteractive(io: Io): boolean {
  return Boolean(io.stderr.isTTY) && !io.env.CI && io.env.TERM !== 'dumb'
}

/**
 * Whether a command's data on stdout is coloured (see `colorEnabled`: FORCE_COLOR, NO_COLOR, TERM=dumb, a
 * terminal). Output written to a file with `--output` never is.
 */
export function useColor(io: Io, output?: string): boolean {
  return output === undefined && colorEnabled({ stream: io.stdout, env: io.env })
}

// Terminal control characters in test names must not reach the terminal (an attacker-chosen name could rewrite it).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Writes a command's data to `--output <file>` when given, else to stdout. `paint` colours the text once control
 * characters are gone from it, so that only flakewatch's own colour codes reach the terminal.
 */
export function emit(io: Io, text: string, output?: string, paint?: (clean: string) => string): void {
  const stripped = text.replace(CONTROL, '')
  const clean = paint ? paint(stripped) : stripped
  const body = clean.endsWith('\n') ? clean : `${clean}\n`
  if (output) writeFileSync(output, body)
  else io.stdout.write(body)
}

/**
 * Every JSON the CLI prints goes through here, `jsonLine` or `jsonArrayLines`: keys in snake_case (`wire-json.ts`),
 * whatever the casing of the data handed in.
 */
export function emitJson(io: Io, data: unknown, output?: string): void {
  emit(io, wireText(data, 2), output)
}

/** One JSON value on one line, in wire casing, for output read line by line. */
export function jsonLine(data: unknown): string {
  return wireText(data)
}

/** One JSON value, indented, in wire casing: `emitJson` for a stream of the caller's. */
export function jsonText(data: unknown): string {
  return wireText(data, 2)
}

export function sanitizeCell(text: string): string {
  return text.replace(CONTROL, '').replace(/\n/g, ' ')
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
}

export interface TableOptions {
  /** Columns that align right (numbers). */
  right?: number[]
  /** The widest a column may grow before it is cut with an ellipsis. */
  maxWidth?: number
  /**
   * Colours a cell (its clean text, before padding), e.g. the verdict column; the lines then carry colour codes,
   * so write them with `emitLines(…, { coloured: true })`.
   */
  paint?: (column: number, cell: string) => string
}

/**
 * A plain-text table with a header rule, sized to its content.
 * @example renderTable(['test', 'runs'], [['a', '3']], { right: [1] })
 */
export function renderTable(headers: string[], rows: string[][], opts: TableOptions = {}): string {
  return [...tableLines(headers, rows, (r) => r, opts)].join('\n')
}

/**
 * The lines of `renderTable` for items whose cells are made on demand, twice (once to size the columns, once to
 * write them), so that a table of a million rows is written without holding its cells.
 * @example for (const line of tableLines(['test'], analyses, (a) => [a.testId])) out.write(`${line}\n`)
 */
export function* tableLines<T>(
  headers: string[],
  items: readonly T[],
  cellsOf: (item: T) => string[],
  opts: TableOptions = {},
): Generator<string> {
  const max = opts.maxWidth ?? 60
  const cells = (item: T) => cellsOf(item).map((c) => truncate(sanitizeCell(c), max))
  // The header counts too: a column of short cells is still as wide as its name.
  const widths = headers.map((h) => h.length)
  for (const item of items) {
    const r = cells(item)
    for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i]!, (r[i] ?? '').length)
  }
  const right = new Set(opts.right ?? [])
  const line = (r: string[], paint?: (column: number, cell: string) => string) =>
    r
      .map((c, i) => {
        const pad = ' '.repeat(Math.max(0, widths[i]! - c.length))
        const shown = paint ? paint(i, c) : c
        return right.has(i) ? pad + shown : shown + pad
      })
      .join('  ')
      .trimEnd()
  yield line(headers)
  yield widths.map((w) => '─'.repeat(w)).join('  ')
  for (const item of items) yield line(cells(item), opts.paint)
}

/** A Markdown table, with pipes in cells escaped. */
export function renderMarkdownTable(headers: string[], rows: string[][]): string {
  return [...markdownLines(headers, rows, (r) => r)].join('\n')
}

/** The lines of `renderMarkdownTable` for items whose cells are made one row at a time. */
export function* markdownLines<T>(headers: string[], items: Iterable<T>, cellsOf: (item: T) => string[]) {
  const esc = (c: string) => sanitizeCell(c).replace(/\|/g, '\\|')
  yield `| ${headers.map(esc).join(' | ')} |`
  yield `| ${headers.map(() => '---').join(' | ')} |`
  for (const item of items) yield `| ${cellsOf(item).map(esc).join(' | ')} |`
}

/**
 * The lines of `JSON.stringify(items.map(toJson), null, 2)`, byte for byte, made one item at a time: a million
 * tests' JSON is larger than the longest string V8 can hold.
 */
export function* jsonArrayLines<T>(items: readonly T[], toJson: (item: T) => unknown): Generator<string> {
  if (items.length === 0) {
    yield '[]'
    return
  }
  yield '['
  for (let i = 0; i < items.length; i++) {
    const text = JSON.stringify(toWireJson(toJson(items[i]!)), null, 2).replace(/\n/g, '\n  ')
    yield `  ${text}${i < items.length - 1 ? ',' : ''}`
  }
  yield ']'
}

/**
 * One item of the array that `jsonArrayLines` writes, as written there (indented one level, control characters
 * gone), without its separator: for output made an item at a time and written later (`jsonArrayPieces`). The value
 * must already be in wire casing: nothing is converted.
 * @example jsonArrayItem({ test_id: 'a' }) // '  {\n    "test_id": "a"\n  }'
 */
export function jsonArrayItem(value: unknown): string {
  // An array of one, stripped of its brackets: the item indented as an element is, in one native call.
  return JSON.stringify([value], null, 2).slice(2, -2).replace(CONTROL, '')
}

/**
 * The pieces of a JSON array of items made by `jsonArrayItem` (as text or UTF-8), for `writePieces`: the bytes
 * `jsonArrayLines` and `emitLines` write for those items.
 */
export function* jsonArrayPieces<T extends string | Uint8Array>(
  count: number,
  itemAt: (index: number) => T,
): Generator<T | string> {
  if (count === 0) {
    yield '[]\n'
    return
  }
  yield '[\n'
  for (let i = 0; i < count; i++) {
    yield itemAt(i)
    yield i < count - 1 ? ',\n' : '\n'
  }
  yield ']\n'
}

/** Bytes gathered before one write: few system calls, little memory. */
const WRITE_CHUNK = 1 << 20

/**
 * `emit` for output too large for one string: writes the lines (each followed by a newline, control characters
 * stripped) to `--output <file>` or stdout in chunks. Lines that `tableLines` coloured (`coloured`) are already
 * clean, and keep their colour codes.
 */
export function emitLines(
  io: Io,
  lines: Iterable<string>,
  output?: string,
  opts: { coloured?: boolean } = {},
): Promise<void> {
  function* withEnds() {
    for (const line of lines) yield opts.coloured ? `${line}\n` : `${line.replace(CONTROL, '')}\n`
  }
  return writePieces(io, withEnds(), output)
}

/**
 * `writePieces` for pieces that are mostly UTF-8 bytes already: copied into chunks of bytes, so that no string is
 * made of them. Each piece is written whole before the next call of the iterator (a piece may be a reused view).
 */
export async function writeBytes(io: Io, pieces: Iterable<Uint8Array | string>, output?: string): Promise<void> {
  const fd = output ? openSync(output, 'w') : null
  try {
    let chunk = Buffer.allocUnsafeSlow(WRITE_CHUNK)
    let used = 0
    const flush = async () => {
      if (used === 0) return
      if (fd !== null) writeSync(fd, chunk, 0, used)
      else {
        // The stream may still hold the chunk: the next one is new.
        const full = chunk.subarray(0, used)
        chunk = Buffer.allocUnsafeSlow(WRITE_CHUNK)
        if (!io.stdout.write(full)) await new Promise((resolve) => io.stdout.once('drain', resolve))
      }
      used = 0
    }
    for (const piece of pieces) {
      // A short string (a separator) is written into the chunk where it surely fits: no buffer made for it.
      if (typeof piece === 'string' && used + piece.length * 3 <= chunk.length) {
        used += chunk.write(piece, used, 'utf8')
        continue
      }
      const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece
      if (used + bytes.length > chunk.length) await flush()
      if (bytes.length > chunk.length) {
        if (fd !== null) writeSync(fd, bytes)
        else if (!io.stdout.write(Buffer.from(bytes))) await new Promise((resolve) => io.stdout.once('drain', resolve))
        continue
      }
      chunk.set(bytes, used)
      used += bytes.length
    }
    await flush()
  } finally {
    if (fd !== null) closeSync(fd)
  }
}

/**
 * Writes the pieces as they are to `output` (a file) or stdout, gathered into chunks and waiting for stdout to
 * drain, so that memory does not follow the output's size.
 */
export async function writePieces(io: Io, pieces: Iterable<string>, output?: string): Promise<void> {
  const fd = output ? openSync(output, 'w') : null
  try {
    let chunk = ''
    const flush = async () => {
      if (fd !== null) writeSync(fd, chunk)
      else if (!io.stdout.write(chunk)) await new Promise((resolve) => io.stdout.once('drain', resolve))
      chunk = ''
    }
    for (const piece of pieces) {
      chunk += piece
      if (chunk.length >= WRITE_CHUNK) await flush()
    }
    if (chunk.length > 0) await flush()
  } finally {
    if (fd !== null) closeSync(fd)
  }
}

export const pct = (x: number | null | undefined): string => (x == null ? '–' : `${(x * 100).toFixed(1)}%`)
export const num = (x: number | null | undefined, digits = 2): string => (x == null ? '–' : x.toFixed(digits))
