import { it } from 'vitest'
import { ensureWebBuilt, launchChromium, screenshot, startSeededServer } from './helpers.js'

it('looks', async () => {
  ensureWebBuilt()
  const s = await startSeededServer()
  const b = await launchChromium()
  const page = await b.newPage({ viewport: { width: 1440, height: 900 } })
  page.on('console', (m) => console.log('console', m.type(), m.text()))
  page.on('pageerror', (e) => console.log('pageerror', e.message))
  for (const [name, path] of [['leaderboard', '/'], ['heatmap', '/heatmap'], ['trends', '/trends'], ['quarantine', '/quarantine'], ['kiosk', '/kiosk'], ['test', '/tests/' + encodeURIComponent('unit::mod::flaky')]]) {
    await page.goto(s.url + path)
    await page.waitForTimeout(700)
    console.log(await screenshot(page, 'scratch-' + name))
  }
  await b.close()
  await s.close()
})
