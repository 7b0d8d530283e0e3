/**
 * In-page side of healing: fingerprint capture and candidate ranking. Every function here except `inPage` runs in
 * the browser, shipped as source text, so each is a self-contained function declaration that reaches nothing
 * outside itself but the helpers `inPage` ships with it. No module constants, no imports inside their bodies.
 */
import { InternalError } from '../errors.js'
import {
  addTreeScore,
  completeScore,
  identityScore,
  jaccard,
  lcsLength,
  levenshtein,
  positionSimilarity,
  scoreCeiling,
  sequenceSimilarity,
  textSimilarity,
  toSignals,
} from './similarity.js'
import type { Breakdown, ElementFingerprint, RankedCandidate, Weights } from './similarity.js'

/** How elements are described, shared by capture and ranking so that both sides see the same thing. */
export interface DescribeOptions {
  /** The attribute `getByTestId` reads. */
  testIdAttribute: string
  /** Longest text kept, in characters. Bounds Levenshtein's cost on big containers. */
  textMax: number
  /** Siblings kept on each side of the element. */
  siblingWindow: number
}

export const DEFAULT_DESCRIBE: Readonly<DescribeOptions> = Object.freeze({
  testIdAttribute: 'data-testid',
  textMax: 80,
  siblingWindow: 5,
})

/** A way to find the healed element again, most robust first. Code is generated from it in Node. */
export type LocatorSuggestion =
  | { kind: 'testid'; value: string }
  | { kind: 'id'; value: string }
  | { kind: 'role'; role: string; name: string }
  | { kind: 'css'; value: string }

/** One ranked element, as the page reports it. */
export interface PageCandidate extends RankedCandidate {
  /** A CSS selector unique in the page at ranking time, to act on the element. */
  selector: string
  /** A short human description: `button#pay.btn "Pay now"`. */
  description: string
}

export interface RankArgs {
  fingerprint: ElementFingerprint
  weights: Weights
  options: DescribeOptions
  /** How many of the best candidates to report. */
  limit: number
}

export interface RankResult {
  candidates: PageCandidate[]
  /** Ways to address the best candidate, most robust first (empty when there is none). */
  suggestions: LocatorSuggestion[]
  /** Elements scored. */
  scanned: number
  /** Time spent in the page, collection and scoring together. */
  elapsedMs: number
}

/** The scoring functions `rankElements` reaches through its `lib` argument. */
interface ScoringLib {
  toSignals: typeof toSignals
  identityScore: typeof identityScore
  addTreeScore: typeof addTreeScore
  scoreCeiling: typeof scoreCeiling
  completeScore: typeof completeScore
}

/** What a successful action captures: the fingerprint and where the element was. */
export interface Capture {
  fingerprint: ElementFingerprint
  selector: string
}

/** Every shipped helper by name, handed to `main` as its last argument. */
export type HelperLib = Record<string, (...args: never[]) => unknown>

/**
 * Bundles `main` with the helper functions it calls into one function Playwright can evaluate. Playwright sends a
 * page function as `String(fn)`, so the returned function's `toString` yields a single closure that declares every
 * helper and then calls `main`. Helpers from other modules must be reached through the `lib` argument `main` gets
 * last: a module loader may rewrite direct references to imports (Vite's SSR transform does), and those rewritten
 * names do not exist in the page. Called in Node, the returned function runs `main` with the real helpers.
 * @example await page.evaluate(inPage(describeAll, DESCRIBE_HELPERS), options)
 */
export function inPage<A extends unknown[], R>(
  main: (...args: [...A, HelperLib]) => R,
  helpers: ReadonlyArray<(...args: never[]) => unknown>,
): (...args: A) => R {
  const lib: HelperLib = {}
  const sources = helpers.map((h) => {
    const src = h.toString()
    // A bundler that renamed or wrapped a helper would break the calls between them: fail loudly, not in the page.
    if (!h.name || !src.startsWith(`function ${h.name}(`)) {
      throw new InternalError(`heal helper ${h.name || '(anonymous)'} is not a plain function declaration`)
    }
    lib[h.name] = h
    return src
  })
  const names = helpers.map((h) => h.name).join(', ')
  const source = `(...args) => {\n${sources.join('\n')}\nreturn (${main.toString()})(...args, { ${names} })\n}`
  const fn = (...args: A): R => main(...args, lib)
  Object.defineProperty(fn, 'toString', { value: () => source })
  return fn
}

