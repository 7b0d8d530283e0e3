// Order matters: whole timestamps before bare times, URLs and paths before `:line`, so that a port or a
// `file.ts:12:5` suffix is taken by the most specific rule first.
const RULES: [RegExp, string][] = [
  [/\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?/gi, '<ts>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<ts>'],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<ts>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()[\]{}]+/gi, '<url>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // Absolute, relative and Windows paths, with an optional :line:col suffix.
  [/(?:\b[a-z]:\\|\.{1,2}\/|(?<![\w.])\/)[\w.\-@+~/\\]*[\w-](?::\d+){0,2}/gi, '<path>'],
  [/\b(localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d{2,5}\b/gi, '$1:<port>'],
  [/:\d+\b/g, ':<line>'],
  // Assertion values: `expected 5 to equal 6`, `Expected: "a"`, `expected:<1> but was:<2>`, `Received: [1, 2]`.
  [
    /\b(expected|actual|received|but was|to (?:be|equal|deeply equal|strictly equal|contain|include|match))(:?)\s*("[^"]*"|'[^']*'|`[^`]*`|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|[^\s,;]+)/gi,
    '$1$2 <value>',
  ],
  [/\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|milliseconds)\b/gi, '<duration>'],
  [/\s+/g, ' '],
]

const MAX_CACHE = 20_000
const cache = new Map<string, string>()

/**
 * A failure message with its run-specific parts replaced, so that the same failure mode has one signature:
 * timestamps, UUIDs, URLs, hex addresses, paths (with `:line:col`), ports, line numbers, expected/actual values
 * and durations. Whitespace is folded and the result lower-cased. Memoised by the raw message, because failure
 * messages repeat heavily.
 * @example normalizeMessage('Timeout at /src/a.ts:12:5 after 5000ms') // 'timeout at <path> after <duration>'
 */
export function normalizeMessage(message: string): string {
  const hit = cache.get(message)
  if (hit !== undefined) return hit
  let out = message
  for (const [re, to] of RULES) out = out.replace(re, to)
  out = out.trim().toLowerCase()
  if (cache.size >= MAX_CACHE) cache.clear()
  cache.set(message, out)
  return out
}
