import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureWebBuilt, launchChromium, screenshot, startSeededServer, type LiveServer } from './helpers.js'

/** Phones, dark mode, unknown addresses and wide screens, in real Chromium. */

let server: LiveServer
let browser: Browser
let testPath = ''
const contexts: BrowserContext[] = []

beforeAll(async () => {
  ensureWebBuilt()
  server = await startSeededServer()
  browser = await launchChromium()
  const page = await open('/', { width: 1280, height: 800 })
  testPath = (await page.locator('table.leaderboard tbody tr a[href^="/tests/"]').first().getAttribute('href'))!
  expect(testPath).toMatch(/^\/tests\//)
})
afterAll(async () => {
  for (const c of contexts) await c.close()
  await browser?.close()
  await server?.close()
})

async function open(
  path: string,
  viewport: { width: number; height: number },
  colorScheme: 'light' | 'dark' = 'light',
): Promise<Page> {
  const context = await browser.newContext({ viewport, colorScheme })
  contexts.push(context)
  const page = await context.newPage()
  await page.goto(`${server.url}${path}`)
  await ready(page, path)
  return page
}

/** Waits for what each page draws last, so that measurements see the finished page. */
async function ready(page: Page, path: string): Promise<void> {
  const route = path.split('?')[0]
  if (route === '/') await page.locator('table.leaderboard tbody tr').first().waitFor()
  else if (route === '/heatmap') await page.locator('canvas.heat-canvas[data-painted="true"]').waitFor()
  else if (route === '/impact') await page.locator('svg.impact-chart').first().waitFor()
  else if (route?.startsWith('/tests/')) await page.locator('main h1').first().waitFor()
  else if (route === '/settings') await page.locator('table.settings tbody tr').first().waitFor()
  else await page.locator('main > *').first().waitFor()
}

/** Every link of the navigation, in order: a page added to the dashboard is added here. */
const NAV_LABELS = ['Leaderboard', 'Heatmap', 'Trends', 'Impact', 'Quarantine', 'Kiosk', 'Settings']

const PAGES = () => ['/', '/heatmap', '/trends', '/impact', '/quarantine', '/settings', testPath, '/no/such/page']

/** Relative luminance of a CSS rgb() colour, 0 (black) to 1 (white). */
async function luminance(page: Page, selector: string, property: 'backgroundColor' | 'color'): Promise<number> {
  const css = await page
    .locator(selector)
    .first()
    .evaluate((el, p) => getComputedStyle(el)[p], property)
  const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number) as [number, number, number]
  const lin = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

describe('at 390 px wide (a phone)', () => {
  const phone = { width: 390, height: 844 }

  it('no page is wider than the screen, and the navigation is a menu that works', async () => {
    for (const path of [...PAGES(), '/kiosk']) {
      const page = await open(path, phone)
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        screen: window.innerWidth,
        // The widest element outside a scrolling box: a page can hide its overflow and still cut a word off.
        widest: [...document.querySelectorAll('main *')]
          .filter((e) => {
            for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
              if (getComputedStyle(p).overflowX !== 'visible') return false
            return true
          })
          .map((e) => ({ right: e.getBoundingClientRect().right, what: `${e.tagName}.${e.className}` }))
          .reduce((a, b) => (b.right > a.right ? b : a), { right: 0, what: '' }),
      }))
      expect(widths.page, path).toBeLessThanOrEqual(widths.screen)
      expect(widths.widest.right, `${path}: ${widths.widest.what}`).toBeLessThanOrEqual(widths.screen + 0.5)
      if (path === '/kiosk') continue // the kiosk is a wall screen's page: no navigation
      // The links are folded away; the menu button opens them, inside the screen, and a link navigates.
      const nav = page.locator('.nav')
      expect(await nav.isVisible(), path).toBe(false)
      const menu = page.locator('button.menu-toggle')
      expect(await menu.getAttribute('aria-expanded')).toBe('false')
      await menu.click()
      expect(await menu.getAttribute('aria-expanded')).toBe('true')
      expect(await nav.getByRole('link').allTextContents(), path).toEqual(NAV_LABELS)
      for (const label of NAV_LABELS) {
        const box = (await nav.getByRole('link', { name: label }).boundingBox())!
        expect(box, `${path} ${label}`).not.toBeNull()
        expect(box.x, `${path} ${label}`).toBeGreaterThanOrEqual(0)
        expect(box.x + box.width, `${path} ${label}`).toBeLessThanOrEqual(phone.width)
        expect(box.y + box.height, `${path} ${label}`).toBeLessThanOrEqual(phone.height)
      }
      if (path === '/') await screenshot(page, 'phone-menu')
      const target = path === '/trends' ? 'Heatmap' : 'Trends'
      await nav.getByRole('link', { name: target }).click()
      await expect
        .poll(() => new URL(page.url()).pathname, { message: `${path} → ${target}` })
        .toBe(`/${target.toLowerCase()}`)
      expect(await nav.isVisible(), `${path}: the menu closes after a link`).toBe(false)
    }
  }, 240_000)

  it('the leaderboard is a list of cards: name, verdict and numbers on screen without scrolling sideways', async () => {
    const page = await open('/', phone)
    const row = page.locator('table.leaderboard tbody tr').first()
    for (const part of ['.test-name', 'td[data-label="Verdict"] .chip', 'td[data-label="Pass rate"]']) {
      const box = (await row.locator(part).first().boundingBox())!
      expect(box.x, part).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width, part).toBeLessThanOrEqual(phone.width)
    }
    // Each number says what it is.
    expect(
      await row.locator('td[data-label="Pass rate"]').evaluate((td) => getComputedStyle(td, '::before').content),
    ).toBe('"Pass rate"')
    const wrap = page.locator('.table-wrap').first()
    expect(await wrap.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true)
    await screenshot(page, 'phone-leaderboard')

    // The header row is hidden; a sort control takes its place, inside the screen.
    const sort = page.getByLabel('Sort by')
    const box = (await sort.boundingBox())!
    expect(box.x + box.width).toBeLessThanOrEqual(phone.width)
    const names = () => page.locator('table.leaderboard tbody tr .test-name').allTextContents()
    await sort.selectOption('name')
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('name')
    const sorted = (list: string[]) => [...list].sort((a, b) => a.localeCompare(b))
    // Polled: the rows are redrawn once the sorted page arrives.
    await expect
      .poll(async () => {
        const n = await names()
        return n.length > 1 && n.join('\n') === sorted(n).join('\n')
      })
      .toBe(true)
    const byName = await names()
    await page.locator('.sort-control button.sort-order').click()
    await expect.poll(() => new URL(page.url()).searchParams.get('order')).toBe('desc')
    await expect.poll(names).toEqual([...byName].reverse())
  })

  it('the heatmap shows runs beside the test names', async () => {
    const page = await open('/heatmap', phone)
    const m = await page.evaluate(() => ({
      spacer: document.querySelector<HTMLElement>('.heat-spacer')!.getBoundingClientRect().width,
      scroller: document.querySelector<HTMLElement>('.heat-scroller')!.clientWidth,
    }))
    // The label column takes less than half of the width, so cells are visible without scrolling.
    expect(m.scroller).toBeLessThanOrEqual(phone.width)
    expect(m.spacer).toBeGreaterThan(m.scroller * 0.9)
  })
})

