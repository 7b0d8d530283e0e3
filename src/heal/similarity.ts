/**
 * Pure similarity scoring for self-healing locators. No imports, no module state read at call time: every
 * function that `scoreCandidate` reaches is a plain function declaration, because the heal step ships their
 * source into the page (see `fingerprint.ts`) to score thousands of elements where they live.
 */

/** An element's box in page coordinates (CSS pixels, scroll-independent). */
export interface Box {
  x: number
  y: number
  width: number
  height: number
}

/**
 * What is remembered about an element when an action on it succeeds. Stored as the `data` of a store
 * `Fingerprint`, keyed by test and locator.
 */
export interface ElementFingerprint {
  /** Lower-case tag name. */
  tag: string
  /** `''` when the element has none. */
  id: string
  /** Text content with whitespace collapsed, trimmed and cut to a bounded length. */
  text: string
  classes: string[]
  /** Every attribute except `id` and `class` (those are fields of their own), values cut to a bounded length. */
  attrs: Record<string, string>
  /** Ancestors from the root down to the parent: `tag`, or `tag#id` when the ancestor has an id. */
  path: string[]
  /** Tags of the neighbouring siblings in document order, with `*` marking the element itself. */
  siblings: string[]
  /** Null when the element had no layout box. */
  box: Box | null
  /** The value of the test-id attribute (`data-testid` unless configured), or null. */
  testId: string | null
  /** ARIA role, explicit or implicit for the common elements; `''` when none. Absent in older fingerprints. */
  role?: string
  /**
   * Accessible name for elements with a role (label, aria-label, title, text), or the icon an icon-only control
   * shows (`svg use` href, icon class). `''` when none.
   */
  name?: string
  /** Where the element lives: its row or card, form, dialog or landmark, and the heading above it. */
  context?: ElementContext
  /** Primary language subtag of the nearest `lang` attribute (`de`), `''` when the page says none. */
  lang?: string
}

/**
 * The containers that tell repeated controls apart, each as identifying text (`''` when there is none):
 * - `item`: the row, list item or card, by its key cell, heading or first text (`row|Alice`);
 * - `form`: `id|name|action|label`, label being its aria-label, legend or heading;
 * - `region`: the dialog or landmark, by role and label (`dialog|Delete project?`);
 * - `heading`: the nearest heading above the element.
 */
export interface ElementContext {
  item: string
  form: string
  region: string
  heading: string
}

/** The comparable form of an element: lower-cased text, sorted tokens. Both sides are prepared the same way. */
export interface ElementSignals {
  tag: string
  id: string
  text: string
  classes: string[]
  /** `name=value` tokens. */
  attrs: string[]
  path: string[]
  siblings: string[]
  box: Box | null
  name: string
  context: ElementContext | null
}

export type Signal =
  'tag' | 'id' | 'text' | 'name' | 'classes' | 'attributes' | 'path' | 'siblings' | 'context' | 'position'

export type Weights = Record<Signal, number>

/** A signal's similarity in [0, 1]. Signals that do not apply to a pair (no id to compare, no box) are absent. */
export type Breakdown = Partial<Record<Signal, number>>

export interface Scored {
  /** Weighted mean of the signals that apply, in [0, 1]. */
  score: number
  breakdown: Breakdown
}

/**
 * Identity signals (text, id, attributes) outweigh structural ones (tag, path, siblings, position): a neighbour
 * of a removed element shares its structure but not its identity, and must not reach the threshold on
 * structure alone. Position weighs least: layouts shift with every banner, and a look-alike standing where the
 * learned element used to be is the classic wrong heal (`decideHeal` also keeps position from opening the margin).
 */
export const DEFAULT_WEIGHTS: Readonly<Weights> = Object.freeze({
  tag: 1,
  id: 2,
  text: 3,
  name: 2,
  classes: 1,
  attributes: 2,
  path: 1,
  siblings: 0.5,
  context: 2,
  position: 0.5,
})

