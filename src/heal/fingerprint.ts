/**
 * In-page side of healing: fingerprint capture and candidate ranking. Every function here except `inPage` runs in
 * the browser, shipped as source text, so each is a self-contained function declaration that reaches nothing
 * outside itself but the helpers `inPage` ships with it. No module constants, no imports inside their bodies.
 */
import { InternalError } from '../errors.js'
import {
  addContextScore,
  addNameScore,
  addPositionScore,
  addTextScore,
  addTreeScore,
  finalScore,
  contextSimilarity,
  translatedPair,
  weightsAcross,
  identityScore,
  jaccard,
  lcsLength,
  levenshtein,
  positionSimilarity,
  scoreCeiling,
  sequenceSimilarity,
  textOf,
  textSimilarity,
  toSignals,
} from './similarity.js'
import type { Breakdown, ElementFingerprint, ElementSignals, RankedCandidate, ScoreSum, Weights } from './similarity.js'

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
  | { kind: 'role'; role: string; name: string }
  | { kind: 'testid'; value: string }
  | { kind: 'label'; value: string }
  | { kind: 'text'; value: string }
  | { kind: 'id'; value: string }
  | { kind: 'css'; value: string }
  /** A control of a row or list item, by the row's key text and its own role and name: survives re-sorting. */
  | { kind: 'row'; row: 'row' | 'listitem'; key: string; role: string; name: string }

/** One ranked element, as the page reports it. */
export interface PageCandidate extends RankedCandidate {
  /** A CSS selector unique in the page at ranking time, to act on the element. */
  selector: string
  /** A short human description: `button#pay.btn "Pay now"`. */
  description: string
  /** The candidate's own description, for the checks that run in Node (what it does, where it lives). */
  fingerprint: ElementFingerprint
  /** Ways to address this candidate, when known for it (the best one's are in `RankResult.suggestions`). */
  suggestions?: LocatorSuggestion[]
}

export interface RankArgs {
  fingerprint: ElementFingerprint
  weights: Weights
  options: DescribeOptions
  /** Most candidates reported, whatever their scores: bounds the work on a page of thousands of rows. */
  limit: number
  /** The best this many are reported whatever their score (a refusal lists them). Default `limit`. */
  keep?: number
  /** Every candidate scoring at least this is reported (up to `limit`), for the veto to see. Default 1 (none). */
  floor?: number
}

export interface RankResult {
  candidates: PageCandidate[]
  /** Ways to address the best candidate, most robust first (empty when there is none). */
  suggestions: LocatorSuggestion[]
  /** The weights the scores were computed with: text and name drop out across languages (`weightsAcross`). */
  weights: Weights
  /** Elements scored. */
  scanned: number
  /** Time spent in the page, collection and scoring together. */
  elapsedMs: number
}

/** The scoring functions `rankElements` reaches through its `lib` argument. */
interface ScoringLib {
  textSimilarity: typeof textSimilarity
  toSignals: typeof toSignals
  identityScore: typeof identityScore
  addTreeScore: typeof addTreeScore
  scoreCeiling: typeof scoreCeiling
  addTextScore: typeof addTextScore
  addNameScore: typeof addNameScore
  addContextScore: typeof addContextScore
  addPositionScore: typeof addPositionScore
  finalScore: typeof finalScore
  weightsAcross: typeof weightsAcross
}

/** What a successful action captures: the fingerprint and where the element was. */
export interface Capture {
  fingerprint: ElementFingerprint
  selector: string
  /** Set for the matches of a strict-mode violation, which compete as heal candidates. */
  visible?: boolean
  enabled?: boolean
  suggestions?: LocatorSuggestion[]
}

/** Shared by the elements of one scan: container descriptions and the page's headings, computed once. */
export interface ContextCache {
  forms: Map<Element, string>
  /** What the children of an element share, keyed by that parent (see `parentContextOf`). */
  parents: Map<Element, ParentContext>
  headings: Element[] | null
  /** Row, list item and card keys (see `itemKeyOf`), found for all siblings at once. */
  keys: Map<Element, string | null>
}

