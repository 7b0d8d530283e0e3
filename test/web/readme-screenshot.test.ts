import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ensureWebBuilt, launchChromium, ROOT, type LiveServer } from './helpers.js'
import { startExamplesServer } from './examples-server.js'

/** The README shows this picture; regenerating it here keeps it true to the dashboard as built. */
const README_SCREENSHOT = join(ROOT, 'docs', 'images', 'dashboard.png')
/**
 * Every run takes the picture into test-artifacts/ (ignored by git); it replaces the committed one only when asked
 * (FLAKEWATCH_UPDATE_SCREENSHOTS=1) or when there is none, so that running the tests never dirties the tree.
 */
const SHOT = join(ROOT, 'test-artifacts', 'dashboard.png')

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
  mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true })
  await page.screenshot({ path: SHOT })
  expect(statSync(SHOT).size).toBeGreaterThan(10_000)
  if (process.env.FLAKEWATCH_UPDATE_SCREENSHOTS === '1' || !existsSync(README_SCREENSHOT)) {
    mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true })
    copyFileSync(SHOT, README_SCREENSHOT)
  }
  expect(statSync(README_SCREENSHOT).size).toBeGreaterThan(10_000)
  expect(errors).toEqual([])
  await context.close()
})
