import type { FacetsResponse } from '../server/api-types.js'
import { get } from './api.js'
import { h } from './dom.js'
import { isRevRange, MAX_LAST, readFilters, setParams } from './state.js'
import './filters.css'

let facets: Promise<FacetsResponse> | null = null

/** The facet lists change rarely; one request per page load is enough. */
export function loadFacets(): Promise<FacetsResponse> {
  facets ??= get<FacetsResponse>('/facets').catch((e: unknown) => {
    facets = null
    throw e
  })
  return facets
}

function select(
  label: string,
  name: string,
  values: string[],
  current: string | undefined,
  onChange: (v: string | undefined) => void,
) {
  const el = h(
    'select',
    { name, 'aria-label': label, on: { change: () => onChange(el.value || undefined) } },
    h('option', { value: '' }, `${label}: any`),
    ...values.map((v) => h('option', { value: v }, v)),
  )
  el.value = current && values.includes(current) ? current : ''
  return el
}

/**
 * Suite, branch and env facets, the last-N-runs slider, and one search box that takes a test name or a
 * revision range (`abc123...def456`). Every change lands in the URL; the page re-reads it.
 */
export function filtersBar(): HTMLElement {
  const f = readFilters()
  const resetPage = { page: undefined }
  const facetBox = h('div', { class: 'facets' })
  const lastLabel = h('span', { class: 'last-label' }, `last ${f.last} runs`)
  const slider = h('input', {
    type: 'range',
    name: 'last',
    min: 10,
    max: MAX_LAST,
    step: 10,
    value: String(f.last),
    'aria-label': 'number of newest runs',
    on: {
      input: () => (lastLabel.textContent = `last ${slider.value} runs`),
      change: () => setParams({ last: Number(slider.value), ...resetPage }),
    },
  })
  const hint = h('span', { class: 'search-hint' })
  const showHint = (q: string) => (hint.textContent = isRevRange(q) ? 'revision range' : '')
  let timer: number | undefined
  const search = h('input', {
    type: 'search',
    name: 'q',
    value: f.q ?? '',
    placeholder: 'Search tests, or abc123...def456',
    'aria-label': 'search tests by name or a revision range',
    autocomplete: 'off',
    on: {
      input: () => {
        showHint(search.value)
        clearTimeout(timer)
        timer = window.setTimeout(() => setParams({ q: search.value.trim() || undefined, ...resetPage }), 350)
      },
      keydown: (e) => {
        if (e.key !== 'Enter') return
        clearTimeout(timer)
        setParams({ q: search.value.trim() || undefined, ...resetPage })
      },
    },
  })
  showHint(search.value)

  loadFacets()
    .then((x) => {
      const envSelects = Object.entries(x.env).map(([key, values]) => {
        const current = f.env.find((e) => e.startsWith(`${key}=`))?.slice(key.length + 1)
        return select(key, `env-${key}`, values, current, (v) => {
          const others = readFilters().env.filter((e) => !e.startsWith(`${key}=`))
          setParams({ env: v ? [...others, `${key}=${v}`] : others, ...resetPage })
        })
      })
      facetBox.replaceChildren(
        select('Suite', 'suite', x.suites, f.suite, (v) => setParams({ suite: v, ...resetPage })),
        select('Branch', 'branch', x.branches, f.branch, (v) => setParams({ branch: v, ...resetPage })),
        ...envSelects,
        ...(x.owners?.length
          ? [
              select('Owner', 'owner', x.owners, new URLSearchParams(location.search).get('owner') ?? undefined, (v) =>
                setParams({ owner: v, ...resetPage }),
              ),
            ]
          : []),
      )
    })
    .catch(() => facetBox.replaceChildren(h('span', { class: 'muted' }, 'filters unavailable')))

  return h(
    'div',
    { class: 'filters', role: 'search' },
    facetBox,
    h('label', { class: 'last' }, lastLabel, slider),
    h('div', { class: 'search' }, search, hint),
  )
}
