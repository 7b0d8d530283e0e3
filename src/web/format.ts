/** Number and time formatting shared by the pages. */

export const pct = (x: number | null | undefined): string =>
  x == null ? '–' : `${(x * 100).toFixed(x === 1 || x === 0 ? 0 : 1)}%`

export const fixed = (x: number | null | undefined, digits = 2): string => (x == null ? '–' : x.toFixed(digits))

export function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : '–'
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '–'
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}

/** "3 min ago", "2 h ago", "5 d ago". */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never'
  const s = Math.max(0, (now - Date.parse(iso)) / 1000)
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86_400)} d ago`
}

export function duration(ms: number | null | undefined): string {
  if (ms == null) return '–'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

export function shortRev(rev: string | null | undefined): string {
  return rev ? rev.slice(0, 10) : '–'
}

export function envText(env: Record<string, string>): string {
  const keys = Object.keys(env).sort()
  return keys.length ? keys.map((k) => `${k}=${env[k]}`).join(', ') : 'default'
}