/**
 * Normalised, bounded text of an element: whitespace collapsed and trimmed. Native `textContent` beats walking
 * text nodes by 4x on a 5,000-element page; the cut before the regex keeps a page-sized container cheap.
 */
export function elementText(el: Element, max: number): string {
  const tag = el.localName
  if (tag === 'input' || tag === 'script' || tag === 'style' || tag === 'noscript' || tag === 'template') return ''
  return (el.textContent ?? '')
    .slice(0, max * 4)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max)
}

/** `tag` or `tag#id`: ancestors' ids are stable enough to tell two look-alike forms apart. */
export function pathToken(el: Element): string {
  return el.id ? el.localName + '#' + el.id : el.localName
}

/** Ancestors from the root to the parent. `cache` shares one array between siblings during a full scan. */
export function ancestorPath(el: Element, cache: Map<Element, string[]> | null): string[] {
  const parent = el.parentElement
  if (!parent) return []
  const known = cache ? cache.get(parent) : undefined
  if (known) return known
  const path = ancestorPath(parent, cache).concat(pathToken(parent))
  if (cache) cache.set(parent, path)
  return path
}

export function siblingTags(el: Element, window: number): string[] {
  const before: string[] = []
  for (let s = el.previousElementSibling; s && before.length < window; s = s.previousElementSibling) {
    before.push(s.localName)
  }
  before.reverse()
  before.push('*')
  for (let s = el.nextElementSibling, n = 0; s && n < window; s = s.nextElementSibling, n++) before.push(s.localName)
  return before
}

/** The element's box in page coordinates, or null when it has no layout box. */
export function boxOf(el: Element): ElementFingerprint['box'] {
  const r = el.getBoundingClientRect()
  if (r.width <= 0 || r.height <= 0) return null
  const view = el.ownerDocument.defaultView
  const x = r.left + (view ? view.scrollX : 0)
  const y = r.top + (view ? view.scrollY : 0)
  return { x, y, width: r.width, height: r.height }
}

/** Describes an element without the tree walk: no path, no siblings, no box. */
export function describeIdentity(el: Element, o: DescribeOptions): ElementFingerprint {
  const attrs: Record<string, string> = {}
  const list = el.attributes
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!
    if (a.name !== 'id' && a.name !== 'class') attrs[a.name] = a.value.slice(0, 100)
  }
  const classes: string[] = []
  for (let i = 0; i < el.classList.length; i++) classes.push(el.classList[i]!)
  return {
    tag: el.localName,
    id: el.id,
    text: elementText(el, o.textMax),
    classes,
    attrs,
    path: [],
    siblings: [],
    box: null,
    testId: el.getAttribute(o.testIdAttribute),
  }
}

/** Describes an element fully. `cache` shares ancestor paths between siblings during a scan. */
export function describeElement(
  el: Element,
  o: DescribeOptions,
  cache: Map<Element, string[]> | null,
  measure: boolean,
): ElementFingerprint {
  const fp = describeIdentity(el, o)
  fp.path = ancestorPath(el, cache)
  fp.siblings = siblingTags(el, o.siblingWindow)
  if (measure) fp.box = boxOf(el)
  return fp
}

/** Playwright's notion of visible: a non-empty box and not `visibility: hidden` (opacity does not count). */
export function isElementVisible(el: Element): boolean {
  const r = el.getBoundingClientRect()
  if (r.width <= 0 || r.height <= 0) return false
  if (typeof el.checkVisibility === 'function') return el.checkVisibility({ visibilityProperty: true })
  const view = el.ownerDocument.defaultView
  return !view || view.getComputedStyle(el).visibility === 'visible'
}

export function isElementEnabled(el: Element): boolean {
  if (el.matches(':disabled')) return false
  return !el.closest('[aria-disabled="true"]')
}

/**
 * A selector unique by construction: `tag:nth-of-type(n)` steps up to the nearest ancestor with a unique id (or to
 * `body`). Anchoring on an id, rather than stopping at the first unique suffix, keeps it stable as a suggestion.
 */
