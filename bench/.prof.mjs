import { chromium } from 'playwright-core'
const fpm = await import('../dist/heal/fingerprint.js')
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu'] })
const page = await b.newPage()
let rows=[]; for (let i=0;i<1000;i++) rows.push(`<div class="row r${i%7}"><span class="label">Item ${i} of the catalogue</span><a href="#i${i}" class="link">Open item ${i}</a><button type="button" class="btn b${i%5}" data-row="${i}">Action ${i}</button><input name="q${i}" placeholder="Quantity"></div>`)
await page.setContent(`<html><body><main>${rows.join('\n')}</main></body></html>`)
const prof = fpm.inPage((o) => {
  const all = [...document.querySelectorAll('*')]
  const t = {}
  const time = (name, f) => { const s = performance.now(); for (const el of all) f(el); t[name] = +(performance.now() - s).toFixed(1) }
  time('rect', (el) => el.getBoundingClientRect())
  time('text', (el) => elementText(el, 80))
  time('textContent', (el) => (el.textContent ?? '').slice(0, 320).replace(/\s+/g, ' ').trim())
  const cache = new Map()
  time('path', (el) => ancestorPath(el, cache))
  time('siblings', (el) => siblingTags(el, 5))
  time('attrs', (el) => { const a = {}; for (const x of el.attributes) a[x.name] = x.value.slice(0, 100) })
  time('describe', (el) => describeElement(el, o, new Map()))
  return t
}, [fpm.elementText, fpm.pathToken, fpm.ancestorPath, fpm.siblingTags, fpm.describeElement, fpm.cssPathOf])
for (let i = 0; i < 3; i++) console.log(await page.evaluate(prof, { testIdAttribute: 'data-testid', textMax: 80, siblingWindow: 5 }))
await b.close()