describe('at 1280 px wide (a laptop)', () => {
  it('no page is wider than the screen, and the navigation links are in the bar', async () => {
    const laptop = { width: 1280, height: 800 }
    for (const path of [...PAGES(), '/kiosk']) {
      const page = await open(path, laptop)
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(laptop.width)
      if (path === '/kiosk') continue
      expect(await page.locator('button.menu-toggle').isVisible()).toBe(false)
      expect(await page.locator('.sort-control').isVisible(), path).toBe(false)
      for (const label of NAV_LABELS) {
        const box = (await page.locator('.nav').getByRole('link', { name: label }).boundingBox())!
        expect(box.y + box.height, `${path} ${label}`).toBeLessThanOrEqual(52)
      }
      await page.locator('.nav').getByRole('link', { name: 'Quarantine' }).click()
      await expect.poll(() => new URL(page.url()).pathname).toBe('/quarantine')
    }
  }, 180_000)
})

describe('unknown addresses', () => {
  it('get the dashboard’s own page, with a 404 status and the navigation', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    contexts.push(context)
    const page = await context.newPage()
    const res = await page.goto(`${server.url}/no/such/page`)
    expect(res?.status()).toBe(404)
    await expect.poll(() => page.locator('main').textContent()).toMatch(/No such page/)
    expect(await page.locator('.nav a').allTextContents()).toEqual(NAV_LABELS)
    expect(await page.locator('main a[href="/"]').count()).toBe(1)
  })
})

