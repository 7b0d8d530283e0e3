/**
 * PostgreSQL COPY text format: tab-separated columns, one row per line, `\N` for null, and backslash escapes for
 * the four characters that would otherwise end a field or a row.
 * @example copyRow([1, 'a\tb', null, true]) // '1\ta\\tb\t\\N\tt\n'
 */
export function copyRow(values: readonly (string | number | boolean | null)[]): string {
  let line = ''
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += '\t'
    line += copyField(values[i] ?? null)
  }
  return `${line}\n`
}

/** One field; a NUL (which PostgreSQL text cannot hold) becomes U+FFFD rather than failing the whole report. */
export function copyField(value: string | number | boolean | null): string {
  if (value === null) return '\\N'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'boolean') return value ? 't' : 'f'
  return /[\\\t\n\r\0]/.test(value) ? value.replace(/[\\\t\n\r\0]/g, escapeChar) : value
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\uFFFD' }

function escapeChar(c: string): string {
  return ESCAPES[c] ?? c
}

/** Joins rows into chunks of about `size` characters, so that a COPY stream gets few, large writes. */
export function* copyChunks(rows: Iterable<string>, size = 64 * 1024): Generator<string> {
  let chunk = ''
  for (const row of rows) {
    chunk += row
    if (chunk.length >= size) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk) yield chunk
}
