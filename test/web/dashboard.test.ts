import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditResponse } from '../../src/server/api-types.js'
import { config, READ_TOKEN, WRITE_TOKEN, XSS_NAME } from '../server/helpers.js'
import {
  ensureWebBuilt,
  launchChromium,
  screenshot,
  startSeededServer,
  watchedTab,
  type LiveServer,
  type WatchedTab,
} from './helpers.js'

let server: LiveServer
let browser: Browser
const contexts: BrowserContext[] = []

beforeAll(async () => {
  ensureWebBuilt()
  server = await startSeededServer()
  browser = await launchChromium()
})
afterAll(async () => {
  for (const c of contexts) await c.close()
  await browser?.close()
  await server?.close()
})

/** A fresh tab that records page errors, console errors and dialogs, and records window.open instead of opening. */
async function open(path: string, base = server.url): Promise<WatchedTab> {
  const { page, errors, dialogs } = await watchedTab(browser, contexts)
  await page.addInitScript(() => {
    const w = window as unknown as { __opened: string[] }
    w.__opened = []
    window.open = (url?: string | URL) => {
      w.__opened.push(String(url))
      return null
    }
  })
  const res = await page.goto(`${base}${path}`)
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'")
  return { page, errors, dialogs }
}

const rowNames = (page: Page) => page.locator('table.leaderboard tbody tr .test-name').allTextContents()