/** The containers around an element's children: the same for every sibling, so looked up once per parent. */
export interface ParentContext {
  /** The nearest row, list item or card at or above the parent, and its description. */
  itemEl: Element | null
  item: string
  /** The nearest dialog or landmark at or above the parent, and its description. */
  regionEl: Element | null
  region: string
  /** The nearest `form` at or above the parent. */
  form: Element | null
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
  return squashText(el.textContent, max)
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

/**
 * The element's box in page coordinates, or null when it has no layout box. A scan passes the page's scroll
 * offsets, read once: reading them costs as much as the box.
 */
export function boxOf(el: Element, scroll?: { x: number; y: number }): ElementFingerprint['box'] {
  const r = el.getBoundingClientRect()
  if (r.width <= 0 || r.height <= 0) return null
  const view = scroll ? null : el.ownerDocument.defaultView
  const x = r.left + (scroll ? scroll.x : view ? view.scrollX : 0)
  const y = r.top + (scroll ? scroll.y : view ? view.scrollY : 0)
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

/**
 * Describes an element fully. `cache` shares ancestor paths between siblings during a scan, `ctx` the
 * descriptions of containers.
 */
export function describeElement(
  el: Element,
  o: DescribeOptions,
  cache: Map<Element, string[]> | null,
  measure: boolean,
  ctx: ContextCache,
): ElementFingerprint {
  const fp = describeIdentity(el, o)
  fp.path = ancestorPath(el, cache)
  fp.siblings = siblingTags(el, o.siblingWindow)
  if (measure) fp.box = boxOf(el)
  fp.role = ariaRoleOf(el)
  fp.name = controlNameOf(el, fp.role, o.textMax)
  fp.context = contextOf(el, ctx, o.textMax)
  fp.lang = langOf(el)
  return fp
}

/** The language the element is written in, by the nearest `lang` attribute: `de` for `de-CH`; `''` when unsaid. */
export function langOf(el: Element): string {
  const at = el.closest('[lang]')
  return at ? (at.getAttribute('lang') ?? '').trim().toLowerCase().split(/[-_]/)[0]! : ''
}

/**
 * Whitespace collapsed, trimmed and cut to `max` characters. Only runs and other whitespace than a single space
 * are replaced, the same result as replacing every `\s+`: most texts have nothing to replace, and then no new
 * string is built.
 */
export function squashText(s: string | null | undefined, max: number): string {
  return (s ?? '')
    .slice(0, max * 4)
    .replace(/\s{2,}|[^\S ]/g, ' ')
    .trim()
    .slice(0, max)
}

/**
 * The icon an icon-only control shows: a `<use href="#icon-trash">` fragment, an icon class (`fa-trash`,
 * `icon-trash`, `bi-trash`), a `data-icon`, or an svg's title, as words (`trash`). `''` when none.
 */
export function iconNameOf(el: Element): string {
  const clean = (s: string) =>
    s
      .replace(/^.*#/, '')
      .replace(/^(?:icon|ic|i|svg|sprite)[-_:]/i, '')
      .replace(/[-_:]+/g, ' ')
      .trim()
      .toLowerCase()
  const nodes = [el, ...Array.from(el.querySelectorAll('svg, use, i, span, img, [data-icon], [class]')).slice(0, 8)]
  for (const n of nodes) {
    if (n.localName === 'use') {
      const href = n.getAttribute('href') ?? n.getAttribute('xlink:href') ?? ''
      if (href.includes('#') && clean(href)) return clean(href)
    }
    const data = n.getAttribute('data-icon')
    if (data) return clean(data)
    // The control's own classes name its style (`icon-btn`), not its icon.
    for (let i = 0; n !== el && i < n.classList.length; i++) {
      const m = /^(?:fa[srlbd]?|bi|mdi|icon|glyphicon|ti|ri|la|ion|octicon|lucide|feather)[-_](.+)$/.exec(
        n.classList[i]!,
      )
      if (m && !/^(?:solid|regular|light|brands|lg|xs|sm|fw|\dx)$/.test(m[1]!)) return clean(m[1]!)
    }
    if (n.localName === 'svg') {
      const title = n.querySelector('title')
      if (title && title.textContent) return clean(title.textContent)
    }
  }
  return ''
}

/**
 * The name a control is known by: its accessible name, else its title, else the icon it shows. Only elements with
 * a role have one; a plain `div` is known by its text.
 */
export function controlNameOf(el: Element, role: string, max: number): string {
  if (!role) return ''
  const name = accessibleNameOf(el) || squashText(el.getAttribute('title'), max) || iconNameOf(el)
  return name.slice(0, max)
}

/** Text of the first heading inside `root`, or `''`. */
export function headingIn(root: Element, max: number): string {
  const h = root.querySelector('h1, h2, h3, h4, h5, h6, [role=heading], legend, caption')
  return h ? squashText(h.textContent, max) : ''
}

/** aria-label, or the text of aria-labelledby's elements, or `''`. */
export function ariaLabelOf(el: Element, max: number): string {
  const label = squashText(el.getAttribute('aria-label'), max)
  if (label) return label
  const by = el.getAttribute('aria-labelledby')
  if (!by) return ''
  const parts = by.split(/\s+/).map((id) => squashText(el.ownerDocument.getElementById(id)?.textContent, max))
  return parts.filter(Boolean).join(' ').slice(0, max)
}

/**
 * What might identify a row, list item or card, most telling first: row header cells, link texts (a product
 * name is usually a link), the item's label or heading, then (rows and list items only) its plain cells or texts
 * outside controls, then its `data-*` values. Controls are left out: every row has the same Remove button.
 */
export function itemCandidatesOf(item: Element, max: number): string[] {
  const out: string[] = []
  const push = (s: string | null | undefined) => {
    const text = squashText(s, max)
    if (text && out.length < 8 && !out.includes(text)) out.push(text)
  }
  const controls = 'button, input, select, textarea, [role=button], [role=checkbox], [role=switch]'
  const row = item.localName === 'tr' || item.getAttribute('role') === 'row'
  const listItem = item.localName === 'li' || item.getAttribute('role') === 'listitem'
  const cells = row ? Array.from(item.children).slice(0, 32) : []
  for (const cell of cells) {
    if (cell.localName === 'th' || cell.getAttribute('role') === 'rowheader') push(cell.textContent)
  }
  if (row || listItem) {
    const links = item.querySelectorAll('a[href], [role=link]')
    for (let i = 0; i < links.length && i < 4; i++) push(links[i]!.textContent)
  }
  push(ariaLabelOf(item, max))
  push(headingIn(item, max))
  if (row) {
    for (const cell of cells) if (!cell.querySelector(controls) && !cell.matches(controls)) push(cell.textContent)
  } else if (listItem) {
    const walker = item.ownerDocument.createTreeWalker(item, NodeFilter.SHOW_TEXT)
    for (let n = walker.nextNode(), seen = 0; n && seen < 64; n = walker.nextNode(), seen++) {
      const parent = n.parentElement
      if (!parent || parent.closest(controls) || parent.closest('script, style, template')) continue
      push(n.textContent)
    }
  }
  const attrs = item.attributes
  for (let i = 0; i < attrs.length; i++) if (attrs[i]!.name.startsWith('data-')) push(attrs[i]!.value)
  return out
}

/**
 * The key of a row, list item or card: the first of its candidates (see `itemCandidatesOf`) that no sibling item
 * shares, so that two products at the same price are never "the same row". `''` when the item offers no text at
 * all, null when it does but none of it is unique among its siblings (nothing identifies it). The keys of all
 * siblings are found in one pass and cached: a scan meets every row of a table.
 */
export function itemKeyOf(item: Element, ctx: ContextCache, max: number): string | null {
  const known = ctx.keys.get(item)
  if (known !== undefined) return known
  const parent = item.parentElement
  const role = item.getAttribute('role') ?? ''
  const siblings: Element[] = []
  if (parent) {
    for (let c = parent.firstElementChild; c && siblings.length < 5000; c = c.nextElementSibling) {
      if (c.localName === item.localName && (c.getAttribute('role') ?? '') === role) siblings.push(c)
    }
  }
  if (!siblings.includes(item)) siblings.push(item)
  const candidates = siblings.map((s) => itemCandidatesOf(s, max))
  const counts = new Map<string, number>()
  for (const list of candidates) for (const text of list) counts.set(text, (counts.get(text) ?? 0) + 1)
  for (let i = 0; i < siblings.length; i++) {
    const list = candidates[i]!
    const key = list.find((text) => counts.get(text) === 1)
    ctx.keys.set(siblings[i]!, key ?? (list.length > 0 ? null : ''))
  }
  return ctx.keys.get(item) ?? null
}

/** The nearest heading before `el` in document order (not one that contains it), by binary search. */
export function headingAbove(el: Element, ctx: ContextCache, max: number): string {
  const headings = (ctx.headings ??= Array.from(
    el.ownerDocument.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]'),
  ))
  let lo = 0
  let hi = headings.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (headings[mid]!.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  while (found >= 0 && headings[found]!.contains(el)) found--
  return found >= 0 ? squashText(headings[found]!.textContent, max) : ''
}

/** An empty `ContextCache`, for one scan. */
export function createContextCache(): ContextCache {
  return { forms: new Map(), parents: new Map(), headings: null, keys: new Map() }
}

/**
 * The row or card and the dialog or landmark around `parent`'s children, and the form above them: what
 * `parent.closest()` finds for each. Siblings share all three, and so do cousins above a common ancestor: the
 * answer is built from the grandparent's, known already, so that each element of a scan is matched once.
 */
export function parentContextOf(parent: Element, ctx: ContextCache, max: number): ParentContext {
  const known = ctx.parents.get(parent)
  if (known) return known
  // Selectors inline: this runs in the page, where module constants do not exist.
  const itemSelector =
    'tr, li, [role=row], [role=listitem], article, [role=article], [class*=card], [class*=Card], [class*=tile]'
  const regionSelector =
    'dialog, [role=dialog], [role=alertdialog], nav, aside, header, footer, main, [role=navigation], ' +
    '[role=complementary], [role=banner], [role=contentinfo], [role=main], [role=region], [role=tabpanel], ' +
    'section[aria-label], section[aria-labelledby], fieldset'
  const keep = 40 < max ? 40 : max
  const above = parent.parentElement
  const up = above ? parentContextOf(above, ctx, max) : null
  const around: ParentContext = up ? { ...up } : { itemEl: null, item: '', regionEl: null, region: '', form: null }
  if (parent.matches(itemSelector)) {
    around.itemEl = parent
    around.item = ''
    // A form styled as a card is the form context already, not a repeated item.
    if (parent.localName !== 'form') {
      const kind =
        parent.localName === 'tr' || parent.getAttribute('role') === 'row'
          ? 'row'
          : parent.localName === 'li'
            ? 'item'
            : 'card'
      // `row|` marks a row that nothing identifies: not the same as no row at all.
      const key = itemKeyOf(parent, ctx, keep)
      around.item = key === '' ? '' : kind + '|' + (key ?? '')
    }
  }
  if (parent.matches(regionSelector)) {
    const kind = parent.getAttribute('role') ?? parent.localName
    around.regionEl = parent
    around.region = kind + '|' + (ariaLabelOf(parent, keep) || headingIn(parent, keep))
  }
  if (parent.localName === 'form') around.form = parent
  ctx.parents.set(parent, around)
  return around
}

/** Where `el` lives: row or card, form, dialog or landmark, heading above. Containers are described once. */
export function contextOf(el: Element, ctx: ContextCache, max: number): ElementFingerprint['context'] {
  const keep = 40 < max ? 40 : max
  const parent = el.parentElement
  const around = parent ? parentContextOf(parent, ctx, max) : null
  // `el.closest('form')`, with the part above `el` looked up once per parent.
  const formEl = (el as HTMLInputElement).form ?? (el.localName === 'form' ? el : around ? around.form : null)
  let form = ''
  if (formEl) {
    const cached = ctx.forms.get(formEl)
    if (cached === undefined) {
      const label = ariaLabelOf(formEl, keep) || headingIn(formEl, keep)
      form = [formEl.id, formEl.getAttribute('name') ?? '', formEl.getAttribute('action') ?? '', label].join('|')
      ctx.forms.set(formEl, form)
    } else form = cached
  }
  return {
    item: around ? around.item : '',
    form,
    region: around ? around.region : '',
    heading: headingAbove(el, ctx, keep),
  }
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

/**
 * A simplified accessible name: aria-label, aria-labelledby, labels, value of button-like inputs, alt, text.
 * Close enough to rank by; a suggested `getByRole` is confirmed with Playwright's own engine before use.
 */
export function accessibleNameOf(el: Element): string {
  const squash = (s: string | null | undefined): string => (s ?? '').replace(/\s{2,}|[^\S ]/g, ' ').trim()
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

/**
 * Ways to address `el`, in Playwright's recommended order: role and name, test id, label, text; then a unique
 * id, and a CSS path last. Uniqueness is confirmed in Node with Playwright's own engine, which skips the ones that
 * do not find exactly this element.
 */
export function suggestLocators(
  el: Element,
  testIdAttribute: string,
  ctx: ContextCache | null = null,
): LocatorSuggestion[] {
  const doc = el.ownerDocument
  const out: LocatorSuggestion[] = []
  const role = ariaRoleOf(el)
  const name = role ? accessibleNameOf(el) : ''
  if (role && name && name.length <= 80) out.push({ kind: 'role', role, name })
  const tid = el.getAttribute(testIdAttribute)
  if (tid) out.push({ kind: 'testid', value: tid })
  // A Remove button among many rows: its row's key (unique among the rows by construction) with its own name.
  const item = role && name && name.length <= 80 ? el.closest('tr, [role=row], li, [role=listitem]') : null
  if (item) {
    // A scan shares its cache: the keys of a table's rows are found once, not once per candidate.
    const key = itemKeyOf(item, ctx ?? createContextCache(), 40)
    const row = item.localName === 'tr' || item.getAttribute('role') === 'row' ? 'row' : 'listitem'
    if (key) out.push({ kind: 'row', row, key, role, name })
  }
  const tag = el.localName
  if (tag === 'input' || tag === 'select' || tag === 'textarea') {
    const labels = (el as HTMLInputElement).labels
    const label = labels && labels.length > 0 ? squashText(labels[0]!.textContent, 80) : ariaLabelOf(el, 80)
    if (label) out.push({ kind: 'label', value: label })
  }
  const text = squashText(el.textContent, 81)
  if (text && text.length <= 80 && tag !== 'input') out.push({ kind: 'text', value: text })
  if (el.id && doc.querySelectorAll('#' + CSS.escape(el.id)).length === 1) out.push({ kind: 'id', value: el.id })
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
  const ctx = createContextCache()
  return { fingerprint: describeElement(el, options, null, true, ctx), selector: cssPathOf(el) }
}

/** In-page: the fingerprints of every element a locator matches (a strict-mode violation), in order. */
export function captureElements(els: Element[], options: DescribeOptions, _lib: HelperLib): Capture[] {
  const ctx = createContextCache()
  const cache = new Map<Element, string[]>()
  return els.map((el) => ({
    fingerprint: describeElement(el, options, cache, true, ctx),
    selector: cssPathOf(el),
    visible: isElementVisible(el),
    enabled: isElementEnabled(el),
    suggestions: suggestLocators(el, options.testIdAttribute, ctx),
  }))
}

/** The learned element's classes and attributes, prepared once per ranking for `identityOf`. */
export interface LearnedIdentity {
  /** Distinct classes. */
  classes: string[]
  /** Attribute values by name, `style` left out as `toSignals` does. */
  attrs: Map<string, string>
}

export function learnedIdentityOf(fp: ElementFingerprint): LearnedIdentity {
  const attrs = new Map<string, string>()
  for (const name in fp.attrs) if (name !== 'style') attrs.set(name, fp.attrs[name]!)
  return { classes: fp.classes.filter((c, i) => fp.classes.indexOf(c) === i), attrs }
}

/**
 * `identityScore(fp, toSignals(describeIdentity(el)), w)`, read straight from the DOM: the same figures, summed
 * in the same order, without building the description. Most elements of a page are dropped right after this step,
 * and building their descriptions cost more than scoring them. `similar` is `textSimilarity`.
 */
export function identityOf(
  el: Element,
  fp: ElementSignals,
  learned: LearnedIdentity,
  w: Weights,
  similar: (a: string, b: string) => number,
): ScoreSum {
  const b: Breakdown = {}
  let sum = 0
  let total = 0
  b.tag = fp.tag === el.localName ? 1 : 0
  sum += w.tag * b.tag
  total += w.tag
  if (fp.id !== '') {
    b.id = similar(fp.id, el.id)
    sum += w.id * b.id
    total += w.id
  }
  // Jaccard on sets: a DOMTokenList holds each class once, and attribute names are unique.
  const classList = el.classList
  if (learned.classes.length > 0 || classList.length > 0) {
    let common = 0
    for (let i = 0; i < learned.classes.length; i++) if (classList.contains(learned.classes[i]!)) common++
    b.classes = common / (learned.classes.length + classList.length - common)
    sum += w.classes * b.classes
    total += w.classes
  }
  let own = 0
  let common = 0
  // Names, not `el.attributes`: walking that builds an `Attr` node per attribute, twice the cost.
  const names = el.hasAttributes() ? el.getAttributeNames() : []
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    if (name === 'id' || name === 'class' || name === 'style') continue
    own++
    const value = learned.attrs.get(name)
    if (value !== undefined && (el.getAttribute(name) ?? '').slice(0, 100) === value) common++
  }
  if (learned.attrs.size > 0 || own > 0) {
    b.attributes = common / (learned.attrs.size + own - common)
    sum += w.attributes * b.attributes
    total += w.attributes
  }
  return { sum, total, breakdown: b }
}

/**
 * In-page: describes and scores every element of the document against the fingerprint and reports the best
 * `keep`, and every other one scoring at least `floor` (up to `limit` in all), with their breakdown, visibility and
 * a selector. Two passes, so that the costly steps run only for elements that can still make the list. The first
 * scores every signal but position, each step stopping elements whose ceiling cannot make the list: below `floor`
 * and under the `keep`-th best floor so far (the score with the worst position), or under the `limit`-th. It reads the
 * cheap signals straight from the DOM into one reused record, and describes an element fully only when it makes
 * the list. The second measures layout boxes, best ceiling first, and stops once no ceiling left can beat the
 * list: on a page of many identical rows only the rows near the learned one are measured. Visibility is only
 * computed for the winners: it decides whether one may be used, not how elements rank.
 */
export function rankElements(arg: RankArgs, lib: HelperLib): RankResult {
  const started = performance.now()
  // Not destructured under the imports' own names: a loader may rewrite those even when shadowed.
  const scoring = lib as unknown as ScoringLib
  // A page now in another language than the learned element: text and name are not comparable by spelling.
  const w = scoring.weightsAcross(arg.fingerprint, { lang: langOf(document.documentElement) }, arg.weights)
  const max = arg.options.textMax
  const fp = scoring.toSignals(arg.fingerprint)
  const learned = learnedIdentityOf(arg.fingerprint)
  // Position applies only when the learned element had a box; then it adds between 0 and its full weight.
  const wp = fp.box ? w.position : 0
  const cache = new Map<Element, string[]>()
  const ctx = createContextCache()
  const none: string[] = []
  type Held = { el: Element; order: number; signals: ElementSignals; acc: ScoreSum; ceiling: number }
  const held: Held[] = []
  const keep = Math.min(arg.keep ?? arg.limit, arg.limit)
  const scoreFloor = arg.floor ?? 1
  // What an element must beat to make the list, given the `limit` best floors (or scores) so far, highest first.
  const bar = (best: number[]): number => {
    const kept = best.length >= keep ? best[keep - 1]! : -1
    const capped = best.length >= arg.limit ? best[arg.limit - 1]! : -1
    return Math.max(capped, Math.min(scoreFloor, kept))
  }
  const floors: number[] = []
  let floor = -1
  let scanned = 0
  // One record for the cheap first step, refilled for each element: most elements end there.
  const probe: ElementSignals = {
    tag: '',
    id: '',
    text: '',
    classes: none,
    attrs: none,
    path: none,
    siblings: none,
    box: null,
    name: '',
    context: null,
  }
  const all = document.querySelectorAll('*')
  for (let i = 0; i < all.length; i++) {
    const el = all[i]!
    switch (el.localName) {
      case 'html':
      case 'head':
      case 'body':
      case 'script':
      case 'style':
      case 'meta':
      case 'link':
      case 'title':
      case 'base':
      case 'noscript':
      case 'template':
        continue
    }
    const order = scanned++
    // Cheapest first. An element without a role has no name: known now, it bounds the ceiling tighter.
    const acc = identityOf(el, fp, learned, w, scoring.textSimilarity)
    const role = ariaRoleOf(el)
    const text = elementText(el, max).toLowerCase()
    probe.text = text
    if (floor >= 0 && scoring.scoreCeiling(fp, probe, w, acc, role === '') <= floor) continue
    // Text and name next: two short edit distances, cheaper than the tree and the context they can spare.
    // Classes and attributes are scored already: their lists stay empty.
    const c: ElementSignals = {
      tag: el.localName,
      id: el.id,
      text,
      classes: none,
      attrs: none,
      path: none,
      siblings: none,
      box: null,
      name: role ? controlNameOf(el, role, max).toLowerCase() : '',
      context: null,
    }
    scoring.addNameScore(fp, c, w, scoring.addTextScore(fp, c, w, acc))
    if (floor >= 0 && scoring.scoreCeiling(fp, c, w, acc) <= floor) continue
    c.path = ancestorPath(el, cache)
    c.siblings = siblingTags(el, arg.options.siblingWindow)
    scoring.addTreeScore(fp, c, w, acc)
    if (floor >= 0 && scoring.scoreCeiling(fp, c, w, acc) <= floor) continue
    const context = contextOf(el, ctx, max)!
    c.context = {
      item: context.item.toLowerCase(),
      form: context.form.toLowerCase(),
      region: context.region.toLowerCase(),
      heading: context.heading.toLowerCase(),
    }
    scoring.addContextScore(fp, c, w, acc)
    const total = acc.total + wp
    const ceiling = total > 0 ? (acc.sum + wp) / total : 0
    if (floor >= 0 && ceiling <= floor) continue
    held.push({ el, order, signals: c, acc, ceiling })
    const low = total > 0 ? acc.sum / total : 0
    let at = floors.length
    while (at > 0 && floors[at - 1]! < low) at--
    floors.splice(at, 0, low)
    if (floors.length > arg.limit) floors.pop()
    floor = bar(floors)
  }

  held.sort((a, b) => b.ceiling - a.ceiling || a.order - b.order)
  const scroll = { x: window.scrollX, y: window.scrollY }
  const top: Array<Held & { score: number; breakdown: Breakdown }> = []
  const scores: number[] = []
  for (const h of held) {
    if (h.ceiling <= bar(scores)) break
    h.signals.box = boxOf(h.el, scroll)
    const scored = scoring.finalScore(scoring.addPositionScore(fp, h.signals, w, h.acc))
    // Equal scores keep document order, as the list would have in one pass.
    let at = top.length
    while (
      at > 0 &&
      (top[at - 1]!.score < scored.score || (top[at - 1]!.score === scored.score && top[at - 1]!.order > h.order))
    )
      at--
    top.splice(at, 0, { ...h, score: scored.score, breakdown: scored.breakdown })
    scores.splice(at, 0, scored.score)
    if (top.length > arg.limit) {
      top.pop()
      scores.pop()
    }
  }
  const listed = top.filter((t, i) => i < keep || t.score >= scoreFloor)
  const candidates = listed.map((t) => {
    // The full description, as `describeElement` gives it, built only for the few that made the list.
    const raw = describeIdentity(t.el, arg.options)
    raw.path = t.signals.path
    raw.siblings = t.signals.siblings
    raw.box = t.signals.box
    raw.role = ariaRoleOf(t.el)
    raw.name = controlNameOf(t.el, raw.role, max)
    raw.context = contextOf(t.el, ctx, max)
    raw.lang = langOf(t.el)
    return {
      score: t.score,
      breakdown: t.breakdown,
      visible: isElementVisible(t.el),
      enabled: isElementEnabled(t.el),
      selector: cssPathOf(t.el),
      description: shortDescription(t.el, raw.text),
      fingerprint: raw,
      // Any of them may be the one healed (the veto or an anchor can pass over the best): each gets its own.
      suggestions: suggestLocators(t.el, arg.options.testIdAttribute, ctx),
    }
  })
  const suggestions = candidates[0] ? candidates[0].suggestions : []
  return { candidates, suggestions, weights: w, scanned, elapsedMs: performance.now() - started }
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
  squashText,
  ariaRoleOf,
  accessibleNameOf,
  iconNameOf,
  controlNameOf,
  headingIn,
  ariaLabelOf,
  itemCandidatesOf,
  itemKeyOf,
  headingAbove,
  langOf,
  createContextCache,
  parentContextOf,
  contextOf,
]

const SCORING_HELPERS = [
  levenshtein,
  textSimilarity,
  jaccard,
  lcsLength,
  sequenceSimilarity,
  positionSimilarity,
  contextSimilarity,
  toSignals,
  identityScore,
  addTreeScore,
  scoreCeiling,
  textOf,
  addTextScore,
  addNameScore,
  addContextScore,
  addPositionScore,
  finalScore,
  translatedPair,
  weightsAcross,
]

/** `captureElement` with its helpers, ready for `locator.evaluate`. */
export const capturePageFunction = inPage(captureElement, DESCRIBE_HELPERS)

/** `captureElements` with its helpers, ready for `locator.evaluateAll`. */
export const captureAllPageFunction = inPage(captureElements, [
  ...DESCRIBE_HELPERS,
  isElementVisible,
  isElementEnabled,
  suggestLocators,
])

/** `rankElements` with its helpers, ready for `page.evaluate`. */
export const rankPageFunction = inPage(rankElements, [
  ...DESCRIBE_HELPERS,
  ...SCORING_HELPERS,
  isElementVisible,
  isElementEnabled,
  suggestLocators,
  shortDescription,
  learnedIdentityOf,
  identityOf,
])
