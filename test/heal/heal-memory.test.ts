import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { HealRefusedError } from '../../src/heal/healer.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import { createHealingPage } from '../../src/playwright/page.js'
import type { HealingPage } from '../../src/playwright/page.js'
import { launchChromium, servePages } from './helpers/browser.js'
import type { PageServer } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'

// A heal holds for the whole test: every later call on the healed locator (elementHandle, actions, expect) acts on
// the same element without waiting for the probe again, checks it against the learned element first, and goes
// the whole way again (heal or refusal) once that check fails.

const PROBE = 2500
let browser: Browser
let server: PageServer
let served = 0

beforeAll(async () => {
  browser = await launchChromium()
  server = await servePages()
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/**
 * The raw page, with every wait of the probe counted: a locator call given exactly the probe's timeout. Playwright
 * methods run on the real objects; only the locator factories hand out counting locators.
 */
function counting(raw: Page): { page: Page; probes: () => number } {
  let probes = 0
  const wrap = (l: Locator): Locator =>
    new Proxy(l, {
      get(t, prop) {
        const v: unknown = Reflect.get(t, prop, t)
        if (typeof v !== 'function') return v
        return (...args: unknown[]) => {
          const opts = (prop === 'evaluate' ? args[2] : prop === '_expect' ? args[1] : null) as {
            timeout?: number
          } | null
          if (opts?.timeout === PROBE) probes++
          const out: unknown = (v as (...a: unknown[]) => unknown).apply(t, args)
          return out && typeof out === 'object' && 'elementHandle' in out ? wrap(out as Locator) : out
        }
      },
    })
  const page = new Proxy(raw, {
    get(t, prop) {
      const v: unknown = Reflect.get(t, prop, t)
      if (typeof v !== 'function') return v
      return (...args: unknown[]) => {
        const out: unknown = (v as (...a: unknown[]) => unknown).apply(t, args)
        return out && typeof out === 'object' && 'elementHandle' in out ? wrap(out as Locator) : out
      }
    },
  })
  return { page, probes: () => probes }
}

async function open(store: ReturnType<typeof createMemoryHealStore>, html: string) {
  const raw = await (await browser.newContext()).newPage()
  raw.setDefaultTimeout(4000)
  const counted = counting(raw)
  const logs: string[] = []
  const page = createHealingPage(counted.page, {
    store,
    testId: 'e2e::memory.spec.ts::pays',
    probeTimeout: PROBE,
    logger: { warn: (m) => logs.push(m) },
  })
  await page.goto(server.set(`/memory-${served++}`, html))
  return { page, raw, probes: counted.probes, logs }
}

const clicked = (page: Page) => page.evaluate(() => document.body.dataset.clicked ?? null)

/** Which element a handle is: its id, else its text. */
async function whichOf(page: HealingPage, locator: () => Locator): Promise<string> {
  const handle = await locator().elementHandle()
  return await handle.evaluate((el) => el.id || el.textContent.trim())
}

test('a missing locator healed once is reused by every later call: same element, one probe wait', async () => {
  const store = createMemoryHealStore()
  const learned = await open(store, CHECKOUT)
  await learned.page.locator('#pay').click()
  const { page, raw, probes, logs } = await open(store, MUTATIONS.idRenamed(CHECKOUT))
  const pay = () => page.locator('#pay')
  for (let i = 0; i < 3; i++) {
    expect(await whichOf(page, pay)).toBe('submit-order')
    await raw.evaluate(() => delete document.body.dataset.clicked)
    await pay().click()
    expect(await clicked(raw)).toBe('pay')
    await expect.poll(() => page.heals.length).toBe(1)
  }
  // The web-first assertion path, as `expect(locator).toHaveText()` calls it.
  for (let i = 0; i < 3; i++) {
    const result = await (pay() as unknown as { _expect(e: string, o: object): Promise<{ matches: boolean }> })._expect(
      'to.have.text',
      { expectedText: [{ string: 'Place order' }], isNot: false, timeout: 3000 },
    )
    expect(result.matches).toBe(true)
  }
  expect(probes()).toBe(1)
  expect(logs.filter((l) => l.includes('healed'))).toHaveLength(1)
})

test('a silent mis-resolution healed once stays healed: later calls never fall back to the look-alike', async () => {
  const store = createMemoryHealStore()
  // The pay button learned by its position among the checkout's submit buttons; then a button is added before it.
  const html = CHECKOUT.replace(
    '<button type="button" id="cancel"',
    '<button type="submit" id="gift">Gift</button><button type="button" id="cancel"',
  )
  const learned = await open(store, CHECKOUT)
  await learned.page.locator('#checkout button[type=submit]').first().click()
  const { page, raw } = await open(store, html)
  const pay = () => page.locator('#checkout button[type=submit]').first()
  for (let i = 0; i < 3; i++) {
    expect(await whichOf(page, pay)).toBe('pay')
    await raw.evaluate(() => delete document.body.dataset.clicked)
    await pay().click()
    expect(await clicked(raw)).toBe('pay')
  }
  expect(page.heals).toHaveLength(1)
})

test('a heal that went stale is not used: the next call heals again or refuses, never silently', async () => {
  const store = createMemoryHealStore()
  const learned = await open(store, CHECKOUT)
  await learned.page.locator('#pay').click()
  const { page, raw } = await open(store, MUTATIONS.idRenamed(CHECKOUT))
  await page.locator('#pay').click()
  expect(await clicked(raw)).toBe('pay')
  // The healed button is replaced by a Delete button in its place: the remembered heal no longer matches.
  await raw.evaluate(() => {
    const b = document.querySelector('#submit-order')!
    b.textContent = 'Delete account'
    b.removeAttribute('data-testid')
    b.removeAttribute('name')
  })
  const error = await page
    .locator('#pay')
    .click({ timeout: 3000 })
    .then(() => null)
    .catch((e: unknown) => e)
  expect(error).toBeInstanceOf(HealRefusedError)
})
