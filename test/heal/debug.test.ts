import { test } from 'vitest'
import { launchChromium, servePages } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import { createHealingPage } from '../../src/playwright/page.js'
test('debug', async () => {
  const b = await launchChromium(); const s = await servePages()
  const store = createMemoryHealStore()
  const p1 = await b.newPage(); const w1 = createHealingPage(p1, { store, testId: 't', probeTimeout: 400 })
  await w1.goto(s.set('/a', CHECKOUT)); await w1.locator('#pay').click()
  const p2 = await b.newPage(); p2.setDefaultTimeout(1500)
  const logs: string[] = []
  const w2 = createHealingPage(p2, { store, testId: 't', probeTimeout: 400, logger: { warn: (m) => logs.push(m) } })
  await w2.goto(s.set('/b', MUTATIONS.hiddenAndRenamed(CHECKOUT)))
  const t0 = Date.now()
  try { await w2.locator('#pay').evaluate(() => 1, undefined, { timeout: 400 }) } catch (e) { console.log('probe', (e as Error).name, Date.now() - t0) }
  await w2.locator('#pay').click().catch((e: Error) => console.log('click', e.name, e.message.slice(0, 500), Date.now() - t0, logs))
  await b.close(); await s.close()
})
