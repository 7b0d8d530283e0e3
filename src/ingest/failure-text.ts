import { truncateText } from './bounded-text.js'

/** A stack frame line in JS (`    at fn (file:1:2)`), .NET (`   at X.Y() in f.cs:line 3`) and Java traces. */
const FRAME = /^\s+at\s/m

/** Longest message taken from the head of a failure text; the rest stays in the stack. */
const MAX_MESSAGE = 4096

/**
 * Splits a failure text without a separate message into a message (the text before the first stack frame,
 * e.g. `Error: expect(received).toBe(expected)` plus the expected/received lines) and the full text as stack.
 * @example splitFailure('Error: boom\n    at f (a.js:1:1)').message // 'Error: boom'
 */
export function splitFailure(text: string | null | undefined): { message: string | null; stack: string | null } {
  if (!text) return { message: null, stack: null }
  const trimmed = dedent(text.replace(/\r\n?/g, '\n')).trim()
  if (trimmed === '') return { message: null, stack: null }
  const frame = FRAME.exec(trimmed)
  const head = (frame ? trimmed.slice(0, frame.index) : trimmed).trim()
  const message = head === '' ? firstLine(trimmed) : head
  return { message: truncateText(message, MAX_MESSAGE), stack: truncateText(trimmed) }
}

/** Removes the indentation every line shares (Playwright indents whole failure bodies by four spaces). */
function dedent(text: string): string {
  let indent = Infinity
  for (const m of text.matchAll(/^( *)\S/gm)) indent = Math.min(indent, m[1]!.length)
  return indent > 0 && indent < Infinity ? text.replace(new RegExp(`^ {1,${indent}}`, 'gm'), '') : text
}

function firstLine(text: string): string {
  const nl = text.indexOf('\n')
  return (nl < 0 ? text : text.slice(0, nl)).trim()
}
