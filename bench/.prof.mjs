import { chromium } from 'playwright-core'
const fpm = await import('../dist/heal/fingerprint.js')
const sim = await import('../dist/heal/similarity.js')
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu'] })
const page = await b.newPage()
let rows=[]; for (let i=0;i<1000;i++) rows.push(`<div class="row r${i%7}"><span class="label">Item ${i} of the catalogue</span><a href="#i${i}" class="link">Open item ${i}</a><button type="button" class="btn b${i%5}" data-row="${i}">Action ${i}</button><input name="q${i}" placeholder="Quantity"></div>`)
rows[500] = rows[500].replace('<button type="button"', '<button type="submit" id="pay" data-testid="pay" name="pay"')
await page.setContent(`<html><body><main>${rows.join('\n')}</main></body></html>`)
const o = { testIdAttribute: 'data-testid', textMax: 80, siblingWindow: 5 }
const { fingerprint } = await page.locator('#pay').evaluate(fpm.capturePageFunction, o)
const prof = fpm.inPage((fpr, lib) => {
  const o = { testIdAttribute: 'data-testid', textMax: 80, siblingWindow: 5 }
  const all = [...document.querySelectorAll('*')]
  const t = {}
  const w = { tag: 1, id: 2, text: 3, classes: 1, attributes: 2, path: 1, siblings: 0.5, position: 0.5 }
  const fp = lib.toSignals(fpr)
  const time = (name, f) => { const s = performance.now(); for (const el of all) f(el); t[name] = +(performance.now() - s).toFixed(1) }
  let cache = new Map()
  time('describe', (el) => describeElement(el, o, cache, false))
  cache = new Map()
  time('describe+sig', (el) => lib.toSignals(describeElement(el, o, cache, false)))
  cache = new Map()
  let n = 0
  time('describe+sig+ceil', (el) => { if (lib.scoreCeiling(fp, lib.toSignals(describeElement(el, o, cache, false)), w) > 0.5) n++ })
  t.above = n
  cache = new Map()
  time('describe+sig+score', (el) => lib.scoreCandidate(fp, lib.toSignals(describeElement(el, o, cache, false)), w))
  time('rect', (el) => boxOf(el))
  return t
}, [fpm.elementText, fpm.pathToken, fpm.ancestorPath, fpm.siblingTags, fpm.boxOf, fpm.describeElement, sim.levenshtein, sim.textSimilarity, sim.jaccard, sim.lcsLength, sim.sequenceSimilarity, sim.positionSimilarity, sim.toSignals, sim.addStructuralSignals, sim.scoreCeiling, sim.scoreCandidate])
for (let i = 0; i < 5; i++) console.log(JSON.stringify(await page.evaluate(prof, fingerprint)))
const args = { fingerprint, weights: sim.DEFAULT_WEIGHTS, options: o, limit: 5 }
for (let i = 0; i < 5; i++) console.log((await page.evaluate(fpm.rankPageFunction, args)).elapsedMs)
await b.close()
