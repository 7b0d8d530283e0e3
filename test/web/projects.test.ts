import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OverviewResponse } from '../../src/server/api-types.js'
import { createProjectEntry, createProjectsApp } from '../../src/server/projects.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { seedAlternating } from '../notify/helpers.js'
import { config, seed, tempDir, XSS_NAME } from '../server/helpers.js'
import { ensureWebBuilt, launchChromium, screenshot, WEB_DIST, watchedTab, type WatchedTab } from './helpers.js'

const SHOP = { key: 'acme/shop', read: 'shop-read-0123456789' }
const API = { key: 'acme/api', read: 'api-read-0123456789' }
const ORG = 'org-token-0123456789'

let app: FastifyInstance
let url = ''
let browser: Browser
const stores: SqliteStore[] = []
const contexts: BrowserContext[] = []
const tmp = tempDir('fw-web-projects-')

/**
 * Two projects on one real server, with the built dashboard: the shop has the seeded suite (six tests, one named
 * with markup), the api two tests of its own (`a` flaky, `b` stable).
 */
beforeAll(async () => {
  ensureWebBuilt()
  const entries = []
  for (const p of [SHOP, API]) {
    const db = join(tmp.dir, `${p.key.replace('/', '-')}.db`)
    const store = await openSqliteStore(db)
    stores.push(store)
    if (p === SHOP) await seed(store)
    else await seedAlternating(store)
    entries.push(
      await createProjectEntry({
        key: p.key,
        project: { db, readToken: p.read },
        store,
        config: config(),
        app: { webRoot: WEB_DIST, analysisWorker: false, uploadWorkers: false },
      }),
    )
  }
  app = await createProjectsApp({ projects: entries, defaultProject: SHOP.key, orgToken: ORG, bodyLimitMb: 10 })
  await app.listen({ host: '127.0.0.1', port: 0 })
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  browser = await launchChromium()
})
afterAll(async () => {
  for (const c of contexts) await c.close()
  await browser?.close()
  await app?.close()
  for (const s of stores) await s.close()
  tmp.cleanup()
})

async function open(path: string): Promise<WatchedTab> {
  const tab = await watchedTab(browser, contexts)
  await tab.page.goto(`${url}${path}`)
  return tab
}

async function giveToken(page: Page, field: string, token: string): Promise<void> {
  const input = page.locator(`form.token-form input[name=${field}]`)
  await input.waitFor()
  await input.fill(token)
  await page.locator('form.token-form button[type=submit]').click()
}

const rowNames = async (page: Page) => {
  await page.locator('table.leaderboard tbody tr').first().waitFor()
  return page.locator('table.leaderboard tbody tr .test-name').allTextContents()
}
const sorted = (xs: string[]) => [...xs].sort()

