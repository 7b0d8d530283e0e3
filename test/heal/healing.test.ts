import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { inPage, rankPageFunction } from '../../src/heal/fingerprint.js'
import * as fingerprint from '../../src/heal/fingerprint.js'
import { HealRefusedError, readFingerprint, resolveHealSettings } from '../../src/heal/healer.js'
import type { HealStore } from '../../src/heal/healer.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import * as similarity from '../../src/heal/similarity.js'
import { createHealingPage, withHealing } from '../../src/playwright/page.js'
import type { HealingPage, HealingPageOptions } from '../../src/playwright/page.js'
import { launchChromium, servePages } from './helpers/browser.js'
import type { PageServer } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'

const TEST_ID = 'e2e::checkout.spec.ts::pays'
/** Suggestions come in Playwright's recommended order: role and name first. */
const PAY_ROLE = "getByRole('button', { name: 'Place order', exact: true })"

let browser: Browser
let server: PageServer
let contexts: BrowserContext[] = []
let served = 0

beforeAll(async () => {
  browser = await launchChromium()
  server = await servePages()
})

afterEach(async () => {
  await Promise.all(contexts.map((c) => c.close()))
  contexts = []
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

interface Opened {
  page: HealingPage
  raw: Page
  logs: string[]
}

async function open(store: HealStore, html: string, options: Partial<HealingPageOptions> = {}): Promise<Opened> {
  const context = await browser.newContext()
  contexts.push(context)
  const raw = await context.newPage()
  // Short timeouts keep the refusals quick; the probe must give up before the action does.
  raw.setDefaultTimeout(3000)
  const logs: string[] = []
  const page = createHealingPage(raw, {
    store,
    testId: TEST_ID,
    runId: 'run-1',
    probeTimeout: 1000,
    logger: { warn: (m) => logs.push(m) },
    ...options,
  })
  await page.goto(server.set(`/page-${served++}`, html))
  return { page, raw, logs }
}

const clicked = (page: Page) => page.evaluate(() => document.body.dataset.clicked ?? null)

type Locate = (page: Page) => Locator

/** Learns `locate` by clicking it on the checkout page, then opens the mutated page on the same store. */
async function learnThenMutate(
  mutation: keyof typeof MUTATIONS,
  locate: Locate,
  options?: Partial<HealingPageOptions>,
) {
  const store = createMemoryHealStore()
  const learned = await open(store, CHECKOUT)
  await locate(learned.page).click()
  expect(await clicked(learned.raw)).toBe('pay')
  expect(learned.page.healed).toBe(false)
  const mutated = await open(store, MUTATIONS[mutation](CHECKOUT), options)
  return { store, learned, mutated }
}

async function refusal(action: Promise<unknown>): Promise<HealRefusedError> {
  const error = await action.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(HealRefusedError)
  return error as HealRefusedError
}

describe('learning', () => {
  test('a successful action stores the fingerprint, keyed by test and locator', async () => {
    const store = createMemoryHealStore()
    const { page } = await open(store, CHECKOUT)
    await page.getByTestId('pay').click()
    const stored = await store.getFingerprint(TEST_ID, "getByTestId('pay')")
    expect(stored).toMatchObject({ testId: TEST_ID, locator: "getByTestId('pay')" })
    const fp = readFingerprint(stored!.data)
    expect(fp).toMatchObject({
      tag: 'button',
      id: 'pay',
      text: 'Place order',
      classes: ['btn', 'btn-primary'],
      attrs: { type: 'submit', name: 'pay', 'data-testid': 'pay', onclick: "mark('pay')" },
      path: ['html', 'body', 'main', 'form#checkout', 'div'],
      siblings: ['button', '*'],
      testId: 'pay',
    })
    expect(fp!.box!.width).toBeGreaterThan(0)
  })

  test('locator keys read like the code that built them', async () => {
    const store = createMemoryHealStore()
    const { page } = await open(store, CHECKOUT)
    await page.getByRole('button', { name: 'Place order', exact: true }).click()
    await page.locator('#checkout').getByLabel('Email').fill('a@example.com')
    await page
      .locator('form', { has: page.getByTestId('pay') })
      .getByRole('button')
      .nth(1)
      .click()
    await page
      .getByText(/place order/i)
      .describe('the pay button')
      .textContent()
    const keys = [
      "getByRole('button', { name: 'Place order', exact: true })",
      "locator('#checkout').getByLabel('Email')",
      "locator('form', { has: getByTestId('pay') }).getByRole('button').nth(1)",
      'getByText(/place order/i)',
    ]
    for (const key of keys) expect(await store.getFingerprint(TEST_ID, key), key).not.toBeNull()
  })

  test('a failing action without a fingerprint fails as it would without flakewatch', async () => {
    const store = createMemoryHealStore()
    const { page } = await open(store, CHECKOUT)
    const error = await page
      .locator('#nowhere')
      .click()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'TimeoutError' })
    expect(error).not.toBeInstanceOf(HealRefusedError)
    expect(await store.getFingerprint(TEST_ID, "locator('#nowhere')")).toBeNull()
  })

  test('an element that comes after the probe gave up is still used, and learned', async () => {
    const store = createMemoryHealStore()
    const { page, raw } = await open(store, MUTATIONS.late(CHECKOUT))
    await page.getByTestId('pay').click()
    expect(await clicked(raw)).toBe('pay')
    expect(await store.getFingerprint(TEST_ID, "getByTestId('pay')")).not.toBeNull()
  })

  test('multi-element reads and other page methods pass straight through', async () => {
    const { page } = await open(createMemoryHealStore(), CHECKOUT)
    expect(await page.getByRole('button').count()).toBe(3)
    expect(await page.locator('.actions button').allTextContents()).toEqual(['Cancel', 'Place order', 'Subscribe'])
    expect(await page.title()).toBe('Checkout')
    expect(page.getByTestId('pay').page()).toBe(page)
    // Wrapped locators handed back to Playwright, inside option objects and arrays too.
    expect(await page.screenshot({ mask: [page.getByTestId('pay')] })).toBeInstanceOf(Buffer)
    expect(
      await page
        .locator('form')
        .filter({ has: page.getByTestId('pay') })
        .count(),
    ).toBe(1)
  })
})