/**
 * Heal only at or above this score. Calibrated on the heal corpus (test/heal/corpus): a removed element's lone
 * look-alike that does the same kind of thing scores up to about 0.6; the right element after a real change
 * scores 0.65 and more.
 */
export const DEFAULT_THRESHOLD = 0.6

/** The best candidate must lead the runner-up by at least this much. */
export const DEFAULT_MARGIN = 0.1

/**
 * Most candidates one ranking hands to the decision. Every candidate at or above `vetoFloor` reaches the veto up
 * to this many; a page with more look-alikes than this above the floor cannot be healed reliably anyway.
 */
export const RANK_LIMIT = 400

/**
 * The score from which a candidate reaches the veto and the decision. Below it a candidate can neither heal (it is
 * under the threshold) nor stand within the margin of one that can, with position left out or not: leaving
 * position out moves a score by at most its share of the weights.
 * @example vetoFloor({ threshold: 0.6, margin: 0.1, weights: DEFAULT_WEIGHTS }) // 0.4667
 */
export function vetoFloor(t: { threshold: number; margin: number; weights: Weights }): number {
  let total = 0
  for (const k in t.weights) total += t.weights[k as Signal]
  const share = total > 0 ? t.weights.position / total : 0
  return Math.max(0, t.threshold - t.margin - share)
}

/**
 * Edit distance (insertions, deletions, substitutions) between two strings.
 * @example levenshtein('kitten', 'sitting') // 3
 */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0
  // Common prefix and suffix cost nothing; trimming them makes near-identical texts cheap.
  let start = 0
  while (start < a.length && start < b.length && a.charCodeAt(start) === b.charCodeAt(start)) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--
    endB--
  }
  const n = endA - start
  const m = endB - start
  if (n === 0) return m
  if (m === 0) return n
  const row = new Array<number>(m + 1)
  for (let j = 0; j <= m; j++) row[j] = j
  for (let i = 1; i <= n; i++) {
    let diag = row[0]!
    row[0] = i
    const ca = a.charCodeAt(start + i - 1)
    for (let j = 1; j <= m; j++) {
      const up = row[j]!
      const cost = ca === b.charCodeAt(start + j - 1) ? 0 : 1
      const best = Math.min(up + 1, row[j - 1]! + 1, diag + cost)
      diag = up
      row[j] = best
    }
  }
  return row[m]!
}

/**
 * `1 - distance / longer length`: 1 for equal strings (including two empty ones), 0 for nothing in common.
 * @example textSimilarity('Place order', 'Place your order') // 0.6875
 */
export function textSimilarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length)
  if (longer === 0) return 1
  return 1 - levenshtein(a, b) / longer
}

/**
 * Size of the intersection over size of the union of two token sets. Two empty sets are equal (1).
 * @example jaccard(['btn', 'primary'], ['btn', 'large']) // 1 / 3
 */
export function jaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 1
  // Token lists are short (classes, attributes), so nested scans beat building Sets.
  let common = 0
  let unionA = 0
  for (let i = 0; i < a.length; i++) {
    const t = a[i]!
    if (a.indexOf(t) !== i) continue
    unionA++
    if (b.includes(t)) common++
  }
  let onlyB = 0
  for (let j = 0; j < b.length; j++) {
    const t = b[j]!
    if (b.indexOf(t) !== j) continue
    if (!a.includes(t)) onlyB++
  }
  return common / (unionA + onlyB)
}

/**
 * Length of the longest common subsequence of two sequences.
 * @example lcsLength(['html', 'body', 'form', 'button'], ['html', 'body', 'div', 'form', 'button']) // 4
 */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  const n = a.length
  const m = b.length
  if (n === 0 || m === 0) return 0
  const row = new Array<number>(m + 1).fill(0)
  for (let i = 1; i <= n; i++) {
    let diag = 0
    const ta = a[i - 1]
    for (let j = 1; j <= m; j++) {
      const up = row[j]!
      row[j] = ta === b[j - 1] ? diag + 1 : Math.max(up, row[j - 1]!)
      diag = up
    }
  }
  return row[m]!
}

