import type { KioskResponse } from '../server/api-types.js'
import { get } from './api.js'
import { h, replace } from './dom.js'
import { ago, day } from './format.js'
import { errorView, type Page } from './page.js'
import { readFilters, selectionParams } from './state.js'
import './kiosk.css'

const REFRESH_MS = 60_000

const CELL_CLASS: Record<string, string> = { P: 'pass', R: 'retry', F: 'fail', E: 'error', S: 'skip', '.': 'none' }

function sparkline(cells: string): HTMLElement {
  const squares = [...cells].map((c) => h('span', { class: `sc ${CELL_CLASS[c] ?? 'none'}` }))
  return h('span', { class: 'spark', 'aria-label': `last ${cells.length} results` }, ...squares)
}

function daysLabel(days: number | null): string {
  if (days === null) return 'no failures in these runs'
  return days === 1 ? 'day without failures' : 'days without failures'
}

function render(d: KioskResponse): Node[] {
  const broken = d.broken.length
    ? h(
        'ol',
        { class: 'k-list' },
        ...d.broken.map((b) =>
          h(
            'li',
            null,
            h('div', { class: 'k-name' }, b.name),
            h('div', { class: 'k-sub' }, `${b.suite} · ${b.streak} failures in a row since ${day(b.since)}`),
          ),
        ),
      )
    : h('div', { class: 'k-none' }, 'Nothing is broken.')
  const flaky = d.flaky.length
    ? h(
        'ol',
        { class: 'k-list' },
        ...d.flaky.map((f) =>
          h(
            'li',
            null,
            h('div', { class: 'k-row' }, h('div', { class: 'k-name' }, f.name), sparkline(f.last5)),
            h('div', { class: 'k-sub' }, `${f.suite} · score ${f.score.toFixed(2)}`),
          ),
        ),
      )
    : h('div', { class: 'k-none' }, 'No flaky tests.')
  const suites = h(
    'div',
    { class: 'k-suites' },
    ...d.suites.map((s) =>
      h(
        'div',
        { class: `k-suite${s.days_without_failure === 0 ? ' bad' : ''}` },
        h('div', { class: 'k-days' }, s.days_without_failure === null ? '∞' : String(s.days_without_failure)),
        h('div', { class: 'k-suite-name' }, s.suite),
        h('div', { class: 'k-sub' }, daysLabel(s.days_without_failure)),
      ),
    ),
  )
  return [
    h(
      'section',
      { class: 'k-col broken' },
      h('h2', null, `Broken now (${d.broken_total})`),
      broken,
      d.broken_total > d.broken.length
        ? h('div', { class: 'k-more' }, `+ ${d.broken_total - d.broken.length} more`)
        : null,
    ),
    h('section', { class: 'k-col flaky' }, h('h2', null, 'Top flaky'), flaky),
    h('section', { class: 'k-col suites' }, h('h2', null, 'Days without failures'), suites),
  ]
}

/** The wall display: large type, dark, refreshes itself, and says how old its data is. */
export const kioskPage: Page = (root) => {
  document.body.classList.add('kiosk-mode')
  const age = h('div', { class: 'k-age', 'aria-live': 'polite' })
  const grid = h('div', { class: 'k-grid' }, h('div', { class: 'k-loading' }, 'Loading…'))
  root.append(h('header', { class: 'k-top' }, h('div', { class: 'k-brand' }, 'flakewatch'), age), grid)
  let data: KioskResponse | null = null
  let fetchedAt = 0
  const tick = () => {
    if (!data) return
    const refreshed = ago(new Date(fetchedAt).toISOString())
    const analysed = ago(data.generated_at)
    age.textContent = `newest run ${ago(data.newest_run_at)} · analysed ${analysed} · refreshed ${refreshed}`
  }
  const refresh = async () => {
    try {
      data = await get<KioskResponse>('/kiosk', { ...selectionParams(readFilters()), search: undefined })
      fetchedAt = Date.now()
      replace(grid, ...render(data))
      tick()
    } catch (error) {
      replace(grid, errorView(error))
    }
  }
  void refresh()
  const timers = [window.setInterval(() => void refresh(), REFRESH_MS), window.setInterval(tick, 15_000)]
  return () => {
    timers.forEach(clearInterval)
    document.body.classList.remove('kiosk-mode')
  }
}
