import type { LeaderboardResponse, LeaderboardRow, SortKey } from '../server/api-types.js'
import { get, testPath } from './api.js'
import { classChip, evidenceTag, quarantineBadge, statusChip, verdictChip } from './chips.js'
import { h } from './dom.js'
import { filtersBar } from './filters.js'
import { fixed, pct } from './format.js'
import { loader, onParams, type Page } from './page.js'
import { filterQuery, param, readFilters, selectionParams, setParams } from './state.js'
import './leaderboard.css'

const PAGE_SIZE = 50

interface Column {
  label: string
  sort?: SortKey
  num?: boolean
  cell: (r: LeaderboardRow) => Node | string
}

function scoreCell(r: LeaderboardRow): Node {
  const bar = h('span', { class: 'bar' })
  bar.style.width = `${Math.round(r.score * 100)}%`
  const title = `score ${fixed(r.score)} at confidence ${fixed(r.confidence)}`
  return h('div', { class: 'score', title }, h('span', { class: 'score-track' }, bar), fixed(r.score))
}

const COLUMNS: Column[] = [
  {
    label: 'Test',
    sort: 'name',
    cell: (r) =>
      h(
        'div',
        { class: 'test-cell' },
        h('a', { href: `${testPath(r.test_id)}${filterQuery()}`, class: 'test-name' }, r.name),
        r.quarantined ? quarantineBadge() : null,
        h(
          'div',
          { class: 'test-sub' },
          `${r.module} · ${r.suite}${r.owners?.length ? ` · ${r.owners.join(' ')}` : ''}`,
        ),
      ),
  },
  {
    label: 'Runs',
    sort: 'runs',
    num: true,
    cell: (r) => h('span', { title: `${r.passes} passed of ${r.runs}` }, `${r.passes}/${r.runs}`),
  },
  { label: 'Pass rate', sort: 'pass_rate', num: true, cell: (r) => pct(r.pass_rate) },
  { label: 'Last', sort: 'last', cell: (r) => statusChip(r.last_status) },
  { label: 'Pass-rate class', sort: 'class', cell: (r) => classChip(r.pass_rate_class) },
  { label: 'Verdict', sort: 'verdict', cell: (r) => h('span', { title: r.reason }, verdictChip(r.verdict)) },
  { label: 'Score', sort: 'score', num: true, cell: scoreCell },
  { label: 'Evidence', cell: (r) => h('div', { class: 'evidence' }, ...r.evidence.slice(0, 4).map(evidenceTag)) },
]

function sortState(): { sort: SortKey; order: 'asc' | 'desc' } {
  const sort = (param('sort') ?? 'flaky') as SortKey
  const order = param('order') === 'asc' ? 'asc' : param('order') === 'desc' ? 'desc' : sort === 'name' ? 'asc' : 'desc'
  return { sort, order }
}

const sortBy = (sort: SortKey, order: 'asc' | 'desc') => setParams({ sort, order, page: undefined })

/**
 * The header row: each sortable column's name is a button (so Tab and Enter or Space sort, as a click does); a
 * second press reverses the order. The sorted column says so with aria-sort, the others with `none`.
 */
function header(): HTMLElement {
  const { sort, order } = sortState()
  return h(
    'tr',
    null,
    ...COLUMNS.map((c) => {
      if (!c.sort) return h('th', null, c.label)
      const key = c.sort
      const active = key === sort
      const next = active ? (order === 'desc' ? 'asc' : 'desc') : key === 'name' ? 'asc' : 'desc'
      const ariaSort = active ? (order === 'asc' ? 'ascending' : 'descending') : 'none'
      return h(
        'th',
        { class: c.num ? 'num' : undefined, 'aria-sort': ariaSort },
        h(
          'button',
          { class: `sort${active ? ' active' : ''}`, type: 'button', on: { click: () => sortBy(key, next) } },
          c.label,
          h('span', { class: 'arrow', 'aria-hidden': 'true' }, active ? (order === 'asc' ? '▲' : '▼') : ''),
        ),
      )
    }),
  )
}

