/**
 * The keys of a JSON value that break the one casing flakewatch puts on the wire (snake_case, as the bundle's),
 * each as a path. Keys that are data, not names, are left alone: test ids and other keys that are not identifiers
 * (`unit::cart::adds`), and the keys of the user's own maps (`env`, `facets`).
 * @example offCasing({ test_id: 'a', issueUrl: null }) // ['.issueUrl']
 */
export function offCasing(value: unknown, path = ''): string[] {
  const out: string[] = []
  const walk = (v: unknown, p: string) => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${p}[${i}]`))
    if (v === null || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v)) {
      if (IDENTIFIER.test(k) && !SNAKE.test(k)) out.push(`${p}.${k}`)
      if (!USER_MAPS.has(k)) walk(x, `${p}.${k}`)
    }
  }
  walk(value, path)
  return out
}

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/
const SNAKE = /^[a-z0-9_]+$/
const USER_MAPS = new Set(['env', 'facets'])

/** The JSON values of a command's stdout: one document, or one per line. */
export function parseJsonOutput(text: string): unknown[] {
  const trimmed = text.trim()
  if (!trimmed) return []
  try {
    return [JSON.parse(trimmed)]
  } catch {
    return trimmed.split('\n').map((line) => JSON.parse(line) as unknown)
  }
}
