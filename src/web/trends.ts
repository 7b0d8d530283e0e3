import type { TrendDay, TrendsResponse } from '../server/api-types.js'
import { get } from './api.js'
import { h, svg } from './dom.js'
import { filtersBar } from './filters.js'
import { loader, onParams, type Page } from './page.js'
import { readFilters, selectionParams } from './state.js'
import './trends.css'

const W = 1000
const H = 260
const PAD = { left: 44, right: 16, top: 16, bottom: 30 }

function chart(days: TrendDay[]): SVGSVGElement {
  let max = 1
  for (const d of days) max = Math.max(max, d.flaky, d.broken)
  const ticks = max <= 5 ? max : 5
  const step = Math.ceil(max / ticks)
  const top = step * ticks
  const width = W - PAD.left - PAD.right
  const x = (i: number) => PAD.left + (days.length === 1 ? width / 2 : (i * width) / (days.length - 1))
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom)
  const grid = []
  for (let v = 0; v <= top; v += step) {
    grid.push(
      svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid' }),
      svg('text', { x: PAD.left - 8, y: y(v) + 4, class: 'ylabel' }, String(v)),
    )
  }
  const every = Math.max(1, Math.ceil(days.length / 10))
  // Labels counted from the newest day, so that the most recent one is always labelled.
  const labels = days.flatMap((d, i) =>
    (days.length - 1 - i) % every === 0 ? [svg('text', { x: x(i), y: H - 8, class: 'xlabel' }, d.day.slice(5))] : [],
  )
  // With few days a line says little and equal values hide one dot behind the other: the two series then sit
  // side by side, each dot labelled with its count.
  const few = days.length <= 7
  const line = (key: 'flaky' | 'broken') => {
    const shift = few ? (key === 'flaky' ? -10 : 10) : 0
    const pts = days.map((d, i) => `${(x(i) + shift).toFixed(1)},${y(d[key]).toFixed(1)}`).join(' ')
    const radius = days.length > 60 ? 1.5 : few ? 5 : 3
    const dots = days.flatMap((d, i) => [
      svg(
        'circle',
        { cx: x(i) + shift, cy: y(d[key]), r: radius, class: `dot ${key}` },
        svg('title', {}, `${d.day}: ${d[key]} ${key}`),
      ),
      ...(few ? [svg('text', { x: x(i) + shift, y: y(d[key]) - 10, class: `value ${key}` }, String(d[key]))] : []),
    ])
    return svg('g', {}, svg('polyline', { points: pts, class: `line ${key}` }), ...dots)
  }
  const attrs = {
    viewBox: `0 0 ${W} ${H}`,
    class: 'trend-chart',
    role: 'img',
    'aria-label': 'flaky and broken tests per day',
  }
  return svg('svg', attrs, ...grid, ...labels, line('broken'), line('flaky'))
}

const num = (tag: 'th' | 'td') => (value: string | number) => h(tag, { class: 'num' }, value)

function render(d: TrendsResponse): Node[] {
  if (d.days.length === 0) return [h('div', { class: 'panel empty' }, 'No runs in this selection.')]
  const recent = [...d.days].reverse().slice(0, 60)
  return [
    h(
      'section',
      { class: 'panel pad' },
      h(
        'div',
        { class: 'trend-head' },
        h('h2', null, 'Flaky and broken tests per day'),
        h(
          'div',
          { class: 'trend-legend' },
          h('span', { class: 'key flaky' }, 'flaky tests'),
          h('span', { class: 'key broken' }, 'broken tests'),
        ),
      ),
      chart(d.days),
      h(
        'dl',
        { class: 'definitions' },
        h('dt', null, 'Flaky'),
        h('dd', null, d.definition.flaky),
        h('dt', null, 'Broken'),
        h('dd', null, d.definition.broken),
      ),
    ),
    h(
      'section',
      { class: 'panel' },
      h(
        'table',
        { class: 'data compact' },
        h('thead', null, h('tr', null, h('th', null, 'Day'), ...['Flaky', 'Broken', 'Tests', 'Runs'].map(num('th')))),
        h(
          'tbody',
          null,
          ...recent.map((x) =>
            h('tr', null, h('td', null, x.day), ...[x.flaky, x.broken, x.tests, x.runs].map(num('td'))),
          ),
        ),
      ),
    ),
  ]
}

/** Flaky and broken counts per day, from the selected runs. */
export const trendsPage: Page = (root) => {
  const body = h('div', { class: 'grid' })
  root.append(filtersBar(), body)
  const load = loader(body, render)
  const refresh = () =>
    void load(() => get<TrendsResponse>('/trends', { ...selectionParams(readFilters()), search: undefined }))
  refresh()
  return onParams(refresh)
}
