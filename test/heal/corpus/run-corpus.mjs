// Runs the heal corpus in one Chromium page, through flakewatch's public page entry exactly as a test would use it
// (learn on the "before" page, act on the "after" page), and beside it a plain similarity-only baseline: the same
// in-page ranking without name, context or intent, no check of elements that are found, the old threshold 0.5
// and a margin over every candidate, hidden ones included. Shared by test/heal/corpus.test.ts and
// bench/heal-corpus.mjs; the caller hands in the modules (src under vitest, dist in the bench).
import { CASES } from './cases.mjs'

export { CASES }

/** Applies the locator steps of a case to a page. */
export function locate(page, steps) {
  let l = page
  for (const [method, ...args] of steps) l = l[method](...args)
  return l
}

/** Did the action reach the expected element (`correct`), another one (`wrong`), or nothing (`refused`)? */
async function judge(raw, expected) {
  return raw.evaluate((sel) => {
    const hit = window.__hit
    if (!hit) return 'refused'
    if (sel === 'refuse') return 'wrong'
    return hit === document.querySelector(sel) ? 'correct' : 'wrong'
  }, expected)
}

const mark = (el) => {
  window.__hit = el
}

/**
 * @param {object} deps
 * @param {import('playwright-core').Page} deps.raw one page, reused for every case
 * @param {Function} deps.createHealingPage
 * @param {Function} deps.createMemoryHealStore
 * @param {object} [opts]
 * @param {number} [opts.timeout] action timeout on the after page, ms
 * @param {string[]} [opts.only] case ids
 * @param {object[]} [opts.cases] the cases to run, default the corpus (`HELD_OUT` for the held-out pairs)
 * @param {object} [opts.settings] heal settings for every case (`report`, `threshold`, …)
 */
export async function runFlakewatch(deps, opts = {}) {
  const timeout = opts.timeout ?? 1500
  const out = []
  for (const c of (opts.cases ?? CASES).filter((k) => !opts.only || opts.only.includes(k.id))) {
    const store = deps.createMemoryHealStore()
    const logs = []
    const options = {
      store,
      testId: `corpus::${c.id}`,
      probeTimeout: Math.min(500, timeout),
      logger: { warn: (m) => logs.push(m) },
      ...opts.settings,
    }
    deps.raw.setDefaultTimeout(10_000)
    await deps.raw.setContent(c.before, { timeout: 60_000 })
    await locate(deps.createHealingPage(deps.raw, options), c.locator).evaluate(() => 0)
    await deps.raw.setContent(c.after, { timeout: 60_000 })
    // The window outlives setContent: forget the previous case's hit.
    await deps.raw.evaluate(() => (window.__hit = null))
    deps.raw.setDefaultTimeout(timeout)
    const page = deps.createHealingPage(deps.raw, options)
    const started = Date.now()
    let error = null
    try {
      await locate(page, c.locator).evaluate(mark)
    } catch (e) {
      error = e
    }
    const elapsedMs = Date.now() - started
    out.push({
      id: c.id,
      category: c.category,
      expect: c.expect,
      outcome: await judge(deps.raw, c.expect),
      error,
      elapsedMs,
      logs,
    })
  }
  return out
}

/**
 * The baseline: similarity only. Learns the same fingerprint without role, name and context, acts on whatever
 * the locator finds, and heals by score, threshold 0.5 and margin 0.1 when it finds nothing.
 * @param {object} deps
 * @param {import('playwright-core').Page} deps.raw
 * @param {object} deps.fingerprint the heal/fingerprint module
 * @param {object} deps.similarity the heal/similarity module
 */
export async function runBaseline(deps, opts = {}) {
  const { capturePageFunction, rankPageFunction, DEFAULT_DESCRIBE } = deps.fingerprint
  const { DEFAULT_WEIGHTS } = deps.similarity
  const weights = { ...DEFAULT_WEIGHTS, name: 0, context: 0 }
  const out = []
  for (const c of (opts.cases ?? CASES).filter((k) => !opts.only || opts.only.includes(k.id))) {
    await deps.raw.setContent(c.before, { timeout: 60_000 })
    const { fingerprint } = await locate(deps.raw, c.locator).evaluate(capturePageFunction, { ...DEFAULT_DESCRIBE })
    delete fingerprint.role
    delete fingerprint.name
    delete fingerprint.context
    await deps.raw.setContent(c.after, { timeout: 60_000 })
    await deps.raw.evaluate(() => (window.__hit = null))
    const started = Date.now()
    const found = locate(deps.raw, c.locator)
    const count = await found.count()
    if (count === 1) {
      await found.evaluate(mark)
    } else if (count === 0) {
      const rank = await deps.raw.evaluate(rankPageFunction, {
        fingerprint,
        weights,
        options: { ...DEFAULT_DESCRIBE },
        limit: 5,
      })
      // The plain rule: the best of all candidates, hidden ones included, by threshold and margin.
      const [best, runnerUp] = rank.candidates
      const heals = best && best.score >= 0.5 && best.visible && (!runnerUp || best.score - runnerUp.score >= 0.1)
      if (heals) await deps.raw.locator(best.selector).evaluate(mark)
    }
    const elapsedMs = Date.now() - started
    out.push({
      id: c.id,
      category: c.category,
      expect: c.expect,
      outcome: await judge(deps.raw, c.expect),
      error: null,
      elapsedMs,
      logs: [],
    })
  }
  return out
}

/**
 * The corpus figures: heal accuracy over the cases with a right answer, wrong actions over all cases, correct
 * refusals over the cases that must refuse.
 */
export function summarize(results) {
  const healable = results.filter((r) => r.expect !== 'refuse')
  const refusable = results.filter((r) => r.expect === 'refuse')
  const ratio = (n, d) => (d === 0 ? 0 : n / d)
  return {
    cases: results.length,
    healAccuracy: ratio(healable.filter((r) => r.outcome === 'correct').length, healable.length),
    wrongRate: ratio(results.filter((r) => r.outcome === 'wrong').length, results.length),
    refusalRate: ratio(refusable.filter((r) => r.outcome === 'refused').length, refusable.length),
    misses: results
      .filter((r) => (r.expect === 'refuse' ? r.outcome !== 'refused' : r.outcome !== 'correct'))
      .map((r) => `${r.id}: ${r.outcome}`),
  }
}
