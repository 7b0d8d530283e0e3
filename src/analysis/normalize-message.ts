// Order matters: whole timestamps before bare times, URLs and paths before `:line`, so that a port or a
// `file.ts:12:5` suffix is taken by the most specific rule first. Each rule has a cheap pre-check, because
// regular expressions dominate the cost when messages are unique (timestamps, ports).
const RULES: { test: (s: string) => boolean; re: RegExp; to: string }[] = [
  {
    test: hasDigit,
    re: /\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?/gi,
    to: '<ts>',
  },
  { test: hasDigit, re: /\b\d{4}-\d{2}-\d{2}\b/g, to: '<ts>' },
  { test: hasDigit, re: /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, to: '<ts>' },
  {
    test: (s) => s.includes('-'),
    re: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    to: '<uuid>',
  },
  { test: (s) => s.includes('://'), re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()[\]{}]+/gi, to: '<url>' },
  { test: hasDigit, re: /\b0x[0-9a-f]+\b/gi, to: '<hex>' },
  // Absolute, relative and Windows paths, with an optional :line:col suffix.
  {
    test: (s) => s.includes('/') || s.includes('\\'),
    re: /(?:\b[a-z]:\\|\.{1,2}\/|(?<![\w.])\/)[\w.\-@+~/\\]*[\w-](?::\d+){0,2}/gi,
    to: '<path>',
  },
  { test: hasDigit, re: /\b\d{1,3}(?:\.\d{1,3}){3}\b/g, to: '<ip>' },
  {
    test: (s) => s.includes(':'),
    re: /(<ip>|\b(?:localhost|\[[0-9a-f:]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)+)):\d{2,5}\b/gi,
    to: '$1:<port>',
  },
  { test: (s) => s.includes(':'), re: /:\d+\b/g, to: ':<line>' },
  // Assertion values: `expected 5 to equal 6`, `Expected: "a"`, `expected:<1> but was:<2>`, `Received: [1, 2]`.
  {
    test: (s) => /expect|actual|receiv|but was| to /i.test(s),
    re: /\b(expected|actual|received|but was|to (?:be|equal|deeply equal|strictly equal|contain|include|match))(:?)\s*("[^"]*"|'[^']*'|`[^`]*`|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|[^\s,;]+)/gi,
    to: '$1$2 <value>',
  },
  { test: hasDigit, re: /\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|milliseconds)\b/gi, to: '<duration>' },
  // Hashes and ids: runs of hex digits with both a digit and a letter (commit shas, object ids, content hashes).
  { test: hasDigit, re: /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, to: '<hash>' },
  // Any number left, also inside identifiers (`worker-3`, `user_42`, `run7`): counts, ids, indices, sizes.
  { test: hasDigit, re: /\d+(?:\.\d+)?/g, to: '<n>' },
  { test: () => true, re: /\s+/g, to: ' ' },
]

const DIGIT = /\d/

function hasDigit(s: string): boolean {
  return DIGIT.test(s)
}

// Messages may carry whole diffs or stack traces; their head names the failure mode.
const MAX_CHARS = 1000
const MAX_CACHE = 100_000
const cache = new Map<string, string>()

/**
 * A failure message with its run-specific parts replaced, so that the same failure mode has one signature:
 * timestamps, UUIDs, URLs, hex addresses, paths (with `:line:col`), ports, line numbers, expected/actual values,
 * durations, hashes and every other number, so that modes differing only by them group together. Whitespace is folded and the result lower-cased. Only the first 1,000 characters count.
 * Memoised by the raw message, because failure messages repeat heavily.
 * @example normalizeMessage('Timeout at /src/a.ts:12:5 after 5000ms') // 'timeout at <path> after <duration>'
 */
export function normalizeMessage(message: string): string {
  const hit = cache.get(message)
  if (hit !== undefined) return hit
  let out = message.length > MAX_CHARS ? message.slice(0, MAX_CHARS) : message
  for (const rule of RULES) if (rule.test(out)) out = out.replace(rule.re, rule.to)
  out = out.trim().toLowerCase()
  if (cache.size >= MAX_CACHE) cache.clear()
  cache.set(message, out)
  return out
}