describe('heals', { timeout: 90_000 }, () => {
  const cases: Array<[keyof typeof MUTATIONS, string, Locate, string]> = [
    ['idRenamed', 'an id renamed', (p) => p.locator('#pay'), PAY_ROLE],
    ['classesChanged', 'classes changed', (p) => p.locator('#checkout button.btn-primary'), PAY_ROLE],
    [
      'textTweaked',
      'text tweaked',
      (p) => p.getByRole('button', { name: 'Place order', exact: true }),
      "getByRole('button', { name: 'Place your order', exact: true })",
    ],
    ['wrapperAdded', 'a wrapper added', (p) => p.locator('#checkout > .actions > button[type=submit]'), PAY_ROLE],
    ['moved', 'the element moved', (p) => p.locator('.actions').getByRole('button', { name: 'Place order' }), PAY_ROLE],
    ['siblingsReordered', 'sibling order changed', (p) => p.locator('#cancel + button'), PAY_ROLE],
    ['testIdRemoved', 'data-testid removed', (p) => p.getByTestId('pay'), PAY_ROLE],
    [
      'lookAlikeElsewhere',
      'a look-alike in another form',
      (p) => p.getByTestId('pay'),
      // Two buttons read "Place order" and neither has an id or test id left: only a path is unique.
      "locator('#checkout > div > button:nth-of-type(2)')",
    ],
  ]

  test.for(cases)('%s (%s): clicks the right element and logs the heal', async ([mutation, , locate, suggested]) => {
    const { store, mutated } = await learnThenMutate(mutation, locate)
    const locator = locate(mutated.page)
    await locator.click()
    expect(await clicked(mutated.raw)).toBe('pay')
    expect(mutated.page.healed).toBe(true)
    const key = (await store.listHeals())[0]?.oldLocator
    expect(mutated.page.heals).toEqual([expect.objectContaining({ oldLocator: key, newLocator: suggested })])
    const [record, ...more] = await store.listHeals({ testId: TEST_ID })
    expect(more).toEqual([])
    expect(record).toMatchObject({
      testId: TEST_ID,
      newLocator: suggested,
      url: mutated.raw.url(),
      runId: 'run-1',
    })
    expect(record!.score).toBeGreaterThanOrEqual(similarity.DEFAULT_THRESHOLD)
    expect(Object.keys(record!.breakdown)).toEqual(expect.arrayContaining(['tag', 'text', 'path', 'siblings']))
    expect(Date.parse(record!.at)).toBeGreaterThan(Date.now() - 60_000)
    expect(mutated.logs).toEqual([expect.stringContaining(`healed ${key} → ${suggested}`)])
  })

  test('fill through getByLabel heals onto the same input after the label changed', async () => {
    const store = createMemoryHealStore()
    const learned = await open(store, CHECKOUT)
    await learned.page.getByLabel('Email').fill('first@example.com')
    const mutated = await open(store, MUTATIONS.labelTweaked(CHECKOUT))
    await mutated.page.getByLabel('Email').fill('second@example.com')
    expect(await mutated.raw.locator('#email').inputValue()).toBe('second@example.com')
    expect(mutated.page.heals[0]).toMatchObject({
      oldLocator: "getByLabel('Email')",
      newLocator: "getByRole('textbox', { name: 'E-mail address', exact: true })",
    })
  })

  test('reads heal too, and one broken locator used twice is logged once', async () => {
    const { store, mutated } = await learnThenMutate('idRenamed', (p) => p.locator('#pay'))
    expect(await mutated.page.locator('#pay').textContent()).toBe('Place order')
    await mutated.page.locator('#pay').click()
    expect(await clicked(mutated.raw)).toBe('pay')
    expect(mutated.page.heals).toHaveLength(1)
    expect(await store.listHeals()).toHaveLength(1)
    expect(mutated.logs).toHaveLength(1)
  })

  test('isVisible heals a confident match and answers false for a removed element without throwing', async () => {
    const store = createMemoryHealStore()
    const learned = await open(store, CHECKOUT)
    expect(await learned.page.locator('#pay').isVisible()).toBe(true)
    const renamed = await open(store, MUTATIONS.idRenamed(CHECKOUT))
    expect(await renamed.page.locator('#pay').isVisible()).toBe(true)
    expect(renamed.page.healed).toBe(true)
    const removed = await open(store, MUTATIONS.removed(CHECKOUT))
    expect(await removed.page.locator('#pay').isVisible()).toBe(false)
    expect(await removed.page.locator('#pay').isHidden()).toBe(true)
    expect(removed.page.healed).toBe(false)
  })

  test('onHeal hears each heal as it happens', async () => {
    const heard: string[] = []
    const { mutated } = await learnThenMutate('idRenamed', (p) => p.locator('#pay'), {
      onHeal: (r) => heard.push(r.newLocator),
    })
    await mutated.page.locator('#pay').click()
    expect(heard).toEqual([PAY_ROLE])
  })
})

