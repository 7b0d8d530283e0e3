import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { spawnServe, type ServeProcess } from '../helpers/run-cli.js'
import { ensureWebBuilt, launchChromium } from '../web/helpers.js'

/**
 * `flakewatch serve` in the folder `dir()` names (read when the suite starts) and a Chromium, for one describe
 * block; `open(path)` gives a laptop-sized tab at that path of the dashboard.
 */
export function servedDashboard(dir: () => string): { open: (path: string) => Promise<Page> } {
  let serve: ServeProcess
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    serve = await spawnServe([], { cwd: dir() })
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await serve?.close()
  })
  return {
    open: async (path) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      await page.goto(`${serve.url}${path}`)
      return page
    },
  }
}