export function cssPathOf(el: Element): string {
  const doc = el.ownerDocument
  const parts: string[] = []
  for (let e: Element | null = el; e && e !== doc.documentElement; e = e.parentElement) {
    if (e.id && doc.querySelectorAll('#' + CSS.escape(e.id)).length === 1) {
      parts.unshift('#' + CSS.escape(e.id))
      break
    }
    let part = CSS.escape(e.localName)
    const parent: Element | null = e.parentElement
    if (parent && e !== doc.body) {
      let index = 0
      let same = 0
      for (let c: Element | null = parent.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName !== e.localName) continue
        same++
        if (c === e) index = same
      }
      if (same > 1) part += ':nth-of-type(' + index + ')'
    }
    parts.unshift(part)
  }
  return parts.join(' > ')
}

/** The implicit ARIA role for the common interactive elements, or the explicit one. Enough for suggestions. */
export function ariaRoleOf(el: Element): string {
  const explicit = el.getAttribute('role')
  if (explicit) return explicit.trim().split(/\s+/)[0] ?? ''
  const tag = el.localName
  if (tag === 'button') return 'button'
  if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : ''
  if (tag === 'textarea') return 'textbox'
  if (tag === 'select') {
    const select = el as HTMLSelectElement
    return select.multiple || select.size > 1 ? 'listbox' : 'combobox'
  }
  if (/^h[1-6]$/.test(tag)) return 'heading'
  if (tag === 'img') return el.getAttribute('alt') === '' ? 'presentation' : 'img'
  if (tag === 'input') {
    const type = (el.getAttribute('type') ?? 'text').toLowerCase()
    if (type === 'button' || type === 'submit' || type === 'reset' || type === 'image') return 'button'
    if (type === 'checkbox' || type === 'radio') return type
    if (type === 'range') return 'slider'
    if (type === 'number') return 'spinbutton'
    if (type === 'search') return 'searchbox'
    if (type === 'text' || type === 'email' || type === 'tel' || type === 'url' || type === '') return 'textbox'
  }
  return ''
}

/** A simplified accessible name: aria-label, aria-labelledby, labels, value of button-like inputs, alt, text. */
export function accessibleNameOf(el: Element): string {
  const squash = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim()
  const label = squash(el.getAttribute('aria-label'))
  if (label) return label
  const by = el.getAttribute('aria-labelledby')
  if (by) {
    const text = by
      .split(/\s+/)
      .map((id) => squash(el.ownerDocument.getElementById(id)?.textContent))
      .filter(Boolean)
      .join(' ')
    if (text) return text
  }
  const tag = el.localName
  if (tag === 'input' || tag === 'select' || tag === 'textarea') {
    const labels = (el as HTMLInputElement).labels
    if (labels && labels.length > 0) return squash(labels[0]!.textContent)
    const type = (el.getAttribute('type') ?? '').toLowerCase()
    if (type === 'submit' || type === 'button' || type === 'reset') return squash(el.getAttribute('value'))
    return squash(el.getAttribute('title') ?? el.getAttribute('placeholder'))
  }
  if (tag === 'img') return squash(el.getAttribute('alt'))
  return squash(el.textContent)
}

/** Ways to address `el`, most robust first: a unique test id, a unique id, a unique role and name, a CSS path. */
export function suggestLocators(el: Element, testIdAttribute: string): LocatorSuggestion[] {
  const doc = el.ownerDocument
  const out: LocatorSuggestion[] = []
  const tid = el.getAttribute(testIdAttribute)
  if (tid) {
    let same = 0
    for (const e of doc.querySelectorAll('[' + CSS.escape(testIdAttribute) + ']')) {
      if (e.getAttribute(testIdAttribute) === tid) same++
    }
    if (same === 1) out.push({ kind: 'testid', value: tid })
  }
  if (el.id && doc.querySelectorAll('#' + CSS.escape(el.id)).length === 1) out.push({ kind: 'id', value: el.id })
  const role = ariaRoleOf(el)
  const name = role ? accessibleNameOf(el) : ''
  if (role && name && name.length <= 80) {
    let same = 0
    for (const e of doc.querySelectorAll('*')) {
      if (ariaRoleOf(e) === role && accessibleNameOf(e) === name) same++
      if (same > 1) break
    }
    if (same === 1) out.push({ kind: 'role', role, name })
  }
  out.push({ kind: 'css', value: cssPathOf(el) })
  return out
}

