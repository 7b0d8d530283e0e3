// Heal scoring on a 5,000-element page in real Chromium, against the built dist/ (npx tsc -p tsconfig.build.json).
// Baseline, measured in the same page and run: a bare `querySelectorAll('*')` walk that reads each element's tag.
// Also measured: the design not taken, collecting every element's description in the page and scoring in Node.
// Prints one JSON line per figure ({ bench, metric, value, target?, ... }), as bench/run.mjs expects. Medians and
// minimums both: on a shared machine the minimum is the cost, the median what a test will see.
import { loadavg } from 'node:os'
import { launchChromium } from './lib/chromium.mjs'

const ELEMENTS = Number(process.env.BENCH_ELEMENTS ?? 5000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21)

const fingerprint = await import('../dist/heal/fingerprint.js')
const { DEFAULT_WEIGHTS, scoreCandidate, toSignals } = await import('../dist/heal/similarity.js')
const { resolveHealSettings } = await import('../dist/heal/healer.js')

/** Rows of a span, a link, a button and an input; the target button sits in the middle row. */
function bigPage(n, target) {
  const rows = []
  let count = 3 // html, body, main
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const min = (xs) => Math.min(...xs)
const round = (x) => +x.toFixed(2)

const browser = await launchChromium()
try {
  const page = await browser.newPage()
  await page.setContent(bigPage(ELEMENTS, Math.floor(ELEMENTS / 10)))
  const elements = await page.evaluate(() => document.querySelectorAll('*').length)

  const settings = resolveHealSettings({})
  const capture = await page.locator('#pay').evaluate(fingerprint.capturePageFunction, settings.describe)
  const learned = capture.fingerprint
  // The learned button loses its id and test id, as in a real heal.
  await page.evaluate(() => {
    const b = document.getElementById('pay')
    b.removeAttribute('id')
    b.removeAttribute('data-testid')
  })
  const args = { fingerprint: learned, weights: settings.weights, options: settings.describe, limit: settings.report }
  const collect = fingerprint.inPage((options, lib) => {
    const started = performance.now()
    const cache = new Map()
    const ctx = lib.createContextCache()
    const out = []
    for (const el of document.querySelectorAll('*')) out.push(lib.describeElement(el, options, cache, true, ctx))
    return { out, ms: performance.now() - started }
  }, fingerprint.DESCRIBE_HELPERS)

  const m = { walk: [], rank: [], rankWall: [], collect: [], collectWall: [], nodeScore: [] }
  let best
  for (let r = 0; r < ROUNDS; r++) {
    m.walk.push(
      await page.evaluate(() => {
        const started = performance.now()
        let n = 0
        for (const el of document.querySelectorAll('*')) if (el.localName) n++
        return n > 0 ? performance.now() - started : 0
      }),
    )
    let t0 = performance.now()
    const ranked = await page.evaluate(fingerprint.rankPageFunction, args)
    m.rankWall.push(performance.now() - t0)
    m.rank.push(ranked.elapsedMs)
    best = ranked.candidates[0]

    t0 = performance.now()
    const collected = await page.evaluate(collect, settings.describe)
    m.collectWall.push(performance.now() - t0)
    m.collect.push(collected.ms)
    t0 = performance.now()
    const fp = toSignals(learned)
    for (const d of collected.out) scoreCandidate(fp, toSignals(d), DEFAULT_WEIGHTS)
    m.nodeScore.push(performance.now() - t0)
  }
  if (best?.description !== 'button.btn.btn-primary "Place order"') {
    throw new Error(`heal bench ranked the wrong element first: ${JSON.stringify(best)}`)
  }

  const line = (o) => console.log(JSON.stringify({ bench: 'heal-scoring', ...o }))
  line({
    metric: 'in-page collect + score ms, median',
    value: round(median(m.rank)),
    target: '<= 100',
    min: round(min(m.rank)),
    elements,
    rounds: ROUNDS,
    loadavg: +loadavg()[0].toFixed(1),
  })
  line({ metric: 'same, wall time incl. the round trip, median', value: round(median(m.rankWall)) })
  line({
    metric: 'baseline: bare querySelectorAll walk ms, median',
    value: round(median(m.walk)),
    min: round(min(m.walk)),
  })
  line({ metric: 'ratio score / bare walk (medians)', value: round(median(m.rank) / Math.max(median(m.walk), 0.05)) })
  line({
    metric: 'not taken: describe all in page, transfer, score in Node, ms, median',
    value: round(median(m.collectWall) + median(m.nodeScore)),
    inPageCollectMs: round(median(m.collect)),
    nodeScoreMs: round(median(m.nodeScore)),
  })
  line({ metric: 'best candidate score (target button, id and test id removed)', value: round(best.score) })
} finally {
  await browser.close()
}
