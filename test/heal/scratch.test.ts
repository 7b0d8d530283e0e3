import { afterAll, beforeAll, test } from 'vitest'
import type { Browser } from 'playwright-core'
import { createHealingPage } from '../../src/playwright/page.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import { HealRefusedError } from '../../src/heal/healer.js'
import { launchChromium, servePages, type PageServer } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'

let browser: Browser
let server: PageServer
beforeAll(async () => { browser = await launchChromium(); server = await servePages() })
afterAll(async () => { await browser.close(); await server.close() })

const cases: Array<[keyof typeof MUTATIONS, (p: any) => any]> = [
  ['idRenamed', (p) => p.locator('#pay')],
  ['classesChanged', (p) => p.locator('#checkout button.btn-primary')],
  ['textTweaked', (p) => p.getByRole('button', { name: 'Place order', exact: true })],
  ['wrapperAdded', (p) => p.locator('#checkout > .actions > button[type=submit]')],
  ['moved', (p) => p.locator('.actions').getByRole('button', { name: 'Place order' })],
  ['siblingsReordered', (p) => p.locator('#cancel + button')],
  ['testIdRemoved', (p) => p.getByTestId('pay')],
  ['lookAlikeElsewhere', (p) => p.getByTestId('pay')],
  ['identicalTwin', (p) => p.getByTestId('pay')],
  ['removed', (p) => p.getByTestId('pay')],
  ['hidden', (p) => p.getByTestId('pay')],
  ['hiddenAndRenamed', (p) => p.locator('#pay')],
]
for (const [m, loc] of cases) {
  test(m, async () => {
    const store = createMemoryHealStore()
    const ctx = await browser.newContext()
    const raw = await ctx.newPage()
    raw.setDefaultTimeout(1500)
    const logs: string[] = []
    let page = createHealingPage(raw, { store, testId: 't', probeTimeout: 500, logger: { warn: (x) => logs.push(x) } })
    await page.goto(server.set('/a', CHECKOUT))
    await loc(page).click()
    const raw2 = await ctx.newPage(); raw2.setDefaultTimeout(1500)
    page = createHealingPage(raw2, { store, testId: 't', probeTimeout: 500, logger: { warn: (x) => logs.push(x) } })
    await page.goto(server.set('/b', MUTATIONS[m](CHECKOUT)))
    const t0 = Date.now()
    try { await loc(page).click(); console.log(m, 'CLICKED', await raw2.evaluate(() => document.body.dataset.clicked), logs.join('\n')) }
    catch (e) { console.log(logs.join('\n')); console.log(m, 'ERR', e instanceof HealRefusedError ? e.message.split('\n\n').slice(1).join('\n') : String(e).slice(0, 300)) }
    console.log(m, 'ms', Date.now() - t0)
    await ctx.close()
  })
}