/**
 * `2 · LCS / (|a| + |b|)`, the ratio difflib uses: a wrapper added to a 4-deep path still scores 0.89.
 * @example sequenceSimilarity(['html', 'body', 'form'], ['html', 'body', 'div', 'form']) // 6 / 7
 */
export function sequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 1
  return (2 * lcsLength(a, b)) / (a.length + b.length)
}

/**
 * Closeness of two boxes' centres: 1 at the same place, 0.5 at 100 px apart, 0.25 at 300 px. Null when either
 * box is unknown, so that the signal drops out instead of counting as a miss.
 * @example positionSimilarity({ x: 0, y: 0, width: 10, height: 10 }, { x: 100, y: 0, width: 10, height: 10 }) // 0.5
 */
export function positionSimilarity(a: Box | null, b: Box | null): number | null {
  if (!a || !b) return null
  const dx = a.x + a.width / 2 - (b.x + b.width / 2)
  const dy = a.y + a.height / 2 - (b.y + b.height / 2)
  return 1 / (1 + Math.sqrt(dx * dx + dy * dy) / 100)
}

/**
 * Turns a fingerprint into comparable signals. Attribute tokens leave out `style`, which animations and layout
 * code rewrite constantly. Order is kept: the set measures below do not need sorted tokens.
 * @example toSignals(fingerprint).attrs // ['type=submit', 'name=pay']
 */
export function toSignals(fp: ElementFingerprint): ElementSignals {
  const attrs: string[] = []
  for (const name in fp.attrs) {
    if (name !== 'style') attrs.push(name + '=' + fp.attrs[name])
  }
  return {
    tag: fp.tag,
    id: fp.id,
    text: fp.text.toLowerCase(),
    classes: fp.classes,
    attrs,
    path: fp.path,
    siblings: fp.siblings,
    box: fp.box,
    name: (fp.name ?? '').toLowerCase(),
    context: fp.context
      ? {
          item: fp.context.item.toLowerCase(),
          form: fp.context.form.toLowerCase(),
          region: fp.context.region.toLowerCase(),
          heading: fp.context.heading.toLowerCase(),
        }
      : null,
  }
}

/**
 * Similarity of two contexts: the mean text similarity of the parts either side has. A part only one side has
 * counts as a miss (the element left its row or form); null when neither side has any part.
 * @example contextSimilarity({ item: 'row|alice', form: '', region: '', heading: 'users' }, same) // 1
 */
export function contextSimilarity(a: ElementContext | null, b: ElementContext | null): number | null {
  if (!a || !b) return null
  let sum = 0
  let n = 0
  if (a.item !== '' || b.item !== '') {
    sum += textSimilarity(a.item, b.item)
    n++
  }
  if (a.form !== '' || b.form !== '') {
    sum += textSimilarity(a.form, b.form)
    n++
  }
  if (a.region !== '' || b.region !== '') {
    sum += textSimilarity(a.region, b.region)
    n++
  }
  if (a.heading !== '' || b.heading !== '') {
    sum += textSimilarity(a.heading, b.heading)
    n++
  }
  return n > 0 ? sum / n : null
}

/** Running weighted sum of the signals that apply. */
export interface ScoreSum {
  sum: number
  total: number
  breakdown: Breakdown
}