describe('refuses', { timeout: 90_000 }, () => {
  test('an identical twin: nothing but position tells them apart, so nothing is clicked', async () => {
    const { store, mutated } = await learnThenMutate('identicalTwin', (p) => p.getByTestId('pay'))
    const error = await refusal(mutated.page.getByTestId('pay').click())
    expect(error.reason).toBe('ambiguous')
    expect(error.candidates.slice(0, 2).map((c) => c.description)).toEqual([
      'button.btn.btn-primary "Place order"',
      'button.btn.btn-primary "Place order"',
    ])
    expect(error.message).toContain('Timeout')
    expect(error.message).toMatch(/Top candidates:\n {2}0\.\d\d {2}button/)
    expect((error.cause as Error).name).toBe('TimeoutError')
    expect(await clicked(mutated.raw)).toBeNull()
    expect(mutated.page.healed).toBe(false)
    expect(await store.listHeals()).toEqual([])
  })

  test('the element removed: its neighbours do not reach the threshold', async () => {
    const { store, mutated } = await learnThenMutate('removed', (p) => p.getByTestId('pay'))
    const error = await refusal(mutated.page.getByTestId('pay').click())
    expect(error.reason).toBe('below-threshold')
    expect(error.candidates[0]!.score).toBeLessThan(0.5)
    expect(await clicked(mutated.raw)).toBeNull()
    expect(await store.listHeals()).toEqual([])
  })

  test('the element still found but hidden is not picked, nor is anything else', async () => {
    const { mutated } = await learnThenMutate('hidden', (p) => p.getByTestId('pay'))
    const error = await refusal(mutated.page.getByTestId('pay').click())
    expect(error.reason).toBe('hidden')
    expect(error.candidates[0]).toMatchObject({
      visible: false,
      description: 'button#pay.btn.btn-primary "Place order"',
    })
    expect(await clicked(mutated.raw)).toBeNull()
  })

  test('a renamed element that is hidden is not picked', async () => {
    const { mutated } = await learnThenMutate('hiddenAndRenamed', (p) => p.locator('#pay'))
    const error = await refusal(mutated.page.locator('#pay').click())
    expect(error.reason).toBe('hidden')
    expect(await clicked(mutated.raw)).toBeNull()
  })

  test('an element found but covered: healing onto the same element cannot help', async () => {
    const { mutated } = await learnThenMutate('covered', (p) => p.getByTestId('pay'))
    const error = await refusal(mutated.page.getByTestId('pay').click())
    expect(error.reason).toBe('unchanged')
    expect(await clicked(mutated.raw)).toBeNull()
  })

  test('the threshold is configurable per wrapper and per locator', async () => {
    const strict = await learnThenMutate('idRenamed', (p) => p.locator('#pay'), { threshold: 0.99 })
    expect((await refusal(strict.mutated.page.locator('#pay').click())).reason).toBe('below-threshold')

    const perCall = await learnThenMutate('idRenamed', (p) => p.locator('#pay'))
    const error = await refusal(withHealing(perCall.mutated.page.locator('#pay'), { threshold: 0.99 }).click())
    expect(error.reason).toBe('below-threshold')
    await perCall.mutated.page.locator('#pay').click()
    expect(await clicked(perCall.mutated.raw)).toBe('pay')
  })

  test('the margin is configurable: a wide one refuses the look-alike case', async () => {
    // Without an id, test id or name of its own left: only the scores tell the two apart (`anchoredTo`).
    const { mutated } = await learnThenMutate('lookAlikeNoIdentity', (p) => p.getByTestId('pay'), { margin: 0.5 })
    expect((await refusal(mutated.page.getByTestId('pay').click())).reason).toBe('ambiguous')
    expect(await clicked(mutated.raw)).toBeNull()
  })

  test('healing off passes the original error through', async () => {
    const { mutated } = await learnThenMutate('idRenamed', (p) => p.locator('#pay'), { enabled: false })
    await expect(mutated.page.locator('#pay').click()).rejects.toMatchObject({ name: 'TimeoutError' })
    await expect(withHealing(mutated.page.locator('#pay'), { enabled: true }).click()).rejects.toMatchObject({
      name: 'TimeoutError',
    })
  })
})

