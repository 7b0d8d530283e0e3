import { describe, expect, test } from 'vitest'
import {
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  DEFAULT_WEIGHTS,
  addContextScore,
  addNameScore,
  addPositionScore,
  addTextScore,
  decideHeal,
  finalScore,
  jaccard,
  lcsLength,
  levenshtein,
  positionSimilarity,
  scoreCandidate,
  scoreCeiling,
  scoreWithout,
  sequenceSimilarity,
  addTreeScore,
  identityScore,
  textSimilarity,
  toSignals,
} from '../../src/heal/similarity.js'
import type { ElementFingerprint, RankedCandidate } from '../../src/heal/similarity.js'

const rules = { threshold: DEFAULT_THRESHOLD, margin: DEFAULT_MARGIN, weights: DEFAULT_WEIGHTS }

/** The pay button of a checkout form, as a fingerprint would describe it. */
function payButton(over: Partial<ElementFingerprint> = {}): ElementFingerprint {
  return {
    tag: 'button',
    id: 'pay',
    text: 'Place order',
    classes: ['btn', 'btn-primary'],
    attrs: { type: 'submit', name: 'pay', 'data-testid': 'pay' },
    path: ['html', 'body', 'main', 'form#checkout', 'div'],
    siblings: ['button', '*'],
    box: { x: 100, y: 300, width: 90, height: 30 },
    testId: 'pay',
    ...over,
  }
}

const score = (learned: ElementFingerprint, candidate: ElementFingerprint) =>
  scoreCandidate(toSignals(learned), toSignals(candidate), DEFAULT_WEIGHTS)

/** A plain dynamic-programming Levenshtein, the reference for the optimised one. */
function naiveLevenshtein(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
  }
  return d[a.length]![b.length]!
}

/** Deterministic pseudo-random numbers, so that property checks are reproducible. */
function prng(seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

describe('levenshtein', () => {
  test('counts insertions, deletions and substitutions', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3)
    expect(levenshtein('', 'abc')).toBe(3)
    expect(levenshtein('abc', '')).toBe(3)
    expect(levenshtein('same', 'same')).toBe(0)
    expect(levenshtein('abcXdef', 'abcYdef')).toBe(1)
    expect(levenshtein('Place order', 'Place your order')).toBe(5)
  })

  test('agrees with the textbook algorithm on random strings', () => {
    const rand = prng(7)
    const word = () => Array.from({ length: Math.floor(rand() * 12) }, () => 'abcde'[Math.floor(rand() * 5)]).join('')
    for (let i = 0; i < 500; i++) {
      const a = word()
      const b = word()
      expect(levenshtein(a, b), `${a} / ${b}`).toBe(naiveLevenshtein(a, b))
      expect(levenshtein(b, a)).toBe(levenshtein(a, b))
    }
  })
})

test('textSimilarity is 1 - distance / longer length', () => {
  expect(textSimilarity('', '')).toBe(1)
  expect(textSimilarity('abc', '')).toBe(0)
  expect(textSimilarity('Place order', 'Place your order')).toBeCloseTo(1 - 5 / 16)
  expect(textSimilarity('submit', 'send')).toBeCloseTo(1 - 5 / 6)
})

test('jaccard is intersection over union of token sets', () => {
  expect(jaccard([], [])).toBe(1)
  expect(jaccard(['a'], [])).toBe(0)
  expect(jaccard(['btn', 'primary'], ['btn', 'large'])).toBeCloseTo(1 / 3)
  expect(jaccard(['a', 'a', 'b'], ['b', 'a'])).toBe(1)
  expect(jaccard(['x', 'y'], ['z'])).toBe(0)
})

test('lcsLength and sequenceSimilarity compare ordered paths', () => {
  expect(lcsLength(['html', 'body', 'form', 'button'], ['html', 'body', 'div', 'form', 'button'])).toBe(4)
  expect(lcsLength(['a', 'b', 'c'], ['c', 'b', 'a'])).toBe(1)
  expect(lcsLength([], ['a'])).toBe(0)
  expect(sequenceSimilarity([], [])).toBe(1)
  expect(sequenceSimilarity(['html', 'body', 'form'], ['html', 'body', 'div', 'form'])).toBeCloseTo(6 / 7)
  expect(sequenceSimilarity(['button', '*'], ['*', 'button'])).toBeCloseTo(0.5)
})

