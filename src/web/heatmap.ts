import type { HeatmapResponse, HeatmapRun, HeatmapTest } from '../server/api-types.js'
import { get, testPath } from './api.js'
import { h, replace, safeUrl } from './dom.js'
import { filtersBar } from './filters.js'
import { axisLabels } from './heat-axis.js'
import { dateTime, envText, fixed, shortRev } from './format.js'
import { navigate } from './nav.js'
import { errorView, onParams, type Page } from './page.js'
import { filterQuery, readFilters, selectionParams } from './state.js'
import './heatmap.css'

/**
 * More rows are fetched when the view comes this many screens from the bottom of what is loaded. The server sizes
 * each page (a default heatmap answer is at most 300 KB); the list is most flaky first, so the tail comes last.
 */
const PREFETCH_SCREENS = 2
const ROW_H = 16
const HEADER_H = 26
const WIDE_LABEL_W = 300
const MIN_CELL = 3
/** Cells grow to fill the width, up to a size beyond which a few runs would look like a bar chart. */
const MAX_CELL = 64
/** On a phone the test names take less room, so that some runs show beside them. */
const NARROW = 640
const NARROW_LABEL_W = 140

/** The mark the benchmark and the browser tests wait for: the first heatmap with data is on screen. */
export const PAINTED_MARK = 'heatmap-painted'

const CELL_NAMES: Record<string, string> = {
  P: 'passed',
  R: 'passed on retry',
  F: 'failed',
  E: 'error',
  S: 'skipped',
  '.': 'not run',
}

function palette() {
  const css = getComputedStyle(document.documentElement)
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback
  return {
    P: v('--cell-pass', '#4fae7b'),
    R: v('--cell-retry', '#e0a43a'),
    F: v('--cell-fail', '#d65a4f'),
    E: v('--cell-error', '#9e2f2f'),
    S: v('--cell-skip', '#c9ced8'),
    '.': v('--cell-none', '#eceff3'),
    text: v('--text', '#1d2433'),
    muted: v('--muted-fg', '#6b7385'),
    line: v('--line', '#e1e5eb'),
    panel: v('--panel', '#ffffff'),
    header: v('--heat-header', '#fafbfc'),
    interrupted: '#c62828',
    flaky: v('--flaky-fg', '#5b3aa6'),
    broken: v('--bad-fg', '#a32a20'),
  }
}

const CELL_KEYS = ['P', 'R', 'F', 'E', 'S', '.'] as const

/** The link a cell opens: the artifacts while they probably exist, else the pipeline; http(s) only. */
export function cellLink(run: HeatmapRun): string | null {
  return (!run.artifacts_expired && safeUrl(run.artifacts_url)) || safeUrl(run.pipeline_url)
}

function legend(): HTMLElement {
  const item = (cls: string, label: string) =>
    h('span', { class: 'legend-item' }, h('span', { class: `swatch ${cls}` }), label)
  return h(
    'div',
    { class: 'legend' },
    item('pass', 'passed'),
    item('retry', 'passed on retry'),
    item('fail', 'failed'),
    item('error', 'error'),
    item('skip', 'skipped'),
    item('none', 'not run'),
    item('interrupted', 'interrupted run'),
    item('expired', 'artifacts probably expired'),
    h('span', { class: 'legend-note muted' }, 'newest run on the right · click a cell for its artifacts or pipeline'),
  )
}

interface View {
  data: HeatmapResponse
  cellW: number
  labels: Map<number, string>
  /** The run axis's labels by column (see heat-axis.ts). */
  axis: Map<number, string>
  /** Show each row's suite: the same test name may be in several. */
  suites: boolean
}

/**
 * Tests × runs on one canvas. Only the visible rows and columns are drawn, one fill per colour, so thousands
 * of rows scroll smoothly; a transparent scroller on top provides native scrolling and the pointer events.
 */
