import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HeatmapResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { HEATMAP_DEFAULT_BYTES } from '../../src/server/routes/heatmap.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, tempDir } from '../server/helpers.js'
import { ensureWebBuilt, launchChromium, WEB_DIST } from './helpers.js'

const TESTS = 2000
const RUNS = 6
/** Long names, so that a few hundred rows fill a default page and the dashboard has to page the rest. */
const nameOf = (i: number) =>
  `checkout ${String(i).padStart(4, '0')} ${'applies the discount code and keeps the basket total in step '.repeat(3)}`

let browser: Browser
let store: SqliteStore
let url: string
let close: () => Promise<void>

beforeAll(async () => {
  ensureWebBuilt()
  const tmp = tempDir('fw-heat-paging-')
  store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  for (let r = 0; r < RUNS; r++) {
    const run = runMeta(`r${r}`, new Date(Date.UTC(2026, 2, 1) + r * 3_600_000).toISOString())
    const results = Array.from({ length: TESTS }, (_, i) => result(nameOf(i), (i + r) % 11 ? 'passed' : 'failed'))
    await store.ingestReport(batch(run, results))
  }
  const app = await createApp({ store, config: config(), webRoot: WEB_DIST })
  await app.listen({ host: '127.0.0.1', port: 0 })
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  browser = await launchChromium()
  close = async () => {
    await app.close()
    await store.close()
    tmp.cleanup()
  }
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await close?.()
})

describe('the heatmap page', () => {
  it('shows the first page, then pages the rest with the control and on scroll, and draws the last rows', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    const answers: { offset: string | null; bytes: number; body: HeatmapResponse }[] = []
    page.on('response', (res) => {
      const u = new URL(res.url())
      if (u.pathname !== '/api/v1/heatmap') return
      void res.body().then((b) => {
        answers.push({ offset: u.searchParams.get('offset'), bytes: b.length, body: JSON.parse(String(b)) })
      })
    })
    await page.goto(`${url}/heatmap`)
    await page.waitForFunction(() => performance.getEntriesByName('heatmap-painted').length > 0)

    const info = page.locator('.heat-info')
    const loaded = async () => Number(/^(\d+)/.exec((await info.textContent()) ?? '')?.[1])
    const first = await loaded()
    expect(first).toBeGreaterThan(50)
    expect(first).toBeLessThan(TESTS)
    expect(await info.textContent()).toBe(`${first} of ${TESTS} tests × ${RUNS} runs`)

    // The control asks for the next page.
    const more = page.locator('button.heat-more')
    expect(await more.isVisible()).toBe(true)
    await more.click()
    await expect.poll(loaded).toBeGreaterThan(first)

    // Scrolling to the bottom of what is loaded keeps fetching until every test is there.
    await expect
      .poll(
        async () => {
          await page.locator('.heat-scroller').evaluate((el) => el.scrollTo(0, el.scrollHeight))
          return info.textContent()
        },
        { timeout: 60_000 },
      )
      .toBe(`${TESTS} tests × ${RUNS} runs`)
    expect(await more.isVisible()).toBe(false)

    // Every answer was a page within the budget, asked with an offset after the first; together, each test once.
    await expect.poll(() => answers.reduce((n, a) => n + a.body.tests.length, 0)).toBe(TESTS)
    // Bodies arrive in any order: put them in page order.
    answers.sort((a, b) => Number(a.offset ?? 0) - Number(b.offset ?? 0))
    expect(answers[0]!.offset).toBeNull()
    expect(answers.length).toBeGreaterThan(2)
    for (const a of answers.slice(1)) expect(Number(a.offset)).toBeGreaterThan(0)
    for (const a of answers) expect(a.bytes).toBeLessThanOrEqual(HEATMAP_DEFAULT_BYTES)
    const ids = new Set(answers.flatMap((a) => a.body.tests.map((t) => t.test_id)))
    expect(ids.size).toBe(TESTS)

    // The canvas draws the last row: scrolled to the very end, its label's tooltip names the last test.
    const last = answers.at(-1)!.body.tests.at(-1)!
    await page.locator('.heat-scroller').evaluate((el) => el.scrollTo(0, el.scrollHeight))
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)))
    const box = (await page.locator('.heat-scroller').boundingBox())!
    await page.mouse.move(box.x + 60, box.y + box.height - 8)
    const tip = page.locator('.heat-tip')
    await expect.poll(() => tip.isVisible()).toBe(true)
    expect(await tip.locator('.tip-title').textContent()).toBe(last.name)
    expect(errors).toEqual([])
    await context.close()
  }, 120_000)
})
