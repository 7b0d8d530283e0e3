import { SaxesParser, type SaxesTagPlain } from 'saxes'
import { ReportParseError } from '../errors.js'
import type { ReportSource } from './types.js'

import { MAX_XML_DEPTH } from '../limits.js'

export { MAX_XML_DEPTH }

/** What a streaming XML consumer sees. Attributes are plain strings; namespaces are not resolved. */
export interface XmlHandlers {
  open(tag: SaxesTagPlain, depth: number): void
  close(name: string, depth: number): void
  /** Character data and CDATA, delivered only while {@link XmlContext.captureText} is on. */
  text(text: string): void
}

export interface XmlContext {
  readonly file: string
  /** The 1-based line the parser is at. */
  line(): number
  /** Throws a {@link ReportParseError} at the current line. */
  fail(detail: string): never
  /** Turns text delivery on or off; off means the parser does not even accumulate text. */
  captureText(on: boolean): void
}

/**
 * Errors that real report writers commit and that do not change the document's structure: raw control
 * characters (ANSI escapes in captured output), `&#x1B;`-style references to them, a stray `]]>` in text and
 * duplicated attributes. Reporting them would reject whole CI runs over one log line, so they are skipped.
 */
const TOLERATED = [
  'disallowed character.',
  'malformed character entity.',
  'the string "]]>" is disallowed in char data.',
  'duplicate attribute',
]

const DOCTYPE = '<!DOCTYPE'

/**
 * Streams a report through saxes, chunk by chunk, so memory does not grow with the file.
 * Security and robustness rules, shared by every XML format:
 * - any `<!DOCTYPE` is rejected: nothing resolves DTDs or external entities (no XXE, no billion laughs);
 * - element nesting is capped at {@link MAX_XML_DEPTH};
 * - every error is a {@link ReportParseError} with the file and line.
 * A leading BOM and whitespace before the XML declaration are skipped.
 * @example await streamXml(source, (ctx) => ({ open() {}, close() {}, text() {} }))
 */
export async function streamXml(source: ReportSource, build: (ctx: XmlContext) => XmlHandlers): Promise<void> {
  for await (const _ of xmlSteps(source, build)) continue
}

/**
 * {@link streamXml} as a generator that yields after each input chunk has gone through the handlers, so that a
 * streaming parser can hand on what that chunk produced before the next one is read.
 * @example for await (const _ of xmlSteps(source, build)) yield* drain()
 */
export async function* xmlSteps(
  source: ReportSource,
  build: (ctx: XmlContext) => XmlHandlers,
): AsyncGenerator<void, void, undefined> {
  const file = source.name
  const parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true })
  const ctx: XmlContext = {
    file,
    line: () => parser.line,
    fail(detail: string): never {
      throw new ReportParseError(file, parser.line, detail)
    },
    captureText(on: boolean) {
      if (on) {
        parser.on('text', onText)
        parser.on('cdata', onText)
      } else {
        parser.off('text')
        parser.off('cdata')
      }
    },
  }
  const handlers = build(ctx)
  const onText = (text: string) => handlers.text(text)
  let depth = 0

  parser.on('error', (err) => {
    const detail = err.message.replace(/^\d+:\d+: /, '')
    if (TOLERATED.some((t) => detail.startsWith(t))) return
    throw new ReportParseError(file, parser.line, `malformed XML: ${detail}`)
  })
  parser.on('doctype', () => {
    throw new ReportParseError(file, parser.line, DOCTYPE_REFUSED)
  })
  parser.on('opentag', (tag) => {
    if (++depth > MAX_XML_DEPTH) ctx.fail(`elements nested deeper than ${MAX_XML_DEPTH} levels`)
    handlers.open(tag, depth)
  })
  parser.on('closetag', (tag) => {
    handlers.close(tag.name, depth)
    depth--
  })

  let started = false
  // The prolog (before the root element) is scanned for a DOCTYPE as it streams in, so that one is refused at
  // its first line instead of after saxes has buffered all of it. Saxes' doctype event is the backstop.
  let inProlog = true
  let carry = ''
  let linesBeforeCarry = 0
  try {
    for await (let chunk of source.chunks()) {
      if (!started) {
        chunk = chunk.replace(/^\uFEFF?\s+/, '').replace(/^\uFEFF/, '')
        if (chunk === '') continue
        started = true
      }
      if (inProlog) {
        const scan = carry + chunk
        const rootAt = scan.search(/<[A-Za-z_:]/)
        const prolog = rootAt >= 0 ? scan.slice(0, rootAt) : scan
        const at = prolog.indexOf(DOCTYPE)
        if (at >= 0) throw new ReportParseError(file, linesBeforeCarry + countLines(scan, at) + 1, DOCTYPE_REFUSED)
        if (rootAt >= 0) inProlog = false
        const total = linesBeforeCarry + countLines(scan, scan.length)
        carry = scan.slice(-(DOCTYPE.length - 1))
        linesBeforeCarry = total - countLines(carry, carry.length)
      }
      parser.write(chunk)
      yield
    }
    if (!started) throw new ReportParseError(file, undefined, 'empty file')
    parser.close()
  } catch (error) {
    if (error instanceof ReportParseError) throw error
    if (error instanceof RangeError) {
      throw new ReportParseError(file, parser.line, `report too complex: ${error.message}`)
    }
    throw error
  }
}

/** Why a DOCTYPE is refused, shared with the pre-parse check in `parseReport`. */
export const DOCTYPE_REFUSED =
  'DOCTYPE declarations are not allowed in test reports (DTDs and entities are never resolved)'

/**
 * The line of a DOCTYPE in the prolog of an XML document's head, or null. Lets an XML file whose root is not a
 * known report element still be refused for its DOCTYPE rather than reported as an unknown format.
 * @example doctypeLine('<?xml version="1.0"?>\n<!DOCTYPE x [') // 2
 */
export function doctypeLine(head: string): number | null {
  const rootAt = head.search(/<[A-Za-z_:]/)
  const at = (rootAt >= 0 ? head.slice(0, rootAt) : head).indexOf(DOCTYPE)
  return at < 0 ? null : countLines(head, at) + 1
}

function countLines(text: string, end: number): number {
  let n = 0
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++
  return n
}