/** The identity signals that cost next to nothing: tag, id, classes, attributes. */
export function identityScore(fp: ElementSignals, c: ElementSignals, w: Weights): ScoreSum {
  const b: Breakdown = {}
  let sum = 0
  let total = 0
  b.tag = fp.tag === c.tag ? 1 : 0
  sum += w.tag * b.tag
  total += w.tag
  if (fp.id !== '') {
    b.id = textSimilarity(fp.id, c.id)
    sum += w.id * b.id
    total += w.id
  }
  if (fp.classes.length > 0 || c.classes.length > 0) {
    b.classes = jaccard(fp.classes, c.classes)
    sum += w.classes * b.classes
    total += w.classes
  }
  if (fp.attrs.length > 0 || c.attrs.length > 0) {
    b.attributes = jaccard(fp.attrs, c.attrs)
    sum += w.attributes * b.attributes
    total += w.attributes
  }
  return { sum, total, breakdown: b }
}

/** Adds the tree signals, DOM path and siblings, to `acc`. */
export function addTreeScore(fp: ElementSignals, c: ElementSignals, w: Weights, acc: ScoreSum): ScoreSum {
  acc.breakdown.path = sequenceSimilarity(fp.path, c.path)
  acc.sum += w.path * acc.breakdown.path
  acc.total += w.path
  acc.breakdown.siblings = sequenceSimilarity(fp.siblings, c.siblings)
  acc.sum += w.siblings * acc.breakdown.siblings
  acc.total += w.siblings
  return acc
}

/**
 * The highest score `c` could reach given the signals in `acc`. The signals `acc` holds are final; those still to
 * come count as perfect, except text, bounded by the lengths alone (an edit distance is at least the length
 * difference), and the name when `nameKnown` says `c.name` is final already (an element without a role has none).
 * A ranking skips the costly steps, Levenshtein, the tree, the context and the layout box, for every element whose
 * ceiling cannot beat the candidates it already holds. Adding a perfect signal can only raise a mean, so the
 * ceiling holds even when a signal counted here turns out not to apply (no box, no context).
 * @example scoreCeiling(fp, c, w, identityScore(fp, c, w)) >= scoreCandidate(fp, c, w).score // always
 */
export function scoreCeiling(
  fp: ElementSignals,
  c: ElementSignals,
  w: Weights,
  acc: ScoreSum,
  nameKnown = false,
): number {
  const done = acc.breakdown
  let sum = acc.sum
  let total = acc.total
  if (done.path === undefined) {
    sum += w.path + w.siblings
    total += w.path + w.siblings
  }
  if (done.text === undefined && (fp.text !== '' || c.text !== '')) {
    // A side without text is compared by its name (`textOf`), unknown until the name is: count it as perfect.
    const open = c.text === '' && fp.text !== '' && !nameKnown
    const la = textOf(fp, c).length
    const lb = textOf(c, fp).length
    sum += open ? w.text : (w.text * Math.min(la, lb)) / Math.max(la, lb)
    total += w.text
  }
  if (done.name === undefined && fp.name !== '') {
    sum += nameKnown ? w.name * textSimilarity(fp.name, c.name) : w.name
    total += w.name
  }
  if (done.context === undefined && fp.context) {
    sum += w.context
    total += w.context
  }
  if (done.position === undefined && fp.box) {
    sum += w.position
    total += w.position
  }
  return total > 0 ? sum / total : 0
}

/**
 * The text `a` shows, to compare with `b`'s: its visible text, or its name (aria-label, title, alt, icon) when it
 * has none and `b` has text. A label turned into an icon with `aria-label="Delete"` keeps the text signal's
 * weight instead of losing it; two fields without text still compare by name alone.
 * @example textOf({ ...icon, text: '', name: 'delete' }, button).length // 6
 */
export function textOf(a: ElementSignals, b: ElementSignals): string {
  return a.text !== '' || b.text === '' ? a.text : a.name
}

/** Adds text to `acc`, when either side has some (a side without text by its name, see `textOf`). */
export function addTextScore(fp: ElementSignals, c: ElementSignals, w: Weights, acc: ScoreSum): ScoreSum {
  if (fp.text !== '' || c.text !== '') {
    acc.breakdown.text = textSimilarity(textOf(fp, c), textOf(c, fp))
    acc.sum += w.text * acc.breakdown.text
    acc.total += w.text
  }
  return acc
}

