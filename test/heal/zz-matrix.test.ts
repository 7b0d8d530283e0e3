import { test } from 'vitest'
import type { Locator, Page } from 'playwright-core'
import { launchChromium, servePages } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import { HealRefusedError } from '../../src/heal/healer.js'
import { createHealingPage } from '../../src/playwright/page.js'
test('matrix', { timeout: 300_000 }, async () => {
  const b = await launchChromium(); const s = await servePages()
  const cases: Array<[keyof typeof MUTATIONS, (p: Page) => Locator]> = [
    ['idRenamed', (p) => p.locator('#pay')], ['classesChanged', (p) => p.locator('#checkout button.btn-primary')],
    ['textTweaked', (p) => p.getByRole('button', { name: 'Place order', exact: true })],
    ['wrapperAdded', (p) => p.locator('#checkout > .actions > button[type=submit]')],
    ['moved', (p) => p.locator('.actions').getByRole('button', { name: 'Place order' })],
    ['siblingsReordered', (p) => p.locator('#cancel + button')], ['testIdRemoved', (p) => p.getByTestId('pay')],
    ['lookAlikeElsewhere', (p) => p.getByTestId('pay')], ['identicalTwin', (p) => p.getByTestId('pay')],
    ['removed', (p) => p.getByTestId('pay')], ['hidden', (p) => p.getByTestId('pay')], ['hiddenAndRenamed', (p) => p.locator('#pay')],
    ['covered', (p) => p.getByTestId('pay')],
  ]
  const out: string[] = []
  for (const [m, loc] of cases) {
    const store = createMemoryHealStore()
    const p1 = await b.newPage(); const w1 = createHealingPage(p1, { store, testId: 't', probeTimeout: 1000 })
    await w1.goto(s.set('/a', CHECKOUT)); await loc(w1).click()
    const p2 = await b.newPage(); p2.setDefaultTimeout(3000)
    const logs: string[] = []
    const w2 = createHealingPage(p2, { store, testId: 't', probeTimeout: 1000, logger: { warn: (x) => logs.push(x) } })
    await w2.goto(s.set('/b', MUTATIONS[m](CHECKOUT)))
    try { await loc(w2).click(); out.push(`${m}: HEALED ${logs[0]?.match(/score [^:]*/)?.[0]} -> ${w2.heals[0]?.newLocator} clicked=${await p2.evaluate(() => document.body.dataset.clicked)}`) }
    catch (e) { out.push(e instanceof HealRefusedError ? `${m}: REFUSED ${e.reason} top=${e.candidates.slice(0, 2).map((c) => c.score.toFixed(2)).join('/')}` : `${m}: ERR ${String(e).slice(0, 80)}`) }
    await p1.close(); await p2.close()
  }
  console.log(out.join('\n'))
  await b.close(); await s.close()
})
