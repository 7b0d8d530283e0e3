import { toWireJson } from '../wire-json.js'

/** The longest answer (JSON text) one MCP tool or resource returns: an agent's context is not a log file. */
export const MCP_MAX_ANSWER_CHARS = 48_000

/** Longest text of one free-text field (a failure message, a reason) in an answer. */
export const MCP_MAX_TEXT_CHARS = 1_000

/** Text cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string | null | undefined, max = MCP_MAX_TEXT_CHARS): string | null {
  if (text == null) return null
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/**
 * The JSON text of an answer, at most `max` characters: while it is longer, the longest array in it loses its
 * second half (the lists are ordered most useful first), and the answer says `truncated: true` with what was
 * left out. Never cuts a string or breaks the JSON.
 * @example boundedJson({ tests: manyTests }, 48_000)
 */
export function boundedJson(raw: Record<string, unknown>, max = MCP_MAX_ANSWER_CHARS): string {
  // The one casing of everything flakewatch prints or serves (wire-json.ts).
  const answer = toWireJson(raw) as Record<string, unknown>
  let text = JSON.stringify(answer)
  if (text.length <= max) return text
  const value = structuredClone(answer)
  let omitted = 0
  for (let round = 0; text.length > max && round < 200; round++) {
    const longest = longestArray(value)
    if (!longest || longest.length === 0) break
    const keep = Math.floor(longest.length / 2)
    omitted += longest.length - keep
    longest.length = keep
    text = JSON.stringify({ ...value, truncated: true, omitted_items: omitted })
  }
  if (text.length > max) {
    // Nothing left to halve: say so rather than answer past the bound.
    return JSON.stringify({ truncated: true, error: `the answer is larger than ${max} characters` })
  }
  return text
}

function longestArray(value: unknown): unknown[] | null {
  let best: unknown[] | null = null
  let bestSize = 0
  const visit = (v: unknown) => {
    if (Array.isArray(v)) {
      const size = JSON.stringify(v).length
      if (size > bestSize && v.length > 0) {
        best = v
        bestSize = size
      }
      for (const x of v) visit(x)
    } else if (v !== null && typeof v === 'object') {
      for (const x of Object.values(v)) visit(x)
    }
  }
  visit(value)
  return best
}
