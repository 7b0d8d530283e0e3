import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ensureWebBuilt,
  launchChromium,
  screenshot,
  startSeededServer,
  watchedTab,
  type LiveServer,
} from './helpers.js'

let server: LiveServer
let browser: Browser
const contexts: BrowserContext[] = []

beforeAll(async () => {
  ensureWebBuilt()
  server = await startSeededServer({ analysisWorker: false })
  browser = await launchChromium()
})
afterAll(async () => {
  for (const c of contexts) await c.close()
  await browser?.close()
  await server?.close()
})

describe('the settings page', () => {
  it('shows the policy in force and previews a candidate, read-only', async () => {
    const { page, errors } = await watchedTab(browser, contexts)
    await page.goto(`${server.url}/settings`)
    await page.locator('table.settings tbody tr').first().waitFor()
    expect(await page.locator('table.settings').first().textContent()).toContain('quarantine.releaseAfterPasses')
    await page.locator('textarea[name=candidate]').fill('{ "analysis": { "verdict": { "brokenMinConsecutive": 8 } } }')
    await page.getByRole('button', { name: 'Preview' }).click()
    const row = page.locator('table.preview-changes tbody tr', { hasText: 'unit::mod::broken' })
    await row.waitFor()
    expect(await row.locator('td').nth(1).textContent()).toMatch(/^broken → /)
    expect(await page.locator('.preview-summary').textContent()).toMatch(/tests would change/)
    // A typo is the server's error, shown on the page.
    await page.locator('textarea[name=candidate]').fill('{ "quarantine": { "minScor": 1 } }')
    await page.getByRole('button', { name: 'Preview' }).click()
    await expect.poll(() => page.locator('.preview-result .error-box').textContent()).toMatch(/minScor/)
    // The only error is the refused candidate's 400, which the page shows.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)'])
  })

  it('at 390 px (a phone): the policy and a preview are cards inside the screen, each value under its name', async () => {
    const phone = { width: 390, height: 844 }
    const context = await browser.newContext({ viewport: phone })
    contexts.push(context)
    const page = await context.newPage()
    await page.goto(`${server.url}/settings`)
    await page.locator('table.settings tbody tr').first().waitFor()
    await page.locator('textarea[name=candidate]').fill('{ "analysis": { "verdict": { "brokenMinConsecutive": 8 } } }')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.locator('table.preview-changes tbody tr').first().waitFor()
    await screenshot(page, 'phone-settings')
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phone.width)
    for (const table of ['table.settings', 'table.preview-changes']) {
      // Each row is a card: its first cell (the setting's key, the test's name) is the title, the others are
      // labelled with their column's name.
      const rows = await page.locator(`${table} tbody tr`).evaluateAll((trs) =>
        trs.map((tr) =>
          [...tr.querySelectorAll('td')].map((td) => ({
            right: td.getBoundingClientRect().right,
            label: getComputedStyle(td, '::before').content,
          })),
        ),
      )
      expect(rows.length, table).toBeGreaterThan(0)
      for (const [first, ...rest] of rows) {
        expect(first!.right, table).toBeLessThanOrEqual(phone.width)
        for (const c of rest) {
          expect(c.right, `${table} ${c.label}`).toBeLessThanOrEqual(phone.width)
          expect(c.label, table).toMatch(/^"(Value|Now|Candidate|Verdict|Quarantine|Why)"$/)
        }
      }
    }
  })
})
