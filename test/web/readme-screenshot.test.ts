import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ensureWebBuilt, launchChromium, ROOT, type LiveServer } from './helpers.js'
import { startExamplesServer } from './examples-server.js'

/** The README shows this picture; regenerating it here keeps it true to the dashboard as built. */
const README_SCREENSHOT = join(ROOT, 'docs', 'images', 'dashboard.png')

let server: LiveServer
let browser: Browser

beforeAll(async () => {
  ensureWebBuilt()
  server = await startExamplesServer()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

it('regenerates the README screenshot from the example reports', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 760 }, colorScheme: 'light' })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${server.url}/`)
  await page.locator('table.leaderboard tbody tr').first().waitFor()
  // The example shop has flaky and broken tests: the picture must show both, or it shows nothing worth seeing.
  await expect.poll(() => page.locator('table.leaderboard tbody').textContent()).toMatch(/flaky/)
  await expect.poll(() => page.locator('table.leaderboard tbody').textContent()).toMatch(/broken/)
  mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true })
  await page.screenshot({ path: README_SCREENSHOT })
  expect(statSync(README_SCREENSHOT).size).toBeGreaterThan(10_000)
  expect(errors).toEqual([])
  await context.close()
})