export const heatmapPage: Page = (root) => {
  const info = h('div', { class: 'heat-info muted' })
  const more = h('button', { type: 'button', class: 'heat-more' }, 'Load more tests')
  const canvas = h('canvas', { class: 'heat-canvas', role: 'img', 'aria-label': 'test results heatmap' })
  const spacer = h('div', { class: 'heat-spacer' })
  const scroller = h('div', { class: 'heat-scroller', tabindex: 0 }, spacer)
  const tip = h('div', { class: 'heat-tip', role: 'tooltip' })
  const viewport = h('div', { class: 'heat-viewport' }, canvas, scroller, tip)
  const status = h('div', { class: 'heat-status' })
  root.append(
    filtersBar(),
    h(
      'div',
      { class: 'panel heat-panel' },
      h('div', { class: 'heat-head' }, legend(), h('div', { class: 'heat-count' }, info, more)),
      status,
      viewport,
    ),
  )

  let colors = palette()
  // The label column's width, set by each layout from the space there is.
  let labelW = WIDE_LABEL_W
  let view: View | null = null
  let frame = 0
  let marked = false
  const ctx = canvas.getContext('2d', { alpha: false })!

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), draw()))
  }

  function layout(data: HeatmapResponse): View {
    labelW = scroller.clientWidth < NARROW ? NARROW_LABEL_W : WIDE_LABEL_W
    const avail = Math.max(120, scroller.clientWidth - labelW - 4)
    const cols = Math.max(1, data.runs.length)
    const cellW = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(avail / cols)))
    spacer.style.width = `${labelW + cols * cellW}px`
    const height = HEADER_H + data.tests.length * ROW_H
    spacer.style.height = `${height}px`
    // The viewport is no taller than the grid (and its horizontal scroll bar): a few tests leave no empty area.
    const bar = scroller.offsetHeight - scroller.clientHeight
    viewport.style.setProperty('--heat-content', `${height + bar + 2}px`)
    return {
      data,
      cellW,
      labels: new Map(),
      axis: axisLabels(data.runs, Math.ceil(64 / cellW)),
      suites: new Set(data.tests.map((t) => t.suite)).size > 1,
    }
  }

  function label(v: View, i: number, test: HeatmapTest): string {
    let text = v.labels.get(i)
    if (text !== undefined) return text
    const max = labelW - 24
    text = v.suites ? `${test.name} · ${test.suite}` : test.name
    if (ctx.measureText(text).width > max) {
      let lo = 0
      let hi = text.length
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (ctx.measureText(`${text.slice(0, mid)}…`).width <= max) lo = mid
        else hi = mid - 1
      }
      text = `${text.slice(0, lo)}…`
    }
    v.labels.set(i, text)
    return text
  }

  function draw() {
    const w = scroller.clientWidth
    const hgt = scroller.clientHeight
    const dpr = window.devicePixelRatio || 1
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr)
      canvas.height = Math.round(hgt * dpr)
      canvas.style.width = `${w}px`
      canvas.style.height = `${hgt}px`
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
    ctx.fillStyle = colors.panel
    ctx.fillRect(0, 0, w, hgt)
    if (!view) return
    const { data, cellW } = view
    const sx = scroller.scrollLeft
    const sy = scroller.scrollTop
    const rows = data.tests.length
    const cols = data.runs.length
    const r0 = Math.max(0, Math.floor(sy / ROW_H))
    const r1 = Math.min(rows - 1, Math.floor((sy + hgt - HEADER_H) / ROW_H))
    const c0 = Math.max(0, Math.floor(sx / cellW))
    const c1 = Math.min(cols - 1, Math.floor((sx + w - labelW) / cellW))
    const gap = cellW >= 6 ? 1 : 0
    const cw = cellW - gap
    const ch = ROW_H - 3

    // Cells: one path per colour (and per dimmed colour), so a screenful is a dozen fills, not thousands.
    ctx.save()
    ctx.beginPath()
    ctx.rect(labelW, HEADER_H, w - labelW, hgt - HEADER_H)
    ctx.clip()
    for (const dim of [false, true]) {
      ctx.globalAlpha = dim ? 0.3 : 1
      for (const key of CELL_KEYS) {
        ctx.beginPath()
        let any = false
        for (let r = r0; r <= r1; r++) {
          const cells = data.cells[r]!
          const y = HEADER_H + r * ROW_H - sy + 1
          for (let c = c0; c <= c1; c++) {
            const run = data.runs[c]!
            if (run.artifacts_expired !== dim || cells[c] !== key) continue
            // A test that did not run in an interrupted run is only the run's hollow red border.
            if (key === '.' && run.status === 'interrupted') continue
            ctx.rect(labelW + c * cellW - sx, y, cw, ch)
            any = true
          }
        }
        if (any) {
          ctx.fillStyle = colors[key]
          ctx.fill()
        }
      }
    }
    ctx.globalAlpha = 1
    ctx.strokeStyle = colors.interrupted
    ctx.lineWidth = 1
    ctx.beginPath()
    for (let c = c0; c <= c1; c++) {
      if (data.runs[c]!.status !== 'interrupted') continue
      const x = labelW + c * cellW - sx + 0.5
      for (let r = r0; r <= r1; r++) ctx.rect(x, HEADER_H + r * ROW_H - sy + 1.5, Math.max(1, cw - 1), ch - 1)
    }
    ctx.stroke()
    ctx.restore()

    // Labels, fixed on the left.
    ctx.save()
    ctx.beginPath()
    ctx.rect(0, HEADER_H, labelW, hgt - HEADER_H)
    ctx.clip()
    ctx.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
    ctx.textBaseline = 'middle'
    for (let r = r0; r <= r1; r++) {
      const test = data.tests[r]!
      const y = HEADER_H + r * ROW_H - sy + ROW_H / 2
      if (test.verdict === 'flaky' || test.verdict === 'broken') {
        ctx.fillStyle = test.verdict === 'flaky' ? colors.flaky : colors.broken
        ctx.beginPath()
        ctx.arc(10, y, 3.5, 0, Math.PI * 2)
        ctx.fill()
      }
      ctx.fillStyle = colors.text
      ctx.fillText(label(view, r, test), 20, y)
    }
    ctx.restore()

    // Header: dates along the top, interrupted runs marked red.
    ctx.fillStyle = colors.header
    ctx.fillRect(0, 0, w, HEADER_H)
    ctx.fillStyle = colors.line
    ctx.fillRect(0, HEADER_H - 1, w, 1)
    ctx.fillRect(labelW - 1, 0, 1, hgt)
    ctx.save()
    ctx.beginPath()
    ctx.rect(labelW, 0, w - labelW, HEADER_H)
    ctx.clip()
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
    ctx.textBaseline = 'middle'
    for (let c = c0; c <= c1; c++) {
      const x = labelW + c * cellW - sx
      const run = data.runs[c]!
      if (run.status === 'interrupted') {
        ctx.fillStyle = colors.interrupted
        ctx.fillRect(x, HEADER_H - 5, Math.max(2, cw), 3)
      }
      const text = view.axis.get(c)
      if (text !== undefined) {
        ctx.fillStyle = colors.muted
        ctx.fillRect(x, HEADER_H - 9, 1, 4)
        ctx.fillText(text, x + 2, 9)
      }
    }
    ctx.restore()
    ctx.fillStyle = colors.muted
    ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
    ctx.fillText(`TEST (${rows})`, 10, HEADER_H / 2)

    if (!marked && rows > 0) {
      marked = true
      canvas.dataset.painted = 'true'
      requestAnimationFrame(() => performance.mark(PAINTED_MARK))
    }
  }

  function hit(e: MouseEvent): { row: number; col: number | null } | null {
    if (!view) return null
    const rect = scroller.getBoundingClientRect()
    const x = e.clientX - rect.left
    const y = e.clientY - rect.top
    if (y < HEADER_H) return null
    const row = Math.floor((y - HEADER_H + scroller.scrollTop) / ROW_H)
    if (row < 0 || row >= view.data.tests.length) return null
    if (x < labelW) return { row, col: null }
    const col = Math.floor((x - labelW + scroller.scrollLeft) / view.cellW)
    return col >= 0 && col < view.data.runs.length ? { row, col } : null
  }

  function showTip(e: MouseEvent) {
    const at = hit(e)
    if (!at || !view) {
      tip.hidden = true
      scroller.style.cursor = ''
      return
    }
    const test = view.data.tests[at.row]!
    const lines: (string | Node | null)[] = [h('div', { class: 'tip-title' }, test.name)]
    if (at.col === null) {
      lines.push(
        h('div', null, `${test.module} · ${test.suite}`),
        h('div', null, `verdict ${test.verdict.replace('_', ' ')} · score ${fixed(test.score)}`),
      )
      scroller.style.cursor = 'pointer'
    } else {
      const run = view.data.runs[at.col]!
      const cell = view.data.cells[at.row]![at.col]!
      const link = cellLink(run)
      lines.push(
        h('div', { class: `tip-status s-${cell === '.' ? 'none' : cell}` }, CELL_NAMES[cell] ?? cell),
        h('div', null, dateTime(run.at)),
        h('div', null, `pipeline ${run.pipeline_id ?? '–'} · revision ${shortRev(run.revision)}`),
        h('div', null, `${run.branch ?? 'no branch'} · ${envText(run.env)}`),
        run.status === 'interrupted' ? h('div', { class: 'tip-warn' }, 'run was interrupted') : null,
        run.artifacts_expired ? h('div', { class: 'muted' }, 'artifacts probably expired') : null,
        h('div', { class: 'muted' }, link ? 'click to open' : 'no link'),
      )
      scroller.style.cursor = link ? 'pointer' : 'default'
    }
    replace(tip, ...lines)
    tip.hidden = false
    const vr = viewport.getBoundingClientRect()
    const left = Math.min(e.clientX - vr.left + 14, vr.width - 280)
    const top = Math.min(e.clientY - vr.top + 14, vr.height - tip.offsetHeight - 8)
    tip.style.left = `${Math.max(4, left)}px`
    tip.style.top = `${Math.max(4, top)}px`
  }

  scroller.addEventListener(
    'scroll',
    () => {
      schedule()
      if (nearEnd()) void loadMore()
    },
    { passive: true },
  )
  more.addEventListener('click', () => void loadMore())
  scroller.addEventListener('mousemove', showTip)
  scroller.addEventListener('mouseleave', () => (tip.hidden = true))
  scroller.addEventListener('click', (e) => {
    const at = hit(e)
    if (!at || !view) return
    if (at.col === null) return navigate(`${testPath(view.data.tests[at.row]!.test_id)}${filterQuery()}`)
    const link = cellLink(view.data.runs[at.col]!)
    if (link) window.open(link, '_blank', 'noopener,noreferrer')
  })
  const onResize = () => {
    if (view) view = layout(view.data)
    schedule()
  }
  window.addEventListener('resize', onResize)
  // The canvas paints from the theme's variables: repaint when the system switches between light and dark.
  const scheme = window.matchMedia('(prefers-color-scheme: dark)')
  const onScheme = () => {
    colors = palette()
    schedule()
  }
  scheme.addEventListener('change', onScheme)
  tip.hidden = true

  let seq = 0
  let fetching = false

  function showCount(data: HeatmapResponse) {
    const shown =
      data.tests.length < data.total_tests ? `${data.tests.length} of ${data.total_tests}` : `${data.total_tests}`
    info.textContent = `${shown} tests × ${data.runs.length} runs`
    more.hidden = data.tests.length >= data.total_tests
  }

  /** The view is close enough to the last loaded row that the next page should be on its way. */
  function nearEnd(): boolean {
    if (!view || view.data.tests.length >= view.data.total_tests) return false
    const bottom = HEADER_H + view.data.tests.length * ROW_H
    return scroller.scrollTop + scroller.clientHeight * (1 + PREFETCH_SCREENS) >= bottom
  }

  const load = async () => {
    const mine = ++seq
    fetching = false
    status.replaceChildren()
    more.hidden = true
    try {
      const data = await get<HeatmapResponse>('/heatmap', selectionParams(readFilters()))
      if (mine !== seq) return
      view = layout(data)
      showCount(data)
      if (data.tests.length === 0) {
        status.replaceChildren(h('div', { class: 'empty' }, 'No results match these filters.'))
      }
      draw()
      if (nearEnd()) void loadMore()
    } catch (error) {
      if (mine !== seq) return
      view = null
      status.replaceChildren(errorView(error))
      draw()
    }
  }

  /** Appends the next page of tests; the columns must be the same runs, else the store moved on: start over. */
  const loadMore = async () => {
    if (!view || fetching || view.data.tests.length >= view.data.total_tests) return
    const mine = seq
    const have = view.data
    let again = false
    fetching = true
    more.disabled = true
    try {
      const page = await get<HeatmapResponse>('/heatmap', {
        ...selectionParams(readFilters()),
        offset: have.tests.length,
      })
      if (mine !== seq) return
      const sameRuns =
        page.runs.length === have.runs.length && page.runs.every((r, i) => r.run_id === have.runs[i]!.run_id)
      if (!sameRuns) return void load()
      const data: HeatmapResponse = {
        ...page,
        tests: have.tests.concat(page.tests),
        cells: have.cells.concat(page.cells),
        offset: 0,
        limit: have.tests.length + page.tests.length,
      }
      view = { ...layout(data), labels: view.labels }
      showCount(data)
      schedule()
      again = page.tests.length > 0
    } catch (error) {
      if (mine === seq) status.replaceChildren(errorView(error))
    } finally {
      if (mine === seq) {
        fetching = false
        more.disabled = false
      }
    }
    // A tall screen (or a fast scroll) may still be near the end: keep filling.
    if (again && mine === seq && nearEnd()) void loadMore()
  }
  void load()
  const off = onParams(() => void load())
  return () => {
    off()
    window.removeEventListener('resize', onResize)
    scheme.removeEventListener('change', onScheme)
    cancelAnimationFrame(frame)
  }
}
