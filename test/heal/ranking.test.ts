import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as fingerprint from '../../src/heal/fingerprint.js'
import type { RankArgs } from '../../src/heal/fingerprint.js'
import { resolveHealSettings } from '../../src/heal/healer.js'
import * as similarity from '../../src/heal/similarity.js'
import type { ElementFingerprint } from '../../src/heal/similarity.js'
import { launchChromium } from './helpers/browser.js'
import { HELD_OUT, HELD_OUT_2 } from './corpus/held-out.mjs'
import { CASES, locate } from './corpus/run-corpus.mjs'

// The in-page ranking skips the costly steps for elements whose ceiling cannot beat the list it holds, reads the
// cheap signals straight from the DOM, and knows early that an element without a role has no name. None of that
// may change what it reports: on every page of the heal corpus, before and after the change, its list equals the
// list from describing and scoring every element of the page, and the right element is never left out.

const LIMIT = 12
let browser: Browser
let page: Page

beforeAll(async () => {
  browser = await launchChromium()
  page = await browser.newPage()
})

afterAll(async () => {
  await browser?.close()
})

interface Exhaustive {
  /** The best `limit` elements by score, ties in document order, as `[score, css path]`. */
  top: Array<[number, string]>
  /** Elements whose DOM-read identity differs from `identityScore` on their full description. */
  identityMismatches: string[]
  /** The right element's css path, or null for a case that must refuse. */
  expected: string | null
}

/** Describes and scores every element the ranking considers, in the page, with no pruning. */
const scoreEverything = fingerprint.inPage(
  (arg: RankArgs & { expect: string }, lib: fingerprint.HelperLib): Exhaustive => {
    // Through `lib`: the test module's own imports do not exist in the page.
    const f = lib as unknown as typeof fingerprint
    const s = lib as unknown as typeof similarity
    const skip = ['html', 'head', 'body', 'script', 'style', 'meta', 'link', 'title', 'base', 'noscript', 'template']
    const fp = s.toSignals(arg.fingerprint)
    // As the ranking does: a page in another language than the learned element compares no text or name.
    const weights = s.weightsAcross(arg.fingerprint, { lang: f.langOf(document.documentElement) }, arg.weights)
    const learned = f.learnedIdentityOf(arg.fingerprint)
    const cache = new Map<Element, string[]>()
    const ctx = f.createContextCache()
    const scored: Array<[number, string]> = []
    const identityMismatches: string[] = []
    for (const el of document.querySelectorAll('*')) {
      if (skip.includes(el.localName)) continue
      const fast = f.identityOf(el, fp, learned, weights, s.textSimilarity)
      const full = s.identityScore(fp, s.toSignals(f.describeIdentity(el, arg.options)), weights)
      if (JSON.stringify(fast) !== JSON.stringify(full)) identityMismatches.push(f.cssPathOf(el))
      const d = f.describeElement(el, arg.options, cache, true, ctx)
      scored.push([s.scoreCandidate(fp, s.toSignals(d), weights).score, f.cssPathOf(el)])
    }
    // A stable sort: equal scores keep document order, as in the ranking.
    scored.sort((a, b) => b[0] - a[0])
    const right = arg.expect === 'refuse' ? null : document.querySelector(arg.expect)
    return { top: scored.slice(0, arg.limit), identityMismatches, expected: right ? f.cssPathOf(right) : null }
  },
  [
    ...fingerprint.DESCRIBE_HELPERS,
    fingerprint.learnedIdentityOf,
    fingerprint.identityOf,
    similarity.levenshtein,
    similarity.textSimilarity,
    similarity.jaccard,
    similarity.lcsLength,
    similarity.sequenceSimilarity,
    similarity.positionSimilarity,
    similarity.contextSimilarity,
    similarity.toSignals,
    similarity.identityScore,
    similarity.textOf,
    similarity.addTextScore,
    similarity.addNameScore,
    similarity.addTreeScore,
    similarity.addContextScore,
    similarity.addPositionScore,
    similarity.finalScore,
    similarity.scoreCandidate,
    similarity.translatedPair,
    similarity.weightsAcross,
  ],
)

/**
 * The ranking, as the first corpus ranked (the best `LIMIT`) and as a heal ranks (the best 2 whatever their score,
 * then every element at or above the veto floor), and the exhaustive list, scored once, for one fingerprint.
 */
async function compare(fp: ElementFingerprint, weights: similarity.Weights, expected: string, floor: number) {
  const settings = resolveHealSettings({})
  const args = { fingerprint: fp, weights, options: settings.describe }
  const ranked = await page.evaluate(fingerprint.rankPageFunction, { ...args, limit: LIMIT })
  const wide = await page.evaluate(fingerprint.rankPageFunction, { ...args, limit: 400, keep: 2, floor })
  const all = await page.evaluate(scoreEverything, { ...args, limit: 400, expect: expected })
  const pairs = (r: typeof ranked) => r.candidates.map((c) => [c.score, c.selector] as [number, string])
  return { ranked: pairs(ranked), wide: pairs(wide), all }
}

describe('on every page of the heal corpus, the pruned ranking reports what scoring every element reports', () => {
  test.for([...CASES, ...HELD_OUT, ...HELD_OUT_2].map((c) => [c.id, c] as const))('%s', async ([, c]) => {
    await page.setContent(c.before)
    const learned = await (locate(page, c.locator) as Locator).evaluate(
      fingerprint.capturePageFunction,
      resolveHealSettings({}).describe,
    )
    // As flakewatch learns it (role, name, context), and as the similarity-only baseline does (without them).
    const plain: ElementFingerprint = { ...learned.fingerprint }
    delete plain.role
    delete plain.name
    delete plain.context
    const variants: Array<[ElementFingerprint, similarity.Weights]> = [
      [learned.fingerprint, similarity.DEFAULT_WEIGHTS],
      [plain, { ...similarity.DEFAULT_WEIGHTS, name: 0, context: 0 }],
    ]
    for (const [html, expected] of [
      [c.before, 'refuse'],
      [c.after, c.expect],
    ] as const) {
      await page.setContent(html)
      for (const [fp, weights] of variants) {
        const floor = similarity.vetoFloor({ threshold: 0.6, margin: 0.1, weights })
        const { ranked, wide, all } = await compare(fp, weights, expected, floor)
        expect(all.identityMismatches).toEqual([])
        expect(ranked).toEqual(all.top.slice(0, LIMIT))
        // Said outright: when scoring everything puts the right element on the list, the ranking has it too.
        const place = all.top.findIndex(([, selector]) => selector === all.expected)
        if (place >= 0 && place < LIMIT) expect(ranked[place]![1]).toBe(all.expected)
        // As a heal ranks: the best 2 whatever their score, then every element at or above the veto floor.
        expect(wide).toEqual(all.top.filter(([score], i) => i < 2 || score >= floor))
      }
    }
  })
})