/** What each sort means, for the phone's sort control: the column and the natural direction of reading it. */
const SORT_LABEL: Record<SortKey, string> = {
  flaky: 'Most flaky',
  name: 'Test name',
  runs: 'Runs',
  pass_rate: 'Pass rate',
  last: 'Last result',
  class: 'Pass-rate class',
  verdict: 'Verdict',
  score: 'Score',
  flip_rate: 'Flip rate',
}

/**
 * On a phone the header row is hidden (each test is a card): this select and order button sort instead. Hidden
 * on wider screens, where the column headers do it.
 */
function sortControl(): HTMLElement {
  const { sort, order } = sortState()
  const select = h(
    'select',
    {
      name: 'sort',
      id: 'fw-sort',
      on: {
        // A new column starts in its natural order, as a click on its header does.
        change: () => sortBy(select.value as SortKey, select.value === 'name' ? 'asc' : 'desc'),
      },
    },
    ...(Object.keys(SORT_LABEL) as SortKey[]).map((k) => {
      const o = h('option', { value: k }, SORT_LABEL[k])
      o.selected = k === sort
      return o
    }),
  )
  const flip = order === 'asc' ? 'desc' : 'asc'
  return h(
    'div',
    { class: 'sort-control' },
    h('label', { for: 'fw-sort' }, 'Sort by'),
    select,
    h(
      'button',
      {
        type: 'button',
        class: 'sort-order',
        'aria-label': order === 'asc' ? 'ascending; reverse the order' : 'descending; reverse the order',
        on: { click: () => sortBy(sort, flip) },
      },
      order === 'asc' ? '▲ ascending' : '▼ descending',
    ),
  )
}

function cards(d: LeaderboardResponse): HTMLElement {
  const card = (label: string, value: number, cls = '') =>
    h('div', { class: `card ${cls}` }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value))
  return h(
    'div',
    { class: 'cards' },
    card('Tests', d.summary.tests),
    card('Flaky', d.summary.flaky, 'flaky'),
    card('Broken', d.summary.broken, 'broken'),
    card('Quarantined', d.summary.quarantined, 'quarantined'),
    card('Runs analysed', d.runs),
  )
}

function table(d: LeaderboardResponse): Node[] {
  if (d.rows.length === 0) return [cards(d), h('div', { class: 'panel empty' }, 'No tests match these filters.')]
  const page = Math.floor(d.offset / d.limit)
  const pages = Math.max(1, Math.ceil(d.total / d.limit))
  const go = (p: number) => setParams({ page: p ? p + 1 : undefined })
  return [
    cards(d),
    h(
      'div',
      { class: 'panel table-wrap' },
      sortControl(),
      h(
        'table',
        { class: 'data leaderboard stack' },
        h('thead', null, header()),
        h(
          'tbody',
          null,
          ...d.rows.map((r) =>
            h(
              'tr',
              { dataset: { testId: r.test_id } },
              ...COLUMNS.map((c) =>
                h('td', { class: c.num ? 'num' : undefined, dataset: { label: c.label } }, c.cell(r)),
              ),
            ),
          ),
        ),
      ),
      h(
        'div',
        { class: 'pager' },
        h('span', { class: 'muted' }, `${d.offset + 1}–${d.offset + d.rows.length} of ${d.total}`),
        h('button', { type: 'button', disabled: page === 0, on: { click: () => go(page - 1) } }, '← Previous'),
        h('span', { class: 'muted' }, `page ${page + 1} of ${pages}`),
        h('button', { type: 'button', disabled: page + 1 >= pages, on: { click: () => go(page + 1) } }, 'Next →'),
      ),
    ),
  ]
}

/** The leaderboard: GitLabViz's columns plus flakewatch's verdict, score and evidence; most flaky first. */
export const leaderboardPage: Page = (root) => {
  const body = h('div', { class: 'leaderboard-body' })
  root.append(filtersBar(), body)
  const load = loader<LeaderboardResponse>(body, table)
  const refresh = () => {
    const page = Math.max(1, Number(param('page')) || 1)
    const paging = { offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }
    const params = { ...selectionParams(readFilters()), owner: param('owner'), ...sortState(), ...paging }
    void load(() => get<LeaderboardResponse>('/leaderboard', params))
  }
  refresh()
  return onParams(refresh)
}
