import { ReportLimitError, ReportParseError } from '../errors.js'
import { MAX_JSON_DEPTH, MAX_LINE_CHARS } from '../limits.js'
import { depthExceeds } from './read-json.js'
import type { ReportSource } from './types.js'

/** One line of a line-based report, without its line end, and its 1-based number. */
export interface SourceLine {
  text: string
  number: number
}

/**
 * The lines of a report as they stream in, a batch per input chunk, so that a parser can hand on what one chunk
 * produced before the next is read. A line longer than `max` characters is refused with its number, before it is
 * all held: the carry between chunks is the only thing that grows with a line.
 * @example for await (const batch of sourceLines(source)) for (const l of batch) handle(l.text, l.number)
 */
export async function* sourceLines(
  source: ReportSource,
  max = MAX_LINE_CHARS,
): AsyncGenerator<SourceLine[], void, undefined> {
  let carry = ''
  let number = 1
  const tooLong = () => new ReportLimitError(source.name, `line ${number} (characters)`, max, undefined)
  for await (const chunk of source.chunks()) {
    const batch: SourceLine[] = []
    let start = 0
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      if (carry.length + nl - start > max) throw tooLong()
      const text = carry + chunk.slice(start, nl)
      carry = ''
      batch.push({ text: text.endsWith('\r') ? text.slice(0, -1) : text, number: number++ })
      start = nl + 1
    }
    carry += chunk.slice(start)
    if (carry.length > max) throw tooLong()
    if (batch.length > 0) yield batch
  }
  if (carry !== '') yield [{ text: carry.endsWith('\r') ? carry.slice(0, -1) : carry, number }]
}

/**
 * One line of newline-delimited JSON (`go test -json`, Bazel's `--build_event_json_file`) parsed, its nesting
 * checked against {@link MAX_JSON_DEPTH}; a fault is a {@link ReportParseError} at that line.
 * @example const event = parseJsonLine('events.json', 3, '{"id":{}}')
 */
export function parseJsonLine(file: string, line: number, text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new ReportParseError(file, line, `invalid JSON: ${detail}`, { cause: error })
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw new ReportParseError(file, line, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  return value
}