test('in-page ranking equals scoring every element in Node: the shipped source and the pruning are exact', async () => {
  const { store, mutated } = await learnThenMutate('lookAlikeElsewhere', (p) => p.getByTestId('pay'))
  const fp = readFingerprint((await store.getFingerprint(TEST_ID, "getByTestId('pay')"))!.data)!
  const settings = resolveHealSettings({ report: 8 })
  const ranked = await mutated.raw.evaluate(rankPageFunction, {
    fingerprint: fp,
    weights: settings.weights,
    options: settings.describe,
    limit: settings.report,
  })
  const describeAll = inPage((options: fingerprint.DescribeOptions, lib: fingerprint.HelperLib) => {
    // Through `lib`: the test module's own imports do not exist in the page.
    const describe = lib.describeElement as typeof fingerprint.describeElement
    const createContextCache = lib.createContextCache as typeof fingerprint.createContextCache
    const skip = ['html', 'head', 'body', 'script', 'style', 'meta', 'link', 'title', 'base', 'noscript', 'template']
    const cache = new Map<Element, string[]>()
    const ctx = createContextCache()
    return [...document.querySelectorAll('*')]
      .filter((el) => !skip.includes(el.localName))
      .map((el) => describe(el, options, cache, true, ctx))
  }, fingerprint.DESCRIBE_HELPERS)
  const all = await mutated.raw.evaluate(describeAll, settings.describe)
  const inNode = all
    .map((d) => similarity.scoreCandidate(similarity.toSignals(fp), similarity.toSignals(d), settings.weights).score)
    .sort((a, b) => b - a)
    .slice(0, settings.report)
  expect(ranked.scanned).toBe(all.length)
  expect(ranked.candidates).toHaveLength(inNode.length)
  ranked.candidates.forEach((c, i) => expect(c.score).toBeCloseTo(inNode[i]!, 12))
})
