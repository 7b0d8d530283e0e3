import { describe, expect, test } from 'vitest'
import { ConfigError } from '../../src/errors.js'
import {
  formatCandidates,
  idSelector,
  jsString,
  locatorCode,
  readFingerprint,
  resolveHealSettings,
} from '../../src/heal/healer.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import { DEFAULT_WEIGHTS } from '../../src/heal/similarity.js'
import type { ElementFingerprint } from '../../src/heal/similarity.js'

describe('resolveHealSettings', () => {
  test('later layers win over earlier ones and over the defaults', () => {
    const s = resolveHealSettings({ threshold: 0.6, weights: { text: 5 } }, undefined, { margin: 0.2, threshold: 0.7 })
    expect(s).toMatchObject({ threshold: 0.7, margin: 0.2, report: 5 })
    expect(s.weights).toEqual({ ...DEFAULT_WEIGHTS, text: 5 })
    expect(s.describe.testIdAttribute).toBe('data-testid')
    expect(resolveHealSettings({ testIdAttribute: 'data-qa' }).describe.testIdAttribute).toBe('data-qa')
  })

  test('undefined values do not erase a setting', () => {
    expect(resolveHealSettings({ threshold: 0.6 }, { threshold: undefined }).threshold).toBe(0.6)
  })

  test('every out-of-range value is reported at once', () => {
    const error = (() => {
      try {
        resolveHealSettings({ threshold: 1.5, margin: -0.1, weights: { text: -1 }, report: 1 })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).issues).toEqual([
      'heal.threshold: must be between 0 and 1, got 1.5',
      'heal.margin: must be between 0 and 1, got -0.1',
      'heal.weights.text: must be a finite number >= 0, got -1',
      'heal.report: must be an integer >= 2, got 1',
    ])
  })
})

test('locatorCode writes the Playwright code to paste into the test', () => {
  expect(locatorCode({ kind: 'testid', value: 'pay' })).toBe("getByTestId('pay')")
  expect(locatorCode({ kind: 'id', value: 'pay-now' })).toBe("locator('#pay-now')")
  expect(locatorCode({ kind: 'id', value: '1st' })).toBe(`locator('[id="1st"]')`)
  expect(locatorCode({ kind: 'role', role: 'button', name: "Don't pay" })).toBe(
    "getByRole('button', { name: 'Don\\'t pay', exact: true })",
  )
  expect(locatorCode({ kind: 'css', value: '#checkout > div > button:nth-of-type(2)' })).toBe(
    "locator('#checkout > div > button:nth-of-type(2)')",
  )
  expect(idSelector('a"b')).toBe('[id="a\\"b"]')
  expect(jsString('a\\b\nc')).toBe("'a\\\\b\\nc'")
})

test('readFingerprint accepts its own shape only', () => {
  const element: ElementFingerprint = {
    tag: 'button',
    id: '',
    text: 'Go',
    classes: [],
    attrs: {},
    path: ['html', 'body'],
    siblings: ['*'],
    box: null,
    testId: null,
  }
  expect(readFingerprint({ v: 1, element })).toEqual(element)
  expect(readFingerprint({ v: 2, element })).toEqual(element)
  expect(readFingerprint({ v: 3, element })).toBeNull()
  expect(readFingerprint({ v: 1, element: { ...element, path: 'html' } })).toBeNull()
  expect(readFingerprint('nonsense')).toBeNull()
  expect(readFingerprint(null)).toBeNull()
})

test('formatCandidates lists score, element, state and signals', () => {
  const text = formatCandidates([
    {
      score: 0.734,
      breakdown: { tag: 1, text: 0.5 },
      visible: false,
      enabled: true,
      selector: '#a',
      description: 'button#a "Go"',
      fingerprint: {
        tag: 'button',
        id: 'a',
        text: 'Go',
        classes: [],
        attrs: {},
        path: [],
        siblings: [],
        box: null,
        testId: null,
      },
    },
  ])
  expect(text).toBe('  0.73  button#a "Go" [hidden]\n        tag 1.00, text 0.50')
  expect(formatCandidates([])).toBe('  (no elements in the page)')
})

test('the memory store keeps fingerprints per test and locator and heals newest first', async () => {
  const store = createMemoryHealStore()
  await store.putFingerprint({ testId: 't', locator: "locator('#a')", data: { v: 1 }, updatedAt: 'x' })
  expect(await store.getFingerprint('t', "locator('#a')")).toMatchObject({ data: { v: 1 } })
  expect(await store.getFingerprint('u', "locator('#a')")).toBeNull()
  const heal = { oldLocator: 'a', newLocator: 'b', score: 0.9, breakdown: {}, url: null, runId: null }
  await store.appendHeal({ ...heal, testId: 't', at: '2025-01-01T00:00:00.000Z' })
  await store.appendHeal({ ...heal, testId: 'u', at: '2025-01-02T00:00:00.000Z' })
  await store.appendHeal({ ...heal, testId: 't', at: '2025-01-03T00:00:00.000Z' })
  expect((await store.listHeals()).map((h) => h.at.slice(8, 10))).toEqual(['03', '02', '01'])
  expect((await store.listHeals({ testId: 't', limit: 1 })).map((h) => h.at.slice(8, 10))).toEqual(['03'])
  expect(await store.listHeals({ since: '2025-01-02T00:00:00.000Z' })).toHaveLength(2)
})