/** Adds the name to `acc`, when the learned element had one (a candidate's name alone says nothing). */
export function addNameScore(fp: ElementSignals, c: ElementSignals, w: Weights, acc: ScoreSum): ScoreSum {
  if (fp.name !== '') {
    acc.breakdown.name = textSimilarity(fp.name, c.name)
    acc.sum += w.name * acc.breakdown.name
    acc.total += w.name
  }
  return acc
}

/** Adds the context to `acc`, when both sides were described with one. */
export function addContextScore(fp: ElementSignals, c: ElementSignals, w: Weights, acc: ScoreSum): ScoreSum {
  const context = contextSimilarity(fp.context, c.context)
  if (context !== null) {
    acc.breakdown.context = context
    acc.sum += w.context * context
    acc.total += w.context
  }
  return acc
}

/** Adds position to `acc` when both boxes are known; else the signal drops out. */
export function addPositionScore(fp: ElementSignals, c: ElementSignals, w: Weights, acc: ScoreSum): ScoreSum {
  const position = positionSimilarity(fp.box, c.box)
  if (position !== null) {
    acc.breakdown.position = position
    acc.sum += w.position * position
    acc.total += w.position
  }
  return acc
}

/** The weighted mean `acc` holds. */
export function finalScore(acc: ScoreSum): Scored {
  return { score: acc.total > 0 ? acc.sum / acc.total : 0, breakdown: acc.breakdown }
}

/**
 * Scores one candidate against the learned element: the weighted mean of the signals that apply. A signal
 * applies when the learned element had something to compare (an id, text, classes, attributes, a box). Summed in
 * the order the in-page ranking adds them, cheapest first, so that both give the very same figures.
 * @example scoreCandidate(toSignals(learned), toSignals(candidate), DEFAULT_WEIGHTS).score // 0.93
 */
export function scoreCandidate(fp: ElementSignals, c: ElementSignals, w: Weights): Scored {
  const acc = identityScore(fp, c, w)
  addNameScore(fp, c, w, addTextScore(fp, c, w, acc))
  addContextScore(fp, c, w, addTreeScore(fp, c, w, acc))
  return finalScore(addPositionScore(fp, c, w, acc))
}

/**
 * Whether two elements are written in different languages, by their `lang`: then their texts and names are not
 * comparable by spelling, and a translated label says nothing about what the element does.
 * @example translatedPair({ lang: 'en' }, { lang: 'de' }) // true
 */
export function translatedPair(a: { lang?: string }, b: { lang?: string }): boolean {
  return !!a.lang && !!b.lang && a.lang !== b.lang
}

/**
 * The weights to compare an element learned in `from` with one in `to`: across languages, text and name drop out
 * (their weight goes to 0) and identity, structure, context and position decide.
 * @example weightsAcross({ lang: 'en' }, { lang: 'ja' }, DEFAULT_WEIGHTS).text // 0
 */
export function weightsAcross(from: { lang?: string }, to: { lang?: string }, w: Weights): Weights {
  return translatedPair(from, to) ? { ...w, text: 0, name: 0 } : w
}

/** A scored element as the heal decision sees it. */
export interface RankedCandidate {
  score: number
  breakdown: Breakdown
  visible: boolean
  enabled: boolean
  /** Why the candidate does something other than the learned element (see `actionConflict`), or null. */
  conflict?: string | null
  /** True when it has the learned element's own id, test id or `name` exactly (see `anchoredTo`). */
  anchored?: boolean
}

export interface HealThresholds {
  threshold: number
  margin: number
  weights: Weights
}

export type RefusalRule = 'no-candidates' | 'below-threshold' | 'hidden' | 'disabled' | 'ambiguous' | 'different-action'

export type HealDecision<C extends RankedCandidate = RankedCandidate> =
  { heal: true; best: C; runnerUp: C | null } | { heal: false; reason: RefusalRule; best: C | null; runnerUp: C | null }

