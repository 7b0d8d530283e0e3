import type {
  ImpactCostJson,
  ImpactOwnerJson,
  ImpactResponse,
  ImpactSuiteJson,
  ImpactWeekJson,
} from '../server/api-types.js'
import { get, testPath } from './api.js'
import { h, svg } from './dom.js'
import { filtersBar } from './filters.js'
import { duration } from './format.js'
import { loader, onParams, type Page } from './page.js'
import { filterQuery, readFilters, selectionParams } from './state.js'
import './impact.css'

const W = 600
const H = 240
const PAD = { left: 64, right: 8, top: 22, bottom: 28 }

interface Series {
  key: 'time' | 'flaky' | 'broken'
  label: string
  value: (w: ImpactWeekJson) => number
  text: (v: number) => string
}

/** Bars per week, one per series side by side; each bar is labelled when there are few weeks. */
function weekChart(weeks: ImpactWeekJson[], series: Series[], label: string): SVGSVGElement {
  let max = 0
  for (const w of weeks) for (const s of series) max = Math.max(max, s.value(w))
  const top = max > 0 ? max : 1
  const inner = H - PAD.top - PAD.bottom
  const slot = (W - PAD.left - PAD.right) / Math.max(1, weeks.length)
  const bar = Math.min(48, (slot * 0.7) / series.length)
  const y = (v: number) => PAD.top + (1 - v / top) * inner
  const parts: SVGElement[] = [
    svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: 'axis' }),
    svg('text', { x: PAD.left - 8, y: y(top) + 4, class: 'ylabel' }, series[0]!.text(top)),
    svg('text', { x: PAD.left - 8, y: y(0) + 4, class: 'ylabel' }, '0'),
  ]
  const every = Math.max(1, Math.ceil(weeks.length / 8))
  weeks.forEach((w, i) => {
    const mid = PAD.left + slot * (i + 0.5)
    series.forEach((s, j) => {
      const v = s.value(w)
      const x = mid - (bar * series.length) / 2 + j * bar
      const rect = svg(
        'rect',
        { x, y: y(v), width: Math.max(1, bar - 2), height: Math.max(0, y(0) - y(v)), class: `bar ${s.key}` },
        svg('title', {}, `week of ${w.week}: ${s.text(v)} ${s.label}`),
      )
      parts.push(rect)
      if (weeks.length <= 8 && v > 0) {
        parts.push(svg('text', { x: x + bar / 2 - 1, y: y(v) - 5, class: `value ${s.key}` }, s.text(v)))
      }
    })
    // Labels counted from the newest week, so that it is always labelled.
    if ((weeks.length - 1 - i) % every === 0) {
      parts.push(svg('text', { x: mid, y: H - 8, class: 'xlabel' }, w.week.slice(5)))
    }
  })
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'impact-chart', role: 'img', 'aria-label': label }, ...parts)
}

const TIME: Series = { key: 'time', label: 'CI time lost', value: (w) => w.time_lost_ms, text: duration }
const count = (n: number) => String(Math.round(n))
const FLAKY: Series = { key: 'flaky', label: 'flaky tests', value: (w) => w.flaky_tests, text: count }
const BROKEN: Series = { key: 'broken', label: 'broken tests', value: (w) => w.broken_tests, text: count }

/** A table whose rows become labelled cards on a phone (see impact.css). */
function table<T>(
  cls: string,
  columns: { label: string; num?: boolean; cell: (row: T) => Node | string }[],
  rows: T[],
) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: `data compact stack ${cls}` },
      h('thead', null, h('tr', null, ...columns.map((c) => h('th', { class: c.num ? 'num' : undefined }, c.label)))),
      h(
        'tbody',
        null,
        ...rows.map((r) =>
          h(
            'tr',
            null,
            ...columns.map((c) =>
              h('td', { class: c.num ? 'num' : undefined, dataset: { label: c.label } }, c.cell(r)),
            ),
          ),
        ),
      ),
    ),
  )
}

const COST_COLUMNS = [
  { label: 'CI time lost', num: true, cell: (r: ImpactCostJson) => duration(r.time_lost_ms) },
  { label: 'Failures', num: true, cell: (r: ImpactCostJson) => String(r.failures) },
  { label: 'Failed attempts', num: true, cell: (r: ImpactCostJson) => String(r.failed_attempts) },
]

const GROUP_COUNTS = [
  { label: 'Flaky', num: true, cell: (r: ImpactOwnerJson | ImpactSuiteJson) => String(r.flaky) },
  { label: 'Broken', num: true, cell: (r: ImpactOwnerJson | ImpactSuiteJson) => String(r.broken) },
  { label: 'Tests', num: true, cell: (r: ImpactOwnerJson | ImpactSuiteJson) => String(r.tests) },
]