describe('dashboard', () => {
  it('loads the leaderboard, most flaky first', async () => {
    const { page, errors } = await open('/')
    await page.locator('table.leaderboard tbody tr').first().waitFor()
    const names = await rowNames(page)
    expect(names).toHaveLength(12)
    expect(names.slice(0, 2)).toEqual(['flaky', 'flaky'])
    await expect.poll(() => page.locator('.card.flaky .value').textContent()).toBe('4')
    await expect.poll(() => page.locator('.topbar .age').textContent()).toMatch(/28 runs/)
    // A single-project server: no project switcher, no organisation overview.
    await page.waitForLoadState('networkidle')
    expect(await page.locator('.project-switch').textContent()).toBe('')
    expect(await page.locator('nav.nav a').allTextContents()).toEqual([
      'Leaderboard',
      'Heatmap',
      'Trends',
      'Impact',
      'Quarantine',
      'Kiosk',
      'Settings',
    ])
    await screenshot(page, 'leaderboard')
    expect(errors).toEqual([])
  })

  it('filters by suite and name, keeps the filters in the URL, and sorts', async () => {
    const { page, errors } = await open('/')
    await page.locator('select[name=suite] option[value=e2e]').waitFor({ state: 'attached' })
    await page.selectOption('select[name=suite]', 'e2e')
    const suites = async () => (await page.locator('.test-sub').allTextContents()).map((t) => t.split(' · ').pop())
    await expect.poll(async () => new Set(await suites())).toEqual(new Set(['e2e']))
    expect(await rowNames(page)).toHaveLength(6)
    await page.fill('input[name=q]', 'flak')
    await page.press('input[name=q]', 'Enter')
    await expect.poll(() => rowNames(page)).toEqual(['flaky'])
    expect(page.url()).toMatch(/suite=e2e/)
    expect(page.url()).toMatch(/q=flak/)
    await screenshot(page, 'leaderboard-filtered')
    await page.fill('input[name=q]', '')
    await page.press('input[name=q]', 'Enter')
    await page.click('th button.sort:has-text("Test")')
    await expect.poll(async () => (await rowNames(page))[1]).toBe('broken')
    // Sorting by keyboard: Tab to a column's button, Enter sorts, again reverses; aria-sort says which and how.
    const score = page.locator('th', { has: page.locator('button.sort:has-text("Score")') })
    expect(await score.getAttribute('aria-sort')).toBe('none')
    await score.locator('button').focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => score.getAttribute('aria-sort')).toBe('descending')
    expect(await page.locator('th[aria-sort="ascending"], th[aria-sort="descending"]').count()).toBe(1)
    await page.locator('th button.sort:has-text("Score")').focus()
    await page.keyboard.press('Space')
    await expect.poll(() => score.getAttribute('aria-sort')).toBe('ascending')
    expect(new URL(page.url()).searchParams.get('order')).toBe('asc')
    expect(errors).toEqual([])
  })

  it('paints the heatmap, filtered by env and by a revision range', async () => {
    const { page, errors } = await open('/heatmap?suite=unit')
    await page.waitForFunction(() => performance.getEntriesByName('heatmap-painted').length > 0)
    await expect.poll(() => page.locator('.heat-info').textContent()).toBe('6 tests × 14 runs')
    await page.selectOption('select[name=env-os]', 'linux')
    await expect.poll(() => page.locator('.heat-info').textContent()).toBe('6 tests × 7 runs')
    await page.selectOption('select[name=env-os]', '')
    await page.fill('input[name=q]', 'rev02abcdef...rev05')
    await expect.poll(() => page.locator('.search-hint').textContent()).toBe('revision range')
    await page.press('input[name=q]', 'Enter')
    await expect.poll(() => page.locator('.heat-info').textContent()).toBe('6 tests × 4 runs')
    await screenshot(page, 'heatmap-revision-range')
    expect(errors).toEqual([])
  })

  it('shows heatmap tooltips and opens only http(s) links', async () => {
    const { page, errors } = await open('/heatmap?suite=unit')
    await page.waitForFunction(() => performance.getEntriesByName('heatmap-painted').length > 0)
    const box = (await page.locator('.heat-scroller').boundingBox())!
    // Layout constants of heatmap.ts: 300 px of labels, a 26 px header, 16 px rows; the 14 runs share the rest of
    // the width, which the spacer spans.
    const spacer = (await page.locator('.heat-spacer').boundingBox())!
    const cellW = Math.floor((spacer.width - 300) / 14)
    expect(cellW).toBeGreaterThan(14)
    const cell = (row: number, col: number) => ({
      x: box.x + 300 + col * cellW + cellW / 2,
      y: box.y + 26 + row * 16 + 8,
    })
    const at = cell(0, 3)
    await page.mouse.move(at.x, at.y)
    const tip = page.locator('.heat-tip')
    await expect.poll(() => tip.isVisible()).toBe(true)
    expect(await tip.textContent()).toContain('pipeline 1003')
    await screenshot(page, 'heatmap-tooltip')
    // Run r03's artifacts URL is javascript:, so the click opens its pipeline instead.
    await page.mouse.click(at.x, at.y)
    const second = cell(0, 5)
    await page.mouse.click(second.x, second.y)
    const opened = await page.evaluate(() => (window as unknown as { __opened: string[] }).__opened)
    expect(opened).toEqual(['https://ci.example.com/p/1003', 'https://ci.example.com/p/1005/artifacts'])
    await page.mouse.click(box.x + 60, box.y + 26 + 8)
    await page.locator('.test-page h1').waitFor()
    expect(new URL(page.url()).pathname).toBe(`/tests/${encodeURIComponent('unit::mod::flaky')}`)
    expect(errors).toEqual([])
  })

  it('opens a test, refuses a quarantine without the token, and quarantines and releases with it', async () => {
    const { page, errors } = await open('/?suite=unit')
    await page.click('table.leaderboard a.test-name:text-is("flaky")')
    await expect.poll(() => page.locator('.test-page h1').textContent()).toBe('flaky')
    await page.locator('.components .component').first().waitFor()
    expect(await page.locator('.components .component').count()).toBe(6)
    await page.click('.hcell >> nth=-2')
    await expect.poll(() => page.locator('.attempts .attempt').count()).toBe(2)
    await screenshot(page, 'test-page')

    await page.click('button:has-text("Quarantine…")')
    const dialog = page.locator('dialog.qdialog')
    await dialog.locator('textarea[name=reason]').fill('fails on CI every other run')
    await dialog.locator('button[type=submit]').click()
    await expect.poll(() => dialog.locator('.dialog-error').textContent()).toMatch(/^Refused: .*write token/)
    await dialog.locator('input[name=token]').fill('not-the-token')
    await dialog.locator('button[type=submit]').click()
    await expect.poll(() => dialog.locator('.dialog-error').textContent()).toBe('Refused: wrong token')
    await screenshot(page, 'quarantine-refused')

    await dialog.locator('input[name=token]').fill(WRITE_TOKEN)
    // The dialog asks for no actor: the audit trail names the write token (the single token is 'api').
    expect(await dialog.locator('input[name=actor]').count()).toBe(0)
    await dialog.locator('button[type=submit]').click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('.qstate .chip.quarantined').waitFor()
    const lastAudit = () => page.locator('table.audit tbody tr').first().textContent()
    await expect.poll(lastAudit).toContain('fails on CI every other run')
    await screenshot(page, 'test-quarantined')
    expect(await page.evaluate(() => sessionStorage.getItem('flakewatch.writeToken'))).toBeNull()

    await page.click('button:has-text("Release…")')
    await dialog.locator('textarea[name=reason]').fill('fixed the race')
    await dialog.locator('input[name=token]').fill(WRITE_TOKEN)
    await dialog.locator('input[name=remember]').check()
    await dialog.locator('button[type=submit]').click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('button:has-text("Quarantine…")').waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem('flakewatch.writeToken'))).toBe(WRITE_TOKEN)
    expect(await page.evaluate(() => localStorage.length)).toBe(0)

    const res = await fetch(`${server.url}/api/v1/quarantine/audit?test_id=unit::mod::flaky`)
    const audit = (await res.json()) as AuditResponse
    expect(audit.audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['release', 'api', 'fixed the race'],
      ['quarantine', 'api', 'fails on CI every other run'],
    ])
    expect(errors).toEqual([])
  })

  it('shows the impact page: CI time lost per week, the most costly tests, by owner and by suite', async () => {
    const { page, errors, dialogs } = await open('/impact')
    await page.locator('svg.impact-chart').first().waitFor()
    // Two suites of the seeded history, each with a flaky test that lost 110 ms and another that lost 40 ms.
    expect(await page.locator('.card.time .value').textContent()).toBe('300 ms')
    expect(await page.locator('svg.impact-chart').count()).toBe(2)
    expect(await page.locator('svg.impact-chart rect.bar.time').count()).toBe(3)
    const tests = page.locator('table.impact-tests tbody tr')
    expect(await tests.first().locator('.test-name').textContent()).toBe('flaky')
    expect(await tests.first().locator('td[data-label="CI time lost"]').textContent()).toBe('110 ms')
    // A name carrying HTML is text here too.
    expect(await page.locator('table.impact-tests .test-name', { hasText: '<script>' }).first().textContent()).toBe(
      XSS_NAME,
    )
    expect(await page.locator('table.impact-suites tbody td[data-label="Suite"]').allTextContents()).toEqual([
      'e2e',
      'unit',
    ])
    expect(await page.locator('table.impact-owners tbody td[data-label="Owner"]').allTextContents()).toEqual([
      'no owner',
    ])
    expect(await page.locator('main img').count()).toBe(0)
    await screenshot(page, 'impact')
    // The suite filter narrows it.
    await page.selectOption('select[name=suite]', 'unit')
    await expect.poll(() => page.locator('.card.time .value').textContent()).toBe('150 ms')
    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
  })

  it('renders a test name carrying HTML as text, everywhere, and runs none of it', async () => {
    const { page, errors, dialogs } = await open('/?suite=unit')
    const link = page.locator('table.leaderboard a.test-name', { hasText: '<script>' })
    await link.waitFor()
    expect(await link.textContent()).toBe(XSS_NAME)
    await screenshot(page, 'xss-as-text')
    await link.click()
    await expect.poll(() => page.locator('.test-page h1').textContent()).toBe(XSS_NAME)
    await page.goto(`${server.url}/kiosk`)
    await page.locator('.k-name', { hasText: '<script>' }).first().waitFor()
    await page.goto(`${server.url}/heatmap`)
    await page.waitForFunction(() => performance.getEntriesByName('heatmap-painted').length > 0)
    expect(await page.locator('img').count()).toBe(0)
    expect(await page.locator('script').count()).toBe(1)
    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
  })

  it('shows the kiosk with data age, and the trends', async () => {
    const { page, errors } = await open('/kiosk')
    await expect.poll(() => page.locator('.k-age').textContent()).toMatch(/^newest run .* ago · analysed/)
    expect(await page.locator('.k-col.broken .k-name').allTextContents()).toEqual(['broken', 'broken'])
    expect(await page.locator('.k-col.flaky .spark').first().locator('.sc').count()).toBe(5)
    // Both suites have a test broken now, so neither has a day without failures.
    expect(await page.locator('.k-days').allTextContents()).toEqual(['0', '0'])
    await screenshot(page, 'kiosk')
    await page.goto(`${server.url}/trends`)
    await page.locator('svg.trend-chart polyline').first().waitFor()
    expect(await page.locator('svg.trend-chart polyline').count()).toBe(2)
    await screenshot(page, 'trends')
    const rule = await fetch(`${server.url}/api/v1/rules/timeouts-arm64`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
        reason: '<b>arm64</b> runners are slow',
        expires_at: '2099-01-30T00:00:00Z',
      }),
    })
    expect(rule.status).toBe(200)
    await page.goto(`${server.url}/quarantine`)
    await page.locator('h2', { hasText: 'Quarantined tests' }).waitFor()
    const row = page.locator('tr[data-rule="timeouts-arm64"]')
    await row.waitFor()
    expect(await row.locator('td').nth(1).textContent()).toBe('message /Timeout \\d+ms exceeded/, runner=arm64')
    // Text from the API is text: the reason's markup is shown, never parsed.
    expect(await row.locator('b').count()).toBe(0)
    expect(await row.locator('td').nth(2).textContent()).toContain('<b>arm64</b> runners are slow')
    await screenshot(page, 'quarantine-page')
    expect(errors).toEqual([])
  })

  it('asks for the read token when the server needs one', { timeout: 90_000 }, async () => {
    const guarded = await startSeededServer({ config: config({ readToken: READ_TOKEN }) })
    try {
      const { page } = await open('/', guarded.url)
      await page.locator('form.token-form').first().waitFor()
      // Every panel answers 401 and draws its own form; on a loaded machine the last ones can arrive after the
      // first form is filled and replace it, so fill only once all of them are in.
      await page.waitForLoadState('networkidle')
      await page.locator('form.token-form input[name=read-token]').first().fill(READ_TOKEN)
      await page.locator('form.token-form button').first().click()
      await page.locator('table.leaderboard tbody tr').first().waitFor()
      expect(await rowNames(page)).toHaveLength(12)
    } finally {
      await guarded.close()
    }
  })
})