/** `button#pay.btn "Pay now"`, for error messages and logs. */
export function shortDescription(el: Element, text: string): string {
  let s = el.localName
  if (el.id) s += '#' + el.id
  for (let i = 0; i < el.classList.length && i < 3; i++) s += '.' + el.classList[i]
  if (text) s += ' "' + (text.length > 40 ? text.slice(0, 39) + '…' : text) + '"'
  return s
}

/** In-page: the fingerprint of the element an action is about to use. */
export function captureElement(el: Element, options: DescribeOptions, _lib: HelperLib): Capture {
  return { fingerprint: describeElement(el, options, null, true), selector: cssPathOf(el) }
}

/**
 * In-page: describes and scores every element of the document against the fingerprint, in one pass, and reports
 * the best `limit` with their breakdown, visibility and a selector. Visibility is only computed for those: it
 * decides whether the winner may be used, not how elements rank.
 */
export function rankElements(arg: RankArgs, lib: HelperLib): RankResult {
  const started = performance.now()
  // Not destructured under the imports' own names: a loader may rewrite those even when shadowed.
  const scoring = lib as unknown as ScoringLib
  const skip = ['html', 'head', 'body', 'script', 'style', 'meta', 'link', 'title', 'base', 'noscript', 'template']
  const fp = scoring.toSignals(arg.fingerprint)
  const cache = new Map<Element, string[]>()
  const top: Array<{ el: Element; score: number; breakdown: Breakdown; text: string }> = []
  let scanned = 0
  for (const el of document.querySelectorAll('*')) {
    if (skip.includes(el.localName)) continue
    scanned++
    // Cheapest first; each step stops elements that can no longer beat the candidates already held.
    const raw = describeIdentity(el, arg.options)
    const signals = scoring.toSignals(raw)
    const acc = scoring.identityScore(fp, signals, arg.weights)
    const full = top.length === arg.limit
    const floor = full ? top[top.length - 1]!.score : -1
    if (full && scoring.scoreCeiling(fp, signals, arg.weights, acc, true) <= floor) continue
    signals.path = ancestorPath(el, cache)
    signals.siblings = siblingTags(el, arg.options.siblingWindow)
    scoring.addTreeScore(fp, signals, arg.weights, acc)
    if (full && scoring.scoreCeiling(fp, signals, arg.weights, acc, false) <= floor) continue
    signals.box = boxOf(el)
    const scored = scoring.completeScore(fp, signals, arg.weights, acc)
    if (full && scored.score <= floor) continue
    let at = top.length
    while (at > 0 && top[at - 1]!.score < scored.score) at--
    top.splice(at, 0, { el, score: scored.score, breakdown: scored.breakdown, text: raw.text })
    if (top.length > arg.limit) top.pop()
  }
  const candidates = top.map((t) => ({
    score: t.score,
    breakdown: t.breakdown,
    visible: isElementVisible(t.el),
    enabled: isElementEnabled(t.el),
    selector: cssPathOf(t.el),
    description: shortDescription(t.el, t.text),
  }))
  const suggestions = top[0] ? suggestLocators(top[0].el, arg.options.testIdAttribute) : []
  return { candidates, suggestions, scanned, elapsedMs: performance.now() - started }
}

/** The helpers an in-page function needs to call `describeElement` (pass to `inPage`). */
export const DESCRIBE_HELPERS = [
  elementText,
  pathToken,
  ancestorPath,
  siblingTags,
  boxOf,
  describeIdentity,
  describeElement,
  cssPathOf,
]

const SCORING_HELPERS = [
  levenshtein,
  textSimilarity,
  jaccard,
  lcsLength,
  sequenceSimilarity,
  positionSimilarity,
  toSignals,
  identityScore,
  addTreeScore,
  scoreCeiling,
  completeScore,
]

/** `captureElement` with its helpers, ready for `locator.evaluate`. */
export const capturePageFunction = inPage(captureElement, DESCRIBE_HELPERS)

/** `rankElements` with its helpers, ready for `page.evaluate`. */
export const rankPageFunction = inPage(rankElements, [
  ...DESCRIBE_HELPERS,
  ...SCORING_HELPERS,
  isElementVisible,
  isElementEnabled,
  ariaRoleOf,
  accessibleNameOf,
  suggestLocators,
  shortDescription,
])
