import { describe, expect, test } from 'vitest'
import { actionConflict, sameStructure } from '../../src/heal/intent.js'
import {
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  DEFAULT_WEIGHTS,
  anchoredTo,
  decideHeal,
  scoreCandidate,
  textOf,
  toSignals,
  vetoFloor,
  weightsAcross,
} from '../../src/heal/similarity.js'
import type { ElementFingerprint, RankedCandidate } from '../../src/heal/similarity.js'

// The evidence issue 28 added: names across languages, structure over an unknown verb, accessible names as text,
// identity anchors between close candidates, row keys that must be unique, and the veto floor.

const rules = { threshold: DEFAULT_THRESHOLD, margin: DEFAULT_MARGIN, weights: DEFAULT_WEIGHTS }

function button(over: Partial<ElementFingerprint> = {}): ElementFingerprint {
  return {
    tag: 'button',
    id: 'save',
    text: 'Save',
    classes: ['btn', 'primary'],
    attrs: { type: 'submit' },
    path: ['html', 'body', 'main', 'form#settings', 'div'],
    siblings: ['button', '*'],
    box: { x: 100, y: 300, width: 90, height: 30 },
    testId: null,
    role: 'button',
    name: 'Save',
    context: { item: '', form: 'settings|||', region: 'main|Settings', heading: 'Settings' },
    lang: 'en',
    ...over,
  }
}

const candidate = (score: number, over: Partial<RankedCandidate> = {}): RankedCandidate => ({
  score,
  breakdown: { text: score },
  visible: true,
  enabled: true,
  conflict: null,
  ...over,
})

describe('translations', () => {
  const german = button({ text: 'Speichern', name: 'Speichern', lang: 'de' })

  test('across languages text and name drop out of the score', () => {
    expect(weightsAcross(button(), german, DEFAULT_WEIGHTS)).toMatchObject({ text: 0, name: 0, id: 2 })
    expect(weightsAcross(button(), button({ lang: '' }), DEFAULT_WEIGHTS)).toBe(DEFAULT_WEIGHTS)
    const w = weightsAcross(button(), german, DEFAULT_WEIGHTS)
    expect(scoreCandidate(toSignals(button()), toSignals(german), w).score).toBeGreaterThan(0.95)
  })

  test('a translated label is no other action; another role or destination still is', () => {
    expect(actionConflict(button(), german)).toBeNull()
    expect(actionConflict(button(), { ...german, role: 'link' })).toMatch(/another kind of control/)
    const link = button({ tag: 'a', role: 'link', attrs: { href: '#orders' }, text: 'Orders', name: 'Orders' })
    const french = { ...link, text: 'Commandes', name: 'Commandes', lang: 'fr' }
    expect(actionConflict(link, french)).toBeNull()
    expect(actionConflict(link, { ...french, attrs: { href: '#help' } })).toMatch(/leads somewhere else/)
  })

  test('in one language, an unknown word where a verb was is a relabel only when the structure is the same', () => {
    const relabel = button({ text: 'Publier', name: 'Publier', lang: '' })
    expect(sameStructure(button({ lang: '' }), relabel)).toBe(true)
    expect(actionConflict(button({ lang: '' }), relabel)).toBeNull()
    expect(actionConflict(button({ lang: '' }), { ...relabel, id: 'publish' })).toMatch(/does something else/)
    // Two known verbs: Delete where Save was is another action whatever the structure.
    expect(actionConflict(button(), button({ text: 'Delete', name: 'Delete' }))).toMatch(/does something else/)
  })
})

describe('rows and sections', () => {
  const inRow = (item: string) =>
    button({ id: '', text: 'Remove', name: 'Remove', context: { item, form: '', region: '', heading: 'Cart' } })

  test('a row nothing identifies uniquely vetoes a learned row key; a row of its own decides as before', () => {
    expect(actionConflict(inRow('row|Green mug'), inRow('row|'))).toMatch(/nothing identifies uniquely/)
    expect(actionConflict(inRow('row|Green mug'), inRow('row|Black mug'))).toMatch(/another row/)
    expect(actionConflict(inRow('row|Green mug'), inRow('row|Green mug'))).toBeNull()
    // Learned in a row that nothing identified: the row decides nothing.
    expect(actionConflict(inRow('row|'), inRow('row|Black mug'))).toBeNull()
  })

  test("another labelled section's control is another control, unless it kept the learned id", () => {
    const inSection = (label: string, id: string) =>
      button({
        id,
        text: 'Export',
        name: 'Export',
        context: { item: '', form: '', region: `section|${label}`, heading: label },
      })
    expect(actionConflict(inSection('Sales', 'export-sales'), inSection('Costs', 'export-costs'))).toMatch(
      /another section/,
    )
    expect(actionConflict(inSection('Sales', 'export-sales'), inSection('Revenue', 'export-sales'))).toBeNull()
    // Landmarks are not sections: a control moved from the sidebar to the footer is judged by the rest.
    const aside = button({ context: { item: '', form: '', region: 'complementary|Stay in touch', heading: '' } })
    const footer = button({ id: 'x', context: { item: '', form: '', region: 'contentinfo|Newsletter', heading: '' } })
    expect(actionConflict(aside, footer)).toBeNull()
  })
})

describe('scores', () => {
  test('an icon button with an accessible name keeps the text signal', () => {
    const icon = toSignals(button({ text: '', name: 'Save', classes: ['x9'] }))
    expect(textOf(icon, toSignals(button()))).toBe('save')
    expect(scoreCandidate(toSignals(button()), icon, DEFAULT_WEIGHTS).breakdown.text).toBe(1)
    // Two fields without text still leave text out.
    const field = toSignals(button({ tag: 'input', text: '', name: 'Email' }))
    expect(scoreCandidate(field, field, DEFAULT_WEIGHTS).breakdown.text).toBeUndefined()
  })

  test('the veto floor lies the margin and the weight of position under the threshold', () => {
    expect(vetoFloor(rules)).toBeCloseTo(0.6 - 0.1 - 0.5 / 15, 10)
    expect(vetoFloor({ ...rules, threshold: 0.05 })).toBe(0)
  })

  test('between candidates within the margin, the one that kept the learned id, test id or name heals', () => {
    expect(anchoredTo(button(), button({ text: 'x' }))).toBe(true)
    expect(anchoredTo(button(), button({ id: 'other' }))).toBe(false)
    expect(anchoredTo(button({ id: '', attrs: { name: 'q' } }), button({ id: '', attrs: { name: 'q' } }))).toBe(true)
    const lookAlike = candidate(0.87)
    const moved = candidate(0.82, { anchored: true })
    const decision = decideHeal([lookAlike, moved], rules)
    expect(decision).toMatchObject({ heal: true, best: moved, runnerUp: lookAlike })
    // Two anchored, or none, or one far below: refused.
    expect(decideHeal([lookAlike, moved, candidate(0.8, { anchored: true })], rules)).toMatchObject({ heal: false })
    expect(decideHeal([lookAlike, candidate(0.82)], rules)).toMatchObject({ heal: false, reason: 'ambiguous' })
    expect(decideHeal([lookAlike, candidate(0.86), candidate(0.7, { anchored: true })], rules)).toMatchObject({
      heal: false,
    })
    // An anchored candidate under the threshold never heals.
    expect(decideHeal([candidate(0.62), candidate(0.58, { anchored: true })], rules)).toMatchObject({ heal: false })
  })
})
