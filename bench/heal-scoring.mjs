// Heal scoring on a 5,000-element page in real Chromium, against the built dist/ (npx tsc -p tsconfig.build.json).
// Baseline, measured in the same page and run: a bare `querySelectorAll('*')` walk that reads each element's tag.
// Also measured: the alternative design, collecting compact element data in the page and scoring it in Node.
// Prints one JSON line per figure ({ bench, metric, value, target?, ... }), as bench/run.mjs expects.
import { chromium } from 'playwright-core'

const ELEMENTS = Number(process.env.BENCH_ELEMENTS ?? 5000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)

const { capturePageFunction, rankPageFunction, inPage, describeElement, elementText, pathToken, ancestorPath, siblingTags, boxOf, cssPathOf } =
  await import('../dist/heal/fingerprint.js')
const { DEFAULT_WEIGHTS, scoreCandidate, toSignals } = await import('../dist/heal/similarity.js')
const { resolveHealSettings } = await import('../dist/heal/healer.js')

/** Rows of span, link, button and input; the target button sits in the middle. */
function bigPage(n, target) {
  const rows = []
  let count = 2 // html, body
  for (let i = 0; count + 5 <= n; i++) {
    const button =
      i === target
        ? `<button type="submit" id="pay" name="pay" class="btn btn-primary" data-testid="pay">Place order</button>`
        : `<button type="button" class="btn b${i % 5}" data-row="${i}">Action ${i}</button>`
    rows.push(
      `<div class="row r${i % 7}"><span class="label">Item ${i} of the catalogue</span>` +
        `<a href="#i${i}" class="link">Open item ${i}</a>${button}<input name="q${i}" placeholder="Quantity"></div>`,
    )
    count += 5
  }
  return `<!doctype html><html><head><title>Big</title></head><body><main>${rows.join('\n')}</main></body></html>`
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const round = (x) => +x.toFixed(2)

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
})
try {
  const page = await browser.newPage()
  const rowsCount = Math.floor((ELEMENTS - 3) / 5)
  await page.setContent(bigPage(ELEMENTS, Math.floor(rowsCount / 2)))
  const elements = await page.evaluate(() => document.querySelectorAll('*').length)

  const settings = resolveHealSettings({})
  const { fingerprint } = await page.locator('#pay').evaluate(capturePageFunction, settings.describe)
  // The learned button loses its id and test id, as in a real heal.
  await page.evaluate(() => {
    const b = document.getElementById('pay')
    b.removeAttribute('id')
    b.removeAttribute('data-testid')
  })
  const args = { fingerprint, weights: settings.weights, options: settings.describe, limit: settings.report }

  const walk = []
  const rankInPage = []
  const rankWall = []
  const collectInPage = []
  const collectWall = []
  const scoreNode = []
  let best
  const collect = inPage(
    (options) => {
      const started = performance.now()
      const cache = new Map()
      const out = []
      for (const el of document.querySelectorAll("*")) out.push(describeElement(el, options, cache, true))
      return { out, ms: performance.now() - started }
    },
    [elementText, pathToken, ancestorPath, siblingTags, boxOf, describeElement, cssPathOf],
  )
  for (let r = 0; r < ROUNDS; r++) {
    walk.push(
      await page.evaluate(() => {
        const started = performance.now()
        let n = 0
        for (const el of document.querySelectorAll('*')) if (el.localName.length > 0) n++
        return performance.now() - started + n * 0
      }),
    )
    let t0 = performance.now()
    const ranked = await page.evaluate(rankPageFunction, args)
    rankWall.push(performance.now() - t0)
    rankInPage.push(ranked.elapsedMs)
    best = ranked.candidates[0]

    // The alternative: ship every element's description to Node and score there.
    t0 = performance.now()
    const collected = await page.evaluate(collect, settings.describe)
    collectWall.push(performance.now() - t0)
    collectInPage.push(collected.ms)
    t0 = performance.now()
    const fp = toSignals(fingerprint)
    let top = 0
    for (const d of collected.out) top = Math.max(top, scoreCandidate(fp, toSignals(d), DEFAULT_WEIGHTS).score)
    scoreNode.push(performance.now() - t0)
  }
  if (!best || best.description !== 'button.btn.btn-primary "Place order"') {
    throw new Error(`heal bench ranked the wrong element first: ${JSON.stringify(best)}`)
  }

  const line = (o) => console.log(JSON.stringify({ bench: 'heal-scoring', ...o }))
  const rank = median(rankInPage)
  const bare = median(walk)
  line({ metric: 'in-page collect + score ms (median)', value: round(rank), target: '<= 100', elements, rounds: ROUNDS })
  line({ metric: 'in-page collect + score ms, wall incl. round trip', value: round(median(rankWall)) })
  line({ metric: 'baseline: bare querySelectorAll walk ms', value: round(bare) })
  line({ metric: 'ratio score / bare walk', value: round(rank / Math.max(bare, 0.01)) })
  line({ metric: 'alternative: in-page collect ms', value: round(median(collectInPage)) })
  line({
    metric: 'alternative: collect + transfer + score in Node ms, wall',
    value: round(median(collectWall) + median(scoreNode)),
    nodeScoreMs: round(median(scoreNode)),
  })
  line({ metric: 'best candidate score', value: round(best.score) })
} finally {
  await browser.close()
}