describe('dashboard on a multi-project server', () => {
  it('switches projects: each project’s own leaderboard, its token and its key kept in the URL', async () => {
    const { page, errors, dialogs } = await open('/')
    // No project named: the default one, which wants its read token.
    await expect.poll(() => page.locator('form.token-form').textContent()).toMatch(/needs a read token/)
    await giveToken(page, 'read-token', SHOP.read)
    const shopNames = sorted(await rowNames(page))
    expect(shopNames).toEqual(
      sorted(['stable', 'flaky', 'broken', XSS_NAME, 'odd / name ? with # and % and ::', 'late']),
    )
    // This token reaches the shop only: its key, no choice; the overview is in the nav.
    await expect.poll(() => page.locator('.project-switch').textContent()).toBe(SHOP.key)
    expect(await page.locator('select[name=project]').count()).toBe(0)
    await page.locator('nav.nav a', { hasText: 'Overview' }).waitFor()

    // The organisation token shows every project in the switcher.
    await page.goto(`${url}/overview`)
    await giveToken(page, 'organisation-token', ORG)
    await page.locator('table.overview tbody tr').first().waitFor()
    await page.locator('select[name=project] option[value="acme/api"]').waitFor({ state: 'attached' })

    // Switching to the api: its own page, asking for its own token, and the project stays in the URL.
    await page.goto(`${url}/`)
    await page.locator('select[name=project] option[value="acme/api"]').waitFor({ state: 'attached' })
    await page.selectOption('select[name=project]', API.key)
    await expect.poll(() => new URL(page.url()).searchParams.get('project')).toBe(API.key)
    await expect
      .poll(() => page.locator('form.token-form').textContent())
      .toContain('The project acme/api needs a read token')
    await giveToken(page, 'read-token', API.read)
    expect(sorted(await rowNames(page))).toEqual(['a', 'b'])
    expect(await page.locator('select[name=project]').inputValue()).toBe(API.key)
    // Every link the page offers names the project, so that a shared link opens the same project.
    const heatmapHref = await page.locator('nav.nav a', { hasText: 'Heatmap' }).getAttribute('href')
    expect(new URLSearchParams(heatmapHref!.split('?')[1]).get('project')).toBe(API.key)
    const testHref = await page.locator('table.leaderboard a.test-name', { hasText: /^a$/ }).getAttribute('href')
    expect(testHref).toBe(`/tests/${encodeURIComponent('unit::mod::a')}?project=${encodeURIComponent(API.key)}`)
    await page.locator('table.leaderboard a.test-name', { hasText: /^a$/ }).click()
    await expect.poll(() => page.locator('h1').first().textContent()).toContain('a')
    expect(new URL(page.url()).searchParams.get('project')).toBe(API.key)
    await screenshot(page, 'projects-api-test')

    // And back: the shop's leaderboard with the token given earlier, the api's again without asking.
    await page.goto(`${url}/?project=${encodeURIComponent(API.key)}`)
    await page.locator('select[name=project] option[value="acme/shop"]').waitFor({ state: 'attached' })
    await page.selectOption('select[name=project]', SHOP.key)
    await expect.poll(() => new URL(page.url()).searchParams.get('project')).toBe(SHOP.key)
    expect(sorted(await rowNames(page))).toEqual(shopNames)
    await page.selectOption('select[name=project]', API.key)
    await expect.poll(async () => sorted(await rowNames(page))).toEqual(['a', 'b'])
    await screenshot(page, 'projects-switched')
    expect(errors).toEqual([])
    expect(dialogs).toEqual([])
  })

  it('shows a project that does not exist as an error, its name as text', async () => {
    const name = '<img src=x onerror=alert(1)>'
    const { page, dialogs } = await open(`/?project=${encodeURIComponent(name)}`)
    await expect.poll(() => page.locator('.error-box').first().textContent()).toContain('no such project')
    expect(await page.locator('main img, .topbar img').count()).toBe(0)
    expect(dialogs).toEqual([])
    // The API itself answers 404 for it, whatever the token.
    const api = await fetch(`${url}/api/v1/leaderboard?project=${encodeURIComponent(name)}`, {
      headers: { authorization: `Bearer ${ORG}` },
    })
    expect(api.status).toBe(404)
  })

  it('shows the organisation overview: both projects with their figures, test names as text', async () => {
    const expected = (await (
      await fetch(`${url}/api/v1/overview`, { headers: { authorization: `Bearer ${ORG}` } })
    ).json()) as OverviewResponse
    expect(expected.projects.map((p) => p.project).sort()).toEqual([API.key, SHOP.key])
    const shop = expected.projects.find((p) => p.project === SHOP.key)!
    expect(shop.top_flaky.map((t) => t.test_id)).toContain(`unit::mod::${XSS_NAME}`)

    const { page, errors, dialogs } = await open('/overview')
    await expect.poll(() => page.locator('form.token-form').textContent()).toMatch(/organisation token/)
    await giveToken(page, 'organisation-token', ORG)
    const rows = page.locator('table.overview tbody tr')
    await rows.first().waitFor()
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.project))).toEqual(
      expected.projects.map((p) => p.project),
    )
    for (const p of expected.projects) {
      const cells = await page.locator(`tr[data-project="${p.project}"] td`).allTextContents()
      expect(cells.slice(0, 5)).toEqual([
        p.project,
        String(p.tests),
        String(p.flaky),
        String(p.broken),
        String(p.quarantined),
      ])
      const top = await page.locator(`tr[data-project="${p.project}"] ol.top-flaky a`).allTextContents()
      expect(top).toEqual(p.top_flaky.map((t) => t.test_id))
    }
    expect(await page.locator(`tr[data-project="${API.key}"] td`).nth(1).textContent()).toBe('2')
    // The markup in a test name is text: no element made of it, no script run.
    expect(await page.locator('table.overview img, table.overview script').count()).toBe(0)
    // A project's name links to its leaderboard, a test to its page in that project.
    const projectHref = await page.locator(`tr[data-project="${API.key}"] a.project-name`).getAttribute('href')
    expect(projectHref).toBe(`/?project=${encodeURIComponent(API.key)}`)
    await screenshot(page, 'projects-overview')
    expect(errors).toEqual([])
    expect(dialogs).toEqual([])
  })

  it('the overview at 390 px and at 1280 px: no wider than the screen, and the navigation reaches it', async () => {
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 800 },
    ]) {
      const phone = viewport.width < 600
      const context = await browser.newContext({ viewport })
      contexts.push(context)
      const page = await context.newPage()
      await page.goto(`${url}/overview`)
      await giveToken(page, 'organisation-token', ORG)
      await page.locator('table.overview tbody tr').first().waitFor()
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        cells: Math.max(
          ...[...document.querySelectorAll('table.overview td')].map((e) => e.getBoundingClientRect().right),
        ),
      }))
      expect(widths.page, `${viewport.width}`).toBeLessThanOrEqual(viewport.width)
      expect(widths.cells, `${viewport.width}`).toBeLessThanOrEqual(viewport.width)
      if (phone) await screenshot(page, 'phone-overview')
      // From the leaderboard, the navigation (a menu on a phone) leads back to the overview.
      await page.locator('nav.nav a', { hasText: 'Leaderboard' }).evaluate((a) => (a as HTMLElement).click())
      await expect.poll(() => new URL(page.url()).pathname).toBe('/')
      if (phone) {
        expect(await page.locator('.nav').isVisible()).toBe(false)
        await page.locator('button.menu-toggle').click()
      }
      const link = page.locator('nav.nav a', { hasText: 'Overview' })
      const box = (await link.boundingBox())!
      expect(box.x + box.width, `${viewport.width}`).toBeLessThanOrEqual(viewport.width)
      await link.click()
      await expect.poll(() => new URL(page.url()).pathname).toBe('/overview')
      await page.locator('table.overview tbody tr').first().waitFor()
    }
  })
})
