import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnServe, testdir, type ServeProcess } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'
import { ensureWebBuilt, launchChromium, screenshot } from './helpers.js'

/** Issue 30: with one day of data the two series hid each other, and the legend showed a config key. */

const junit = (failed: boolean) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="cart" tests="2" failures="${failed ? 1 : 0}" timestamp="2026-11-27T08:00:00">
  <testcase classname="cart.test.ts" name="adds an item" time="0.1"/>
  <testcase classname="cart.test.ts" name="removes an item" time="0.1">${failed ? '<failure message="boom">boom</failure>' : ''}</testcase>
</testsuite>
`

describe('trends with one day of data', { timeout: 120_000 }, () => {
  let dir: string
  let serve: ServeProcess
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    dir = testdir({ 'r1.xml': junit(true), 'r2.xml': junit(true), 'r3.xml': junit(true) }, 'trends-day-')
    for (const f of ['r1.xml', 'r2.xml', 'r3.xml']) {
      const r = await runCli(['ingest', f, '--suite', 'unit', '--run-id', f, '--revision', f], { cwd: dir })
      expect(r.exitCode, r.stderr).toBe(0)
    }
    serve = await spawnServe([], { cwd: dir })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await serve?.close()
    cleanup(dir)
  })

  it('shows both series side by side with their counts, and words, not config keys', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.goto(`${serve.url}/trends`)
    await page.locator('svg.trend-chart circle').first().waitFor()
    const dots = await page.locator('svg.trend-chart circle').evaluateAll((cs) =>
      cs.map((c) => ({
        cls: c.getAttribute('class'),
        x: Number(c.getAttribute('cx')),
        y: Number(c.getAttribute('cy')),
      })),
    )
    expect(dots).toHaveLength(2)
    const [broken, flaky] = [dots.find((d) => d.cls!.includes('broken'))!, dots.find((d) => d.cls!.includes('flaky'))!]
    // One test broken that day and none flaky; side by side, neither dot hides the other.
    expect(Math.abs(broken.x - flaky.x)).toBeGreaterThanOrEqual(10)
    expect(await page.locator('svg.trend-chart text.value').allTextContents()).toEqual(['1', '0'])
    const text = (await page.locator('main').textContent())!
    expect(text).not.toMatch(/brokenMinConsecutive|verdict\./)
    expect(text).toContain('a streak of 3 or more failures in a row')
    await screenshot(page, 'trends-one-day')
    await page.close()
  })
})