test('positionSimilarity halves at 100 px and drops out without a box', () => {
  const at = (x: number, y: number) => ({ x, y, width: 10, height: 10 })
  expect(positionSimilarity(at(0, 0), at(0, 0))).toBe(1)
  expect(positionSimilarity(at(0, 0), at(100, 0))).toBeCloseTo(0.5)
  expect(positionSimilarity(at(0, 0), at(0, 300))).toBeCloseTo(0.25)
  expect(positionSimilarity(null, at(0, 0))).toBeNull()
})

describe('scoreCandidate', () => {
  test('the learned element scores 1 against itself, with every signal in the breakdown', () => {
    const s = score(payButton(), payButton())
    expect(s.score).toBe(1)
    expect(Object.keys(s.breakdown).sort()).toEqual(
      ['attributes', 'classes', 'id', 'path', 'position', 'siblings', 'tag', 'text'].sort(),
    )
  })

  test('signals the learned element had nothing for drop out instead of counting as misses', () => {
    const bare = payButton({ id: '', classes: [], attrs: {}, box: null })
    const s = score(bare, { ...bare, id: 'new-id' })
    expect(s.breakdown).not.toHaveProperty('id')
    expect(s.breakdown).not.toHaveProperty('classes')
    expect(s.breakdown).not.toHaveProperty('position')
    expect(s.score).toBe(1)
  })

  test('text is compared without case, style is not an attribute', () => {
    const restyled = payButton({ text: 'PLACE ORDER', attrs: { ...payButton().attrs, style: 'color: red' } })
    const s = score(payButton(), restyled)
    expect(s.breakdown.text).toBe(1)
    expect(s.breakdown.attributes).toBe(1)
  })

  test('a renamed id, a wrapper and a moved box still score well above the threshold', () => {
    const moved = payButton({
      id: 'submit-order',
      path: ['html', 'body', 'main', 'form#checkout', 'div', 'span'],
      box: { x: 100, y: 120, width: 90, height: 30 },
    })
    expect(score(payButton(), moved).score).toBeGreaterThan(0.75)
  })

  test("the removed element's neighbour stays below the threshold on structure alone", () => {
    const cancel = payButton({
      id: 'cancel',
      text: 'Cancel',
      classes: ['btn', 'btn-secondary'],
      attrs: { type: 'button' },
      siblings: ['*'],
      box: { x: 10, y: 300, width: 80, height: 30 },
      testId: null,
    })
    expect(score(payButton(), cancel).score).toBeLessThan(DEFAULT_THRESHOLD)
  })

  test('weights are honoured: a zero weight removes a signal from the score', () => {
    const other = payButton({ text: 'Something else entirely' })
    const weights = { ...DEFAULT_WEIGHTS, text: 0 }
    expect(scoreCandidate(toSignals(payButton()), toSignals(other), weights).score).toBe(1)
  })

  test('the ceiling is never below the final score at any step of the ranking, whatever the candidate', () => {
    const rand = prng(11)
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!
    const checkout = { item: '', form: 'checkout|||', region: 'main|', heading: 'checkout' }
    const fp = toSignals(payButton({ role: 'button', name: 'Place order', context: checkout }))
    let tighter = 0
    for (let i = 0; i < 2000; i++) {
      const c = toSignals(
        payButton({
          tag: pick(['button', 'a', 'div']),
          id: pick(['', 'pay', 'pay-now', 'x']),
          text: pick(['', 'Place order', 'Place your order', 'Cancel', 'A much longer text than the others']),
          classes: pick([[], ['btn'], ['btn', 'btn-primary']]),
          attrs: pick<Record<string, string>>([{}, { type: 'submit' }, { type: 'submit', name: 'pay' }]),
          box: pick([null, { x: 0, y: 0, width: 5, height: 5 }, { x: 100, y: 300, width: 90, height: 30 }]),
          path: pick([['html', 'body'], ['html', 'body', 'main', 'form#checkout', 'div'], []]),
          siblings: pick([['*'], ['button', '*'], ['*', 'a', 'a', 'a']]),
          name: pick(['', 'Place order', 'Cancel']),
          context: pick([undefined, checkout, { ...checkout, item: 'row|alice', heading: 'users' }]),
        }),
      )
      const w = DEFAULT_WEIGHTS
      // The ranking's steps, in its order: identity, text and name, tree, context, position.
      const acc = identityScore(fp, c, w)
      const identity = scoreCeiling(fp, c, w, acc)
      const nameKnown = scoreCeiling(fp, c, w, acc, true)
      const content = scoreCeiling(fp, c, w, addNameScore(fp, c, w, addTextScore(fp, c, w, acc)))
      const tree = scoreCeiling(fp, c, w, addTreeScore(fp, c, w, acc))
      const context = scoreCeiling(fp, c, w, addContextScore(fp, c, w, acc))
      const final = finalScore(addPositionScore(fp, c, w, acc)).score
      const steps = [identity, nameKnown, content, tree, context, final]
      for (let s = 1; s < steps.length; s++)
        expect(steps[s - 1]!, `step ${s}`).toBeGreaterThanOrEqual(steps[s]! - 1e-12)
      if (nameKnown < identity) tighter++
      expect(final).toBe(scoreCandidate(fp, c, w).score)
    }
    // A known name does bound tighter, or the ranking would gain nothing from it.
    expect(tighter).toBeGreaterThan(0)
  })
})

