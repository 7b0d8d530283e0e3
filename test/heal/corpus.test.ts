import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as fingerprint from '../../src/heal/fingerprint.js'
import { HealMismatchError, HealRefusedError } from '../../src/heal/healer.js'
import * as similarity from '../../src/heal/similarity.js'
import { createHealingPage, createMemoryHealStore } from '../../src/playwright/page.js'
import { launchChromium } from './helpers/browser.js'
import { CASES, runBaseline, runFlakewatch, summarize } from './corpus/run-corpus.mjs'
import type { CaseResult } from './corpus/run-corpus.mjs'

// The heal corpus (test/heal/corpus/cases.mjs) in real Chromium, through the public page entry: one browser, one
// page reused for every case. The bench (bench/heal-corpus.mjs) runs the same corpus for the figures.

let browser: Browser
let results: CaseResult[] = []
let baseline: CaseResult[] = []

beforeAll(async () => {
  browser = await launchChromium()
  const raw = await browser.newPage()
  results = await runFlakewatch({ raw, createHealingPage, createMemoryHealStore })
  baseline = await runBaseline({ raw, fingerprint, similarity })
}, 600_000)

afterAll(async () => {
  await browser?.close()
})

test('the corpus has at least 40 pairs and every category the issue names', () => {
  expect(CASES.length).toBeGreaterThanOrEqual(40)
  expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length)
  const categories = new Set(CASES.map((c) => c.category))
  for (const c of [
    'id renamed',
    'silent mis-resolution',
    'hashed or renamed classes',
    'test id removed or renamed',
    'tag change',
    'text change',
    'wrapper',
    'move',
    'sibling reorder',
    'decoy',
    'repeated rows',
    'hidden duplicate',
    'icon-only button',
    'big page',
    'removed, single look-alike',
  ]) {
    expect(categories, c).toContain(c)
  }
})

describe('every case', () => {
  test.for(CASES.map((c) => [c.id, c.expect] as const))('%s: %s', ([id, expected]) => {
    const r = results.find((x) => x.id === id)!
    if (expected === 'refuse') {
      expect(r.outcome, id).toBe('refused')
      // A refusal is an error that says why and lists the candidates.
      expect(r.error).toBeInstanceOf(HealRefusedError)
      expect((r.error as Error).message).toMatch(/^locator\.evaluate: /)
    } else {
      expect(r.outcome, `${id}: ${String((r.error as Error | null)?.message)}`).toBe('correct')
    }
  })
})

test('the targets hold, and the similarity-only baseline misses them on the same corpus', () => {
  const ours = summarize(results)
  const base = summarize(baseline)
  expect(ours.healAccuracy).toBeGreaterThanOrEqual(0.9)
  expect(ours.wrongRate).toBeLessThanOrEqual(0.02)
  expect(ours.refusalRate).toBeGreaterThanOrEqual(0.85)
  // The corpus is hard where it should be: plain similarity acts on the wrong element in many cases.
  expect(base.wrongRate).toBeGreaterThan(0.1)
  expect(base.refusalRate).toBeLessThan(0.85)
})

test('a locator that finds another element and has no right one fails with both fingerprints', () => {
  const r = results.find((x) => x.id === 'misresolved-no-alternative')!
  expect(r.error).toBeInstanceOf(HealMismatchError)
  const error = r.error as HealMismatchError
  expect(error.reason).toBe('mis-resolved')
  expect(error.learned?.name).toBe('Delete project')
  expect(error.found.name).toBe('Duplicate project')
  expect(error.message).toContain('Learned: button#primary-action "Delete project"')
  expect(error.message).toContain('Found:   button#primary-action "Duplicate project"')
})

test('a silent mis-resolution heals to the learned element and says so', () => {
  const r = results.find((x) => x.id === 'misresolved-tab-moved')!
  expect(r.outcome).toBe('correct')
  expect(r.logs).toEqual([
    expect.stringContaining("healed locator('#tab-2') (it found another element than the learned one)"),
  ])
  expect(r.logs[0]).toContain("getByRole('tab', { name: 'Billing', exact: true })")
})