describe('the heatmap', () => {
  it('scales its cells to the width there is', async () => {
    const measure = async (width: number) => {
      const page = await open('/heatmap', { width, height: 800 })
      return page.evaluate(() => ({
        spacer: document.querySelector<HTMLElement>('.heat-spacer')!.getBoundingClientRect().width,
        scroller: document.querySelector<HTMLElement>('.heat-scroller')!.clientWidth,
      }))
    }
    const narrow = await measure(1000)
    const wide = await measure(1600)
    // The runs fill the row (to within one cell's rounding per run), and a wider screen gives wider cells.
    for (const m of [narrow, wide]) {
      expect(m.spacer).toBeGreaterThan(m.scroller * 0.9)
      expect(m.spacer).toBeLessThanOrEqual(m.scroller)
    }
    expect(wide.spacer).toBeGreaterThan(narrow.spacer + 300)
  })

  it('is as tall as its grid when the grid is shorter than the screen: no empty area below it', async () => {
    const page = await open('/heatmap', { width: 1280, height: 1000 })
    const m = await page.evaluate(() => ({
      grid: document.querySelector<HTMLElement>('.heat-spacer')!.getBoundingClientRect().height,
      viewport: document.querySelector<HTMLElement>('.heat-viewport')!.getBoundingClientRect().height,
      screen: window.innerHeight,
    }))
    // Twelve tests: a grid of about 220 px on a 1000 px screen, with room for a horizontal scroll bar at most.
    expect(m.grid).toBeLessThan(m.screen / 2)
    expect(m.viewport).toBeGreaterThanOrEqual(m.grid)
    expect(m.viewport).toBeLessThanOrEqual(m.grid + 24)
  })
})

describe('prefers-color-scheme', () => {
  it('is dark on every page when the system is dark, and light otherwise', async () => {
    for (const path of PAGES()) {
      const dark = await open(path, { width: 1280, height: 800 }, 'dark')
      expect(await luminance(dark, 'html', 'backgroundColor'), path).toBeLessThan(0.05)
      expect(await luminance(dark, 'main', 'color'), path).toBeGreaterThan(0.6)
      if ((await dark.locator('main .panel').count()) > 0) {
        expect(await luminance(dark, 'main .panel', 'backgroundColor'), path).toBeLessThan(0.05)
      }
      const light = await open(path, { width: 1280, height: 800 }, 'light')
      expect(await luminance(light, 'html', 'backgroundColor'), path).toBeGreaterThan(0.8)
      expect(await luminance(light, 'main', 'color'), path).toBeLessThan(0.1)
    }
  }, 180_000)

  it('paints the heatmap canvas dark too', async () => {
    const page = await open('/heatmap', { width: 1280, height: 800 }, 'dark')
    // A pixel of the label column between rows: the canvas background.
    const rgb = await page.evaluate(() => {
      const canvas = document.querySelector<HTMLCanvasElement>('canvas.heat-canvas')!
      const d = canvas.getContext('2d')!.getImageData(2, canvas.height - 2, 1, 1).data
      return [d[0]!, d[1]!, d[2]!]
    })
    expect(Math.max(...rgb)).toBeLessThan(60)
    await screenshot(page, 'dark-heatmap')
  })
})