/**
 * The score from a breakdown with one signal left out (its weight removed from the mean too).
 * @example scoreWithout({ text: 1, position: 0 }, DEFAULT_WEIGHTS, 'position') // 1
 */
export function scoreWithout(b: Breakdown, w: Weights, left: Signal): number {
  let sum = 0
  let total = 0
  for (const k in b) {
    const v = b[k as Signal]
    if (k === left || v === undefined) continue
    sum += w[k as Signal] * v
    total += w[k as Signal]
  }
  return total > 0 ? sum / total : 0
}

/**
 * The heal rule, in one place (candidates sorted best first). Only visible candidates that do the same thing as
 * the learned element compete: a hidden responsive duplicate never blocks a visible candidate, and a look-alike
 * that does something else (`conflict`) never heals however high it scores. The best of those heals only when it
 * reaches the threshold, is enabled, and leads every other competitor by the margin, both on the full score and
 * with position left out: position ranks but never decides alone. When nothing visible qualifies and the best
 * element overall is hidden, the reason is `hidden` (the learned element is there, just not shown).
 * @example decideHeal(ranked, { threshold: 0.6, margin: 0.1, weights: DEFAULT_WEIGHTS }).heal
 */
export function decideHeal<C extends RankedCandidate>(ranked: readonly C[], t: HealThresholds): HealDecision<C> {
  const top = ranked[0] ?? null
  if (!top) return { heal: false, reason: 'no-candidates', best: null, runnerUp: null }
  const competing = ranked.filter((c) => c.visible && !c.conflict)
  const best = competing[0] ?? null
  const runnerUp = competing[1] ?? null
  if (!best || best.score < t.threshold) {
    const strongest = ranked.find((c) => c.score >= t.threshold)
    const reason: RefusalRule = !strongest
      ? 'below-threshold'
      : strongest.conflict
        ? 'different-action'
        : !strongest.visible
          ? 'hidden'
          : 'below-threshold'
    return { heal: false, reason, best: best ?? top, runnerUp }
  }
  if (!best.enabled) return { heal: false, reason: 'disabled', best, runnerUp }
  // The epsilon keeps a lead of exactly the margin from failing on floating-point noise.
  const margin = t.margin - 1e-9
  const leads = (c: C, others: readonly C[]): boolean => {
    const without = scoreWithout(c.breakdown, t.weights, 'position')
    return others.every(
      (o) => c.score - o.score >= margin && without - scoreWithout(o.breakdown, t.weights, 'position') >= margin,
    )
  }
  if (leads(best, competing.slice(1))) return { heal: true, best, runnerUp }
  // Too close to call on the score: the one competitor within the margin that kept the learned element's own id,
  // test id or name wins (a section moved with its button, a look-alike left in the old place). Two or none: refuse.
  const anchored = competing.filter((c) => c.anchored && best.score - c.score < margin)
  const winner = anchored.length === 1 && competing.filter((c) => c.anchored).length === 1 ? anchored[0]! : null
  if (winner && winner.score >= t.threshold && winner.enabled) {
    return { heal: true, best: winner, runnerUp: winner === best ? runnerUp : best }
  }
  return { heal: false, reason: 'ambiguous', best, runnerUp }
}

/**
 * Whether `c` kept the learned element's own identity: the same non-empty id, test id or `name` attribute. Decides
 * between candidates the score cannot tell apart (see `decideHeal`), never on its own.
 * @example anchoredTo(learned, moved) // true: both are #newsletter-subscribe
 */
export function anchoredTo(learned: ElementFingerprint, c: ElementFingerprint): boolean {
  if (learned.id !== '' && c.id === learned.id) return true
  if (learned.testId !== null && c.testId === learned.testId) return true
  const name = learned.attrs.name
  return name !== undefined && name !== '' && c.attrs.name === name
}