describe('decideHeal', () => {
  const cand = (score: number, over: Partial<RankedCandidate> = {}): RankedCandidate => ({
    score,
    breakdown: { text: score },
    visible: true,
    enabled: true,
    ...over,
  })

  test('heals a clear winner', () => {
    const d = decideHeal([cand(0.9), cand(0.4)], rules)
    expect(d).toMatchObject({ heal: true, best: { score: 0.9 } })
  })

  test('heals a lone candidate above the threshold', () => {
    expect(decideHeal([cand(0.6)], rules).heal).toBe(true)
  })

  test('refuses an empty page, a weak best, a hidden or disabled best', () => {
    expect(decideHeal([], rules)).toMatchObject({ heal: false, reason: 'no-candidates' })
    expect(decideHeal([cand(0.59), cand(0.1)], rules)).toMatchObject({ heal: false, reason: 'below-threshold' })
    const hidden = cand(0.9, { visible: false })
    const disabled = cand(0.9, { enabled: false })
    expect(decideHeal([hidden, cand(0.5)], rules)).toMatchObject({ heal: false, reason: 'hidden' })
    expect(decideHeal([disabled, cand(0.3)], rules)).toMatchObject({ heal: false, reason: 'disabled' })
  })

  test('a hidden duplicate never blocks a visible candidate, whatever it scores', () => {
    const hidden = cand(0.95, { visible: false })
    expect(decideHeal([hidden, cand(0.9), cand(0.5)], rules)).toMatchObject({ heal: true, best: { score: 0.9 } })
  })

  test('a candidate that does something else neither heals nor blocks the others', () => {
    const other = cand(0.9, { conflict: 'does something else' })
    expect(decideHeal([other, cand(0.4)], rules)).toMatchObject({ heal: false, reason: 'different-action' })
    expect(decideHeal([other, cand(0.85), cand(0.3)], rules)).toMatchObject({ heal: true, best: { score: 0.85 } })
  })

  test('refuses when the runner-up is within the margin, and the margin is configurable', () => {
    expect(decideHeal([cand(0.8), cand(0.75)], rules)).toMatchObject({ heal: false, reason: 'ambiguous' })
    expect(decideHeal([cand(0.8), cand(0.7)], rules).heal).toBe(true)
    expect(decideHeal([cand(0.8), cand(0.75)], { ...rules, margin: 0.02 }).heal).toBe(true)
    expect(decideHeal([cand(0.8), cand(0.5)], { ...rules, margin: 0.4 }).heal).toBe(false)
    expect(decideHeal([cand(0.8), cand(0.1)], { ...rules, threshold: 0.9 }).heal).toBe(false)
  })

  test('position alone never opens the margin', () => {
    // Identical but for position: the look-alike sits where the learned element was.
    const same = { tag: 1, classes: 1, path: 1, siblings: 1 }
    const twin = cand(0, { breakdown: { ...same, position: 1 } })
    const moved = cand(0, { breakdown: { ...same, position: 0 } })
    const weights = { ...DEFAULT_WEIGHTS, position: 5 }
    // Leaving out a signal the breakdown does not have gives the full score.
    twin.score = scoreWithout(twin.breakdown, weights, 'text')
    moved.score = scoreWithout(moved.breakdown, weights, 'text')
    expect(twin.score - moved.score).toBeGreaterThan(DEFAULT_MARGIN)
    expect(decideHeal([twin, moved], { ...rules, weights })).toMatchObject({ heal: false, reason: 'ambiguous' })
  })

  test('scoreWithout removes the signal and its weight', () => {
    expect(scoreWithout({ text: 1, position: 0 }, DEFAULT_WEIGHTS, 'position')).toBe(1)
    expect(scoreWithout({ tag: 1, text: 0 }, DEFAULT_WEIGHTS, 'position')).toBeCloseTo(1 / 4)
    expect(scoreWithout({}, DEFAULT_WEIGHTS, 'tag')).toBe(0)
  })
})
