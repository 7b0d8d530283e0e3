import { ReportParseError } from '../errors.js'
import { MAX_NAME, MAX_TEXT } from '../limits.js'

// Reports routinely carry megabytes of logs per test; flakewatch needs the start of a failure, not the whole log.
export { MAX_NAME, MAX_TEXT }

const marker = (dropped: number) => `\n… [truncated ${dropped} characters]`

/**
 * Accumulates text up to a cap and remembers how much it dropped, for streaming parsers that receive text in
 * pieces. The result is always a fresh flat string, so it never pins the parser's input chunks in memory.
 * @example const t = new BoundedText(); t.push('a'); t.value() // 'a'
 */
export class BoundedText {
  private parts: string[] = []
  private size = 0
  private dropped = 0

  constructor(private readonly max = MAX_TEXT) {}

  push(text: string): void {
    const room = this.max - this.size
    if (room <= 0) {
      this.dropped += text.length
    } else if (text.length > room) {
      this.parts.push(text.slice(0, room))
      this.size = this.max
      this.dropped += text.length - room
    } else {
      this.parts.push(text)
      this.size += text.length
    }
  }

  get length(): number {
    return this.size + this.dropped
  }

  value(): string {
    const text = this.parts.length === 1 ? ownString(this.parts[0]!) : this.parts.join('')
    return this.dropped > 0 ? text + marker(this.dropped) : text
  }
}

/**
 * A copy of `text` that shares no memory with the string it was cut from. V8 keeps substrings of 13+ characters
 * as views into their parent, so a test name sliced from a 64 KB input chunk would keep the whole chunk alive and
 * a 100 MB report would stay in memory. Copying the few strings a parser keeps keeps memory flat.
 * @example ownString(chunk.slice(10, 60))
 */
export function ownString(text: string): string {
  return text.length < 13 ? text : structuredClone(text)
}

/**
 * Caps a string at `max` characters, marking what was cut.
 * @example truncateText('abcdef', 3) // 'abc\n… [truncated 3 characters]'
 */
export function truncateText(text: string, max = MAX_TEXT): string {
  return text.length > max ? text.slice(0, max) + marker(text.length - max) : text
}

/**
 * A part of a test's identity (name, module, file) trimmed and refused past {@link MAX_NAME} characters, with the
 * report's line when known. Copied, so that it never pins the input chunk it was cut from.
 * @example const name = checkedName('go.json', 12, 'test name', event.Test)
 */
export function checkedName(
  file: string,
  line: number | undefined,
  what: string,
  value: string | null | undefined,
): string {
  const text = (value ?? '').trim()
  if (text.length > MAX_NAME) {
    throw new ReportParseError(file, line, `${what} is ${text.length} characters long (limit ${MAX_NAME})`)
  }
  return ownString(text)
}

/**
 * What a {@link BoundedText} gathered, with Windows line ends (which .NET writers keep as `&#xD;`) made `\n` and
 * the ends trimmed; null when empty or never opened.
 * @example textOf(message) // 'Expected: 3'
 */
export function textOf(text: BoundedText | null): string | null {
  if (!text) return null
  return text.value().replace(/\r\n?/g, '\n').trim() || null
}
