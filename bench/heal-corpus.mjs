// The heal corpus (test/heal/corpus, 47 before/after page pairs of real-world UI changes) scored in real Chromium
// through flakewatch's public page entry, against the built dist/. Baseline, on the same corpus in the same run:
// a plain similarity-only scorer (same ranking without name, context or intent; no check of found elements;
// threshold 0.5, margin 0.1 over every candidate). Also: the in-page ranking of a 5,000-element page.
// Prints one JSON line per figure ({ bench, metric, value, target?, ... }), as bench/run.mjs expects.
import { loadavg } from 'node:os'
import { launchChromium } from './lib/chromium.mjs'
import { runBaseline, runFlakewatch, summarize } from '../test/heal/corpus/run-corpus.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)

const fingerprint = await import('../dist/heal/fingerprint.js')
const similarity = await import('../dist/heal/similarity.js')
const { resolveHealSettings } = await import('../dist/heal/healer.js')
const { createHealingPage, createMemoryHealStore } = await import('../dist/playwright/page.js')

const line = (o) => console.log(JSON.stringify({ bench: 'heal-corpus', ...o }))
const round = (x) => +x.toFixed(3)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Invoice rows of 6 elements each, about `n` elements in all; the target's id is removed after learning. */
function bigPage(n) {
  const rows = []
  for (let i = 0, count = 6; count + 6 <= n; i++, count += 6) {
    const id = i === 400 ? ' id="approve-400"' : ''
    rows.push(
      `<tr><td>INV-${i}</td><td><a href="#i${i}">Open</a></td><td><button class="approve"${id}>Approve</button></td></tr>`,
    )
  }
  return `<!doctype html><html><head><title>Big</title></head><body><main><h1>Invoices</h1><table><tbody>${rows.join('')}</tbody></table></main></body></html>`
}

const browser = await launchChromium()
try {
  const raw = await browser.newPage()
  const load = +loadavg()[0].toFixed(1)

  const ours = summarize(await runFlakewatch({ raw, createHealingPage, createMemoryHealStore }))
  const base = summarize(await runBaseline({ raw, fingerprint, similarity }))
  const figures = [
    ['heal accuracy (cases with a right answer)', 'healAccuracy', '>= 0.90'],
    ['wrong heals (share of all cases)', 'wrongRate', '<= 0.02'],
    ['correct refusals (cases that must refuse)', 'refusalRate', '>= 0.85'],
  ]
  for (const [metric, key, target] of figures) {
    line({ metric, value: round(ours[key]), target, baseline: round(base[key]), cases: ours.cases, loadavg: load })
  }
  line({ metric: 'misses, flakewatch', value: ours.misses.length, cases: ours.misses })
  line({ metric: 'misses, similarity-only baseline', value: base.misses.length, cases: base.misses })

  // Ranking a 5,000-element page in the page (the cost a heal adds), beside a bare walk of the same page.
  await raw.setContent(bigPage(5000))
  const elements = await raw.evaluate(() => document.querySelectorAll('*').length)
  const settings = resolveHealSettings({})
  const { fingerprint: learned } = await raw
    .locator('#approve-400')
    .evaluate(fingerprint.capturePageFunction, settings.describe)
  await raw.evaluate(() => document.getElementById('approve-400').removeAttribute('id'))
  const args = { fingerprint: learned, weights: settings.weights, options: settings.describe, limit: 12 }
  const rank = []
  const walk = []
  let best
  for (let r = 0; r < ROUNDS; r++) {
    const ranked = await raw.evaluate(fingerprint.rankPageFunction, args)
    rank.push(ranked.elapsedMs)
    best = ranked.candidates[0]
    walk.push(
      await raw.evaluate(() => {
        const started = performance.now()
        let n = 0
        for (const el of document.querySelectorAll('*')) if (el.localName) n++
        return n > 0 ? performance.now() - started : 0
      }),
    )
  }
  if (best?.fingerprint.context?.item !== 'row|INV-400') {
    throw new Error(`heal-corpus ranked the wrong row first: ${JSON.stringify(best?.fingerprint.context)}`)
  }
  line({
    metric: '5k-element page ranked in the page, ms, median',
    value: round(median(rank)),
    target: '<= 100',
    min: round(Math.min(...rank)),
    elements,
    rounds: ROUNDS,
    loadavg: load,
  })
  line({ metric: 'baseline: bare querySelectorAll walk of the same page, ms, median', value: round(median(walk)) })
  line({ metric: 'ratio rank / bare walk (medians)', value: round(median(rank) / Math.max(median(walk), 0.05)) })
} finally {
  await browser.close()
}