function section(title: string, note: string | null, ...body: Node[]): HTMLElement {
  return h(
    'section',
    { class: 'panel pad impact-section' },
    h('h2', null, title),
    note ? h('p', { class: 'muted' }, note) : null,
    ...body,
  )
}

const more = (shown: number, total: number, what: string) =>
  total > shown ? `The ${shown} costliest of ${total} ${what}.` : null

function render(d: ImpactResponse): Node[] {
  if (d.weeks.length === 0) return [h('div', { class: 'panel empty' }, 'No runs in this selection.')]
  const card = (label: string, value: string, cls = '') =>
    h('div', { class: `card ${cls}` }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value))
  const recent = [...d.weeks].reverse()
  return [
    h(
      'div',
      { class: 'cards' },
      card('CI time lost', duration(d.totals.time_lost_ms), 'time'),
      card('Failures caused', String(d.totals.failures), 'broken'),
      card('Flaky tests', String(d.totals.flaky), 'flaky'),
      card('Broken tests', String(d.totals.broken), 'broken'),
      card('Runs analysed', String(d.totals.runs)),
    ),
    section(
      'What flaky tests cost, week by week',
      null,
      h(
        'div',
        { class: 'impact-charts' },
        h(
          'figure',
          null,
          h('figcaption', { class: 'impact-legend' }, h('span', { class: 'key time' }, 'CI time lost to flaky tests')),
          weekChart(d.weeks, [TIME], 'CI time lost to flaky tests per week'),
        ),
        h(
          'figure',
          null,
          h(
            'figcaption',
            { class: 'impact-legend' },
            h('span', { class: 'key flaky' }, 'flaky tests'),
            h('span', { class: 'key broken' }, 'broken tests'),
          ),
          weekChart(d.weeks, [FLAKY, BROKEN], 'flaky and broken tests per week'),
        ),
      ),
      h(
        'dl',
        { class: 'definitions' },
        h('dt', null, 'Time lost'),
        h('dd', null, d.definition.time_lost),
        h('dt', null, 'Failures'),
        h('dd', null, d.definition.failures),
        h('dt', null, 'Flaky'),
        h('dd', null, d.definition.flaky_tests),
        h('dt', null, 'Broken'),
        h('dd', null, d.definition.broken_tests),
      ),
    ),
    section(
      'Per week',
      null,
      table(
        'impact-weeks',
        [
          { label: 'Week of', cell: (w: ImpactWeekJson) => w.week },
          ...COST_COLUMNS,
          { label: 'Flaky tests', num: true, cell: (w: ImpactWeekJson) => String(w.flaky_tests) },
          { label: 'Broken tests', num: true, cell: (w: ImpactWeekJson) => String(w.broken_tests) },
          { label: 'Runs', num: true, cell: (w: ImpactWeekJson) => String(w.runs) },
        ],
        recent,
      ),
    ),
    section(
      'Most costly tests',
      d.costly_tests === 0
        ? 'No flaky test cost CI time in this selection.'
        : more(d.tests.length, d.costly_tests, 'flaky tests'),
      table(
        'impact-tests',
        [
          {
            label: 'Test',
            cell: (t) =>
              h(
                'div',
                { class: 'test-cell' },
                h('a', { href: `${testPath(t.test_id)}${filterQuery()}`, class: 'test-name' }, t.name),
                h('div', { class: 'test-sub' }, `${t.suite}${t.owners.length ? ` · ${t.owners.join(' ')}` : ''}`),
              ),
          },
          ...COST_COLUMNS,
          { label: 'Runs', num: true, cell: (t) => String(t.runs) },
        ],
        d.tests,
      ),
    ),
    section(
      'By owner',
      more(d.owners.length, d.owners_total, 'owners') ?? 'From CODEOWNERS; a test with several owners counts for each.',
      table(
        'impact-owners',
        [{ label: 'Owner', cell: (g: ImpactOwnerJson) => g.owner ?? 'no owner' }, ...COST_COLUMNS, ...GROUP_COUNTS],
        d.owners,
      ),
    ),
    section(
      'By suite',
      more(d.suites.length, d.suites_total, 'suites'),
      table(
        'impact-suites',
        [{ label: 'Suite', cell: (g: ImpactSuiteJson) => g.suite }, ...COST_COLUMNS, ...GROUP_COUNTS],
        d.suites,
      ),
    ),
  ]
}

/** What flaky tests cost CI: time lost and failures per week, by owner, by suite and per test, for managers. */
export const impactPage: Page = (root) => {
  const body = h('div', { class: 'grid impact' })
  root.append(filtersBar(), body)
  const load = loader(body, render)
  const refresh = () =>
    void load(() => get<ImpactResponse>('/impact', { ...selectionParams(readFilters()), search: undefined }))
  refresh()
  return onParams(refresh)
}
