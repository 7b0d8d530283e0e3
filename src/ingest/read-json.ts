import type { z } from 'zod'
import { ReportLimitError, ReportParseError } from '../errors.js'
import { MAX_JSON_DEPTH, MAX_JSON_REPORT_BYTES } from '../limits.js'
import type { ReportSource } from './types.js'

export { MAX_JSON_DEPTH }

/** Issues listed in one error message; the rest are counted. */
const MAX_ISSUES = 3

/**
 * Reads a JSON report whole and checks it against a zod schema of the subset the parser uses. Invalid or
 * truncated JSON gives a {@link ReportParseError} with the line of the fault; a wrong shape names the paths.
 * @example const report = await readJson(source, jestSchema, 'Jest JSON')
 */
export async function readJson<T>(source: ReportSource, schema: z.ZodType<T>, what: string): Promise<T> {
  const text = (await readBounded(source)).replace(/^\uFEFF/, '')
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    // A fault at the very end (truncation) belongs to the last line with content.
    const offset = Math.min(jsonErrorOffset(text), text.trimEnd().length)
    throw new ReportParseError(source.name, lineAt(text, offset), `invalid JSON: ${detail}`, { cause: error })
  }
  if (depthExceeds(data, MAX_JSON_DEPTH)) {
    throw new ReportParseError(source.name, undefined, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  const parsed = schema.safeParse(data)
  if (!parsed.success) {
    const issues = parsed.error.issues
    const listed = issues.slice(0, MAX_ISSUES).map((i) => `${formatPath(i.path)}: ${i.message}`)
    const more = issues.length > MAX_ISSUES ? ` (and ${issues.length - MAX_ISSUES} more)` : ''
    throw new ReportParseError(source.name, undefined, `not a valid ${what} report: ${listed.join('; ')}${more}`)
  }
  return parsed.data
}

/** The whole text, refused once it passes {@link MAX_JSON_REPORT_BYTES} (JSON is parsed whole, not streamed). */
async function readBounded(source: ReportSource): Promise<string> {
  const parts: string[] = []
  let size = 0
  for await (const chunk of source.chunks()) {
    size += chunk.length
    if (size > MAX_JSON_REPORT_BYTES) {
      throw new ReportLimitError(source.name, 'JSON report size (characters)', MAX_JSON_REPORT_BYTES, undefined)
    }
    parts.push(chunk)
  }
  return parts.join('')
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`
  return out || '(root)'
}

function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++
  return line
}

/** Whether `root` nests objects or arrays deeper than `max` levels; iterative, so any depth is safe to check. */
export function depthExceeds(root: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (value === null || typeof value !== 'object') continue
    if (depth > max) return true
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// JSON strings may not hold raw control characters; the scanner must reject them where JSON.parse did.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y

/**
 * The offset of the first syntax error in `text`. V8's JSON.parse messages only sometimes carry a position, so
 * this small scanner (run only after JSON.parse failed) finds it; iterative, so deep nesting cannot overflow.
 * @example jsonErrorOffset('{"a": }') // 6
 */
export function jsonErrorOffset(text: string): number {
  let i = 0
  const open: ('{' | '[')[] = []
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++
  }
  const match = (re: RegExp) => {
    re.lastIndex = i
    if (!re.test(text)) return false
    i = re.lastIndex
    return true
  }
  const key = () => {
    ws()
    if (text[i] !== '"' || !match(STRING)) return false
    ws()
    if (text[i] !== ':') return false
    i++
    return true
  }
  const primitive = () => {
    const c = text[i]
    if (c === '"') return match(STRING)
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return match(NUMBER)
    const lit = ['true', 'false', 'null'].find((l) => text.startsWith(l, i))
    if (lit) i += lit.length
    return lit !== undefined
  }
  let expectValue = true
  for (;;) {
    ws()
    if (expectValue) {
      const c = text[i]
      if (c === '{' || c === '[') {
        const close = c === '{' ? '}' : ']'
        i++
        ws()
        if (text[i] === close) {
          i++
          expectValue = false
        } else {
          open.push(c)
          if (c === '{' && !key()) return i
        }
      } else if (primitive()) {
        expectValue = false
      } else {
        return i
      }
      continue
    }
    const top = open.at(-1)
    if (top === undefined) return i
    const c = text[i]
    if (c === ',') {
      i++
      if (top === '{' && !key()) return i
      expectValue = true
    } else if (c === (top === '{' ? '}' : ']')) {
      open.pop()
      i++
    } else {
      return i
    }
  }
}
