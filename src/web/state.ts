import type { Params } from './api.js'

/** The dashboard's filters, kept in the page URL so that a view can be shared by its link. */
export interface Filters {
  suite?: string
  branch?: string
  /** `key=value` facets. */
  env: string[]
  last: number
  /** A name search, or a revision range `abc123...def456`. */
  q?: string
}

export const DEFAULT_LAST = 200
export const MAX_LAST = 500

/** Same rule as the server's `rev` parameter. */
const REV_RANGE = /^[^.\s]+\.{2,3}[^.\s]+$/

export function isRevRange(q: string | undefined): boolean {
  return q !== undefined && REV_RANGE.test(q.trim())
}

export function readFilters(search = location.search): Filters {
  const p = new URLSearchParams(search)
  const last = Number(p.get('last'))
  return {
    suite: p.get('suite') || undefined,
    branch: p.get('branch') || undefined,
    env: p.getAll('env').filter(Boolean),
    last: Number.isInteger(last) && last >= 1 && last <= MAX_LAST ? last : DEFAULT_LAST,
    q: p.get('q') || undefined,
  }
}

/** The API's selection parameters for these filters. */
export function selectionParams(f: Filters): Params {
  const q = f.q?.trim()
  return {
    suite: f.suite,
    branch: f.branch,
    env: f.env,
    last: f.last,
    rev: q && isRevRange(q) ? q : undefined,
    search: q && !isRevRange(q) ? q : undefined,
  }
}

/** Updates URL parameters in place (no new history entry) and tells the page. */
export function setParams(changes: Record<string, string | string[] | number | undefined>): void {
  const p = new URLSearchParams(location.search)
  for (const [k, v] of Object.entries(changes)) {
    p.delete(k)
    if (v === undefined || v === '') continue
    if (Array.isArray(v)) for (const item of v) p.append(k, item)
    else p.set(k, String(v))
  }
  const s = p.toString()
  history.replaceState(null, '', `${location.pathname}${s ? `?${s}` : ''}`)
  window.dispatchEvent(new Event('fw:params'))
}

export function param(name: string): string | null {
  return new URLSearchParams(location.search).get(name)
}

/** The filter part of the current URL, and its project, to carry across pages. */
export function filterQuery(): string {
  const p = new URLSearchParams(location.search)
  const keep = new URLSearchParams()
  for (const k of ['project', 'suite', 'branch', 'env', 'last', 'q']) for (const v of p.getAll(k)) keep.append(k, v)
  const s = keep.toString()
  return s ? `?${s}` : ''
}
