/**
 * The casing of every JSON that flakewatch prints or serves: snake_case keys, as the flake-history bundle and CTRF
 * use. TypeScript types stay camelCase; each surface converts in one place (the CLI in `cli/output.ts`, the HTTP API
 * in `server/to-json.ts`), through these functions.
 */

/** Keys whose values are the user's own maps (environment facets): their keys are data, kept as written. */
const VERBATIM = new Set(['env', 'facets'])

/** A camelCase identifier. Anything else (test ids, snake_case, `Content-Type`) is left as it is. */
const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/

const seen = new Map<string, string>()

/**
 * The wire name of one key: camelCase becomes snake_case, every other key stays.
 * @example wireKey('expiresAt') // 'expires_at'; wireKey('pValue') // 'p_value'
 */
export function wireKey(key: string): string {
  if (!CAMEL.test(key)) return key
  let out = seen.get(key)
  if (out === undefined) {
    out = key.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`)
    // Few distinct keys reach the wire; the cap only guards against a caller that passes data as keys.
    if (seen.size < 10_000) seen.set(key, out)
  }
  return out
}

/**
 * A copy of `value` with every object key in its wire casing (`wireKey`), at any depth, but the keys inside the
 * user's own maps (`env`, `facets`). Objects with a `toJSON` (dates) are converted as `JSON.stringify` would see them.
 * Values already in wire casing come back unchanged, so converting twice is harmless.
 * @example toWireJson({ testId: 'a', env: { nodeVersion: '22' } }) // { test_id: 'a', env: { nodeVersion: '22' } }
 */
export function toWireJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  const withJson = value as { toJSON?: () => unknown }
  if (typeof withJson.toJSON === 'function') return toWireJson(withJson.toJSON())
  if (Array.isArray(value)) {
    let out: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i]
      const w = toWireJson(v)
      if (w !== v && out === null) out = value.slice(0, i)
      if (out !== null) out.push(w)
    }
    return out ?? value
  }
  let changed = false
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key]
    const k = wireKey(key)
    const w = VERBATIM.has(key) ? v : toWireJson(v)
    if (k !== key || w !== v) changed = true
    out[k] = w
  }
  return changed ? out : value
}

/**
 * `JSON.stringify` of `value` in wire casing.
 * @example wireText({ dryRun: true }) // '{"dry_run":true}'
 */
export function wireText(value: unknown, indent?: number): string {
  return JSON.stringify(toWireJson(value), null, indent)
}
