import { writeFileSync } from 'node:fs'
import { maxOf } from '../extent.js'

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

export function useColor(io: Io): boolean {
  if (io.env.NO_COLOR) return false
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true
  return Boolean(io.stdout.isTTY)
}

// Terminal control characters in test names must not reach the terminal (an attacker-chosen name could rewrite it).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** Writes a command's data to `--output <file>` when given, else to stdout. */
export function emit(io: Io, text: string, output?: string): void {
  const clean = text.replace(CONTROL, '')
  const body = clean.endsWith('\n') ? clean : `${clean}\n`
  if (output) writeFileSync(output, body)
  else io.stdout.write(body)
}

export function emitJson(io: Io, data: unknown, output?: string): void {
  emit(io, JSON.stringify(data, null, 2), output)
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
}

/**
 * A plain-text table with a header rule, sized to its content.
 * @example renderTable(['test', 'runs'], [['a', '3']], { right: [1] })
 */
export function renderTable(headers: string[], rows: string[][], opts: TableOptions = {}): string {
  const max = opts.maxWidth ?? 60
  const cells = rows.map((r) => r.map((c) => truncate(sanitizeCell(c), max)))
  // The header counts too: a column of short cells is still as wide as its name.
  const widths = headers.map((h, i) =>
    Math.max(
      h.length,
      maxOf(
        cells.map((r) => (r[i] ?? '').length),
        0,
      ),
    ),
  )
  const right = new Set(opts.right ?? [])
  const line = (r: string[]) =>
    r
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(headers), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(line)].join('\n')
}

/** A Markdown table, with pipes in cells escaped. */
export function renderMarkdownTable(headers: string[], rows: string[][]): string {
  const esc = (c: string) => sanitizeCell(c).replace(/\|/g, '\\|')
  return [
    `| ${headers.map(esc).join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n')
}

export const pct = (x: number | null | undefined): string => (x == null ? '–' : `${(x * 100).toFixed(1)}%`)
export const num = (x: number | null | undefined, digits = 2): string => (x == null ? '–' : x.toFixed(digits))
