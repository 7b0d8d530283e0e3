import { h } from './dom.js'
import { loadFacets } from './filters.js'
import { ago } from './format.js'
import { heatmapPage } from './heatmap.js'
import { impactPage } from './impact.js'
import { kioskPage } from './kiosk.js'
import { leaderboardPage } from './leaderboard.js'
import { navigate } from './nav.js'
import { overviewPage } from './overview.js'
import { currentProject, projectQuery } from './project.js'
import { loadProjects, projectSwitcher } from './project-switcher.js'
import type { Page } from './page.js'
import { quarantinePage } from './quarantine-page.js'
import { settingsPage } from './settings-page.js'
import { filterQuery } from './state.js'
import { testPage } from './test-page.js'
import { trendsPage } from './trends.js'
import './base.css'

interface Route {
  page: Page
  title: string
  nav?: string
  chrome: boolean
}

const NAV = [
  { path: '/', label: 'Leaderboard' },
  { path: '/heatmap', label: 'Heatmap' },
  { path: '/trends', label: 'Trends' },
  { path: '/impact', label: 'Impact' },
  { path: '/quarantine', label: 'Quarantine' },
  { path: '/kiosk', label: 'Kiosk' },
  { path: '/settings', label: 'Settings' },
]

const notFound: Page = (root) => {
  root.append(h('div', { class: 'panel empty' }, 'No such page. ', h('a', { href: '/' }, 'Back to the leaderboard')))
}

function route(pathname: string): Route {
  switch (pathname.replace(/\/+$/, '') || '/') {
    case '/':
      return { page: leaderboardPage, title: 'Leaderboard', nav: '/', chrome: true }
    case '/heatmap':
      return { page: heatmapPage, title: 'Heatmap', nav: '/heatmap', chrome: true }
    case '/trends':
      return { page: trendsPage, title: 'Trends', nav: '/trends', chrome: true }
    case '/impact':
      return { page: impactPage, title: 'Impact', nav: '/impact', chrome: true }
    case '/quarantine':
      return { page: quarantinePage, title: 'Quarantine', nav: '/quarantine', chrome: true }
    case '/kiosk':
      return { page: kioskPage, title: 'Kiosk', chrome: false }
    case '/settings':
      return { page: settingsPage, title: 'Settings', nav: '/settings', chrome: true }
    case '/overview':
      return { page: overviewPage, title: 'Overview', nav: '/overview', chrome: true }
  }
  const test = /^\/tests\/(.+)$/.exec(pathname)
  if (test) {
    let id: string
    try {
      id = decodeURIComponent(test[1]!)
    } catch {
      return { page: notFound, title: 'Not found', chrome: true }
    }
    return { page: testPage(id), title: id.split('::').pop() ?? id, chrome: true }
  }
  return { page: notFound, title: 'Not found', chrome: true }
}

function topbar(current: string | undefined): HTMLElement {
  const age = h('span', { class: 'age' })
  loadFacets()
    .then((f) => (age.textContent = `${f.runs} runs · newest ${ago(f.newest_run_at)}`))
    .catch(() => undefined)
  const logo = h('span', { class: 'logo', 'aria-hidden': 'true' })
  for (const color of ['#4fae7b', '#e0a43a', '#d65a4f', '#4fae7b']) {
    const cell = h('i')
    cell.style.background = color
    logo.append(cell)
  }
  const keep = filterQuery()
  const link = (path: string, label: string, href: string) =>
    h('a', { href, 'aria-current': path === current ? 'page' : undefined }, label)
  const nav = h(
    'nav',
    { class: 'nav' },
    ...NAV.map((n) =>
      // The filters follow the analysis pages; the quarantine list and the kiosk take only the project.
      link(
        n.path,
        n.label,
        n.path === '/quarantine' || n.path === '/kiosk' || n.path === '/settings'
          ? `${n.path}${projectQuery()}`
          : `${n.path}${keep}`,
      ),
    ),
  )
  // The organisation overview exists on multi-project servers only.
  void loadProjects().then((state) => {
    if (state.multi) nav.append(link('/overview', 'Overview', `/overview${projectQuery()}`))
  })
  // On a phone the links fold into a menu: the button opens it, a link (or the button again) closes it.
  nav.id = 'fw-nav'
  const menu = h(
    'button',
    { type: 'button', class: 'menu-toggle', 'aria-controls': 'fw-nav', 'aria-expanded': 'false' },
    h('span', { class: 'menu-icon', 'aria-hidden': 'true' }),
    NAV.find((n) => n.path === current)?.label ?? 'Menu',
  )
  const bar = h(
    'header',
    { class: 'topbar' },
    h('a', { href: `/${projectQuery()}`, class: 'brand' }, logo, 'flakewatch'),
    projectSwitcher(),
    menu,
    nav,
    h('span', { class: 'spacer' }),
    age,
  )
  const setOpen = (open: boolean) => {
    bar.classList.toggle('menu-open', open)
    menu.setAttribute('aria-expanded', String(open))
  }
  menu.addEventListener('click', () => setOpen(!bar.classList.contains('menu-open')))
  nav.addEventListener('click', () => setOpen(false))
  return bar
}

const app = document.getElementById('app')!
let cleanup: (() => void) | void

function render(): void {
  cleanup?.()
  cleanup = undefined
  const r = route(location.pathname)
  document.title = `${r.title} · flakewatch`
  const main = h('main')
  app.replaceChildren(...(r.chrome ? [topbar(r.nav), main] : [main]))
  cleanup = r.page(main)
  window.scrollTo(0, 0)
}

// Same-origin links navigate in place; new tabs, modified clicks and external links behave as usual.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
  const a = (e.target as Element | null)?.closest('a')
  if (!a || a.target || !a.href) return
  const url = new URL(a.href)
  if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return
  // Another project's page is a fresh load: what this page cached (facets, the project list) was this project's.
  if (currentProject(url.search) !== currentProject()) return
  e.preventDefault()
  navigate(url.pathname + url.search)
})
window.addEventListener('popstate', render)
window.addEventListener('fw:navigate', render)
render()
