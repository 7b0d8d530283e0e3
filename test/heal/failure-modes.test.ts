import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { readHistory } from '../../src/heal/healer.js'
import * as pageEntry from '../../src/playwright/page.js'
import { createHealingPage, createMemoryHealStore, HealRefusedError } from '../../src/playwright/page.js'
import type { HealingPageOptions } from '../../src/playwright/page.js'
import { launchChromium } from './helpers/browser.js'

// The failure modes of issue 15 that the corpus does not show by itself, each in real Chromium.

let browser: Browser
let raw: Page

beforeAll(async () => {
  browser = await launchChromium()
  raw = await browser.newPage()
})

afterAll(async () => {
  await browser?.close()
})

const html = (body: string) =>
  `<!doctype html><html><body><main><h1>Editor</h1>${body}</main>` +
  `<script>document.addEventListener('click', (e) => { if (e.target.dataset.mark) document.body.dataset.clicked = e.target.dataset.mark })</script></body></html>`

function healing(store: HealingPageOptions['store'], logs: string[] = []) {
  return createHealingPage(raw, {
    store,
    testId: 't::failure-modes',
    probeTimeout: 500,
    logger: { warn: (m) => logs.push(m) },
  })
}

async function show(body: string) {
  raw.setDefaultTimeout(10_000)
  await raw.setContent(html(body))
  raw.setDefaultTimeout(2000)
}

const clicked = () => raw.evaluate(() => document.body.dataset.clicked ?? null)

test('the playwright-core entry exports the errors and the memory store', () => {
  expect(pageEntry.HealRefusedError).toBeTypeOf('function')
  expect(pageEntry.HealMismatchError.prototype).toBeInstanceOf(pageEntry.HealRefusedError)
  expect(pageEntry.createMemoryHealStore().listHeals).toBeTypeOf('function')
})

test('a strict-mode violation is resolved by the fingerprint, with the margin rule', async () => {
  const store = createMemoryHealStore()
  await show('<form aria-label="Post"><button type="button" class="save" data-mark="post">Save post</button></form>')
  await healing(store).locator('button.save').click()
  // A second form gains a look-alike: the locator now matches two elements.
  await show(
    '<form aria-label="Settings"><button type="button" class="save" data-mark="settings">Save settings</button></form>' +
      '<form aria-label="Post"><button type="button" class="save" data-mark="post">Save post</button></form>',
  )
  const logs: string[] = []
  await healing(store, logs).locator('button.save').click()
  expect(await clicked()).toBe('post')
  expect(logs).toEqual([expect.stringContaining("healed locator('button.save') (it matched several elements)")])
  expect(logs[0]).toContain("→ getByRole('button', { name: 'Save post', exact: true })")
})

test('a refused heal fails once, named after the action, at the test line, with candidates and reason', async () => {
  const store = createMemoryHealStore()
  await show(
    '<div class="bar"><button id="delete" class="btn" data-mark="delete">Delete account</button><button class="btn">Deactivate account</button></div>',
  )
  await healing(store).locator('#delete').click()
  await show('<div class="bar"><button class="btn" data-mark="deactivate">Deactivate account</button></div>')
  const error = await healing(store)
    .locator('#delete')
    .click({ timeout: 1500 })
    .catch((e: unknown) => e)
  expect(error).toBeInstanceOf(HealRefusedError)
  const refused = error as HealRefusedError
  expect(refused.action).toBe('locator.click')
  expect(refused.reason).toBe('different-action')
  expect(refused.message).toMatch(/^locator\.click: Timeout 1500ms exceeded waiting for locator\('#delete'\)\. /)
  expect(refused.message).toContain(
    "not used: it does something else: 'Deactivate account' where the test used 'Delete account'",
  )
  expect(refused.message).toMatch(/Top candidates:\n {2}0\.\d\d {2}button\.btn "Deactivate account"/)
  // The first frame is this test file's line, not flakewatch's page module.
  const frames = (refused.stack ?? '').split('\n').filter((l) => l.trim().startsWith('at '))
  expect(frames[0]).toContain('failure-modes.test.ts')
  expect(refused.stack).not.toContain('src/playwright/page.ts')
  expect(await clicked()).toBeNull()
})

test('the stored fingerprint changes only on a confident match, and keeps its history', async () => {
  const store = createMemoryHealStore()
  const key = "locator('#go')"
  await show('<button id="go" class="btn" data-mark="go">Continue</button>')
  await healing(store).locator('#go').click()
  // A confident match with a new class: relearned, the old element kept in the history.
  await show('<button id="go" class="btn btn-lg" data-mark="go">Continue</button>')
  await healing(store).locator('#go').click()
  let stored = await store.getFingerprint('t::failure-modes', key)
  expect(stored?.data).toMatchObject({ v: 2, element: { classes: ['btn', 'btn-lg'] } })
  expect(readHistory(stored!.data).map((h) => h.element.classes)).toEqual([['btn']])
  // Another element behind the same id, nothing better on the page: it fails loudly and is not learned.
  await show('<button id="go" class="btn btn-lg" data-mark="back">Go back</button>')
  await expect(healing(store).locator('#go').click()).rejects.toMatchObject({ reason: 'mis-resolved' })
  stored = await store.getFingerprint('t::failure-modes', key)
  expect(stored?.data).toMatchObject({ element: { text: 'Continue' } })
  expect(await clicked()).toBeNull()
})

test('a visible target is healed although its hidden responsive duplicate scores the same', async () => {
  const store = createMemoryHealStore()
  const nav = (id: string) =>
    `<nav class="m" style="display:none"><a href="#p">Pricing</a></nav><nav class="d"><a href="#p" ${id} data-mark="desktop">Pricing</a></nav>`
  await show(nav('id="pricing"'))
  await healing(store).locator('#pricing').click()
  await show(nav(''))
  await healing(store).locator('#pricing').click()
  expect(await clicked()).toBe('desktop')
})
