/**
 * A ready `@playwright/test` fixture: `page` learns and heals. The only flakewatch module that loads
 * `@playwright/test` at runtime, reached through the `flakewatch/playwright` subpath alone.
 */
import { relative, sep } from 'node:path'
import { test as base } from '@playwright/test'
import type { TestInfo } from '@playwright/test'
import type { HealStore } from '../heal/healer.js'
import { createMemoryHealStore } from '../heal/memory-store.js'
import { makeTestId } from '../model.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'
import { DEFAULT_SUITE } from '../pipeline/build-batch.js'
import { HEALED_ANNOTATION } from '../reporters/build-cases.js'
import { createHealingPage } from './page.js'
import type { HealingPage, HealingPageOptions } from './page.js'

/** The annotation a heal adds to its test, which the flakewatch reporter turns into `healingOccurred`. */
export { HEALED_ANNOTATION }

/** Heal settings a project or file sets with `test.use({ flakewatchHeal: { ... } })`. */
export type FlakewatchHealOptions = Omit<HealingPageOptions, 'store' | 'testId' | 'onHeal'>

export interface FlakewatchTestFixtures {
  flakewatchHeal: FlakewatchHealOptions
  /**
   * The suite of the test ids, as the flakewatch reporter's `suite` option names it. Default: `FLAKEWATCH_SUITE`,
   * else `default`, the reporter's own default.
   */
  flakewatchSuite: string
  /** The id fingerprints and heals are filed under. Override to match a custom reporter's ids. */
  flakewatchTestId: string
  page: HealingPage
}

export interface FlakewatchWorkerFixtures {
  /**
   * The store location: a SQLite file or `postgres://` URL. Default: `FLAKEWATCH_DB`, else `.flakewatch.db` in
   * the working directory, the same store the reporter and the CLI use.
   */
  flakewatchDb: string | undefined
  /** Where fingerprints and heals go: the flakewatch store at `flakewatchDb`, opened once per worker. */
  flakewatchStore: HealStore
}

/**
 * The flakewatch test id of a Playwright test, as the flakewatch reporter writes it: the suite, the spec file
 * relative to the config's root as module, and the describe titles and test title joined with ` › ` as name.
 * The project is not part of it (the reporter files it as an env facet), so heals join results in every project.
 * @example playwrightTestId(testInfo, 'e2e') // 'e2e::tests/checkout.spec.ts::checkout › pays'
 */
export function playwrightTestId(info: Pick<TestInfo, 'config' | 'file' | 'titlePath'>, suite: string): string {
  const module = relative(info.config.rootDir, info.file).split(sep).join('/')
  return makeTestId(suite, module, info.titlePath.slice(1).join(' › '))
}

/**
 * `test` whose `page` heals broken locators. Every heal is logged, written to the store and added to the test as
 * a `flakewatch-healed` annotation.
 * @example
 * import { test, expect } from 'flakewatch/playwright'
 * test('pays', async ({ page }) => {
 *   await page.goto('/checkout')
 *   await page.getByTestId('pay').click()
 * })
 */
export const test = base.extend<FlakewatchTestFixtures, FlakewatchWorkerFixtures>({
  flakewatchDb: [undefined, { option: true, scope: 'worker' }],
  flakewatchStore: [
    async ({ flakewatchDb }, use) => {
      let store: Store | null = null
      try {
        store = await openStore({ db: flakewatchDb })
      } catch (error) {
        // Healing must not break a test run: without a store, learning lasts for this worker only.
        process.stderr.write(
          `flakewatch: cannot open the store, fingerprints kept in memory: ${(error as Error).message}\n`,
        )
      }
      try {
        await use(store ?? createMemoryHealStore())
      } finally {
        await store?.close()
      }
    },
    { scope: 'worker' },
  ],
  flakewatchHeal: [{}, { option: true }],
  flakewatchSuite: [process.env.FLAKEWATCH_SUITE || DEFAULT_SUITE, { option: true }],
  flakewatchTestId: async ({ flakewatchSuite }, use, testInfo) => {
    await use(playwrightTestId(testInfo, flakewatchSuite))
  },
  page: async ({ page, flakewatchStore, flakewatchHeal, flakewatchTestId }, use, testInfo) => {
    const healing = createHealingPage(page, {
      ...flakewatchHeal,
      store: flakewatchStore,
      testId: flakewatchTestId,
      runId: flakewatchHeal.runId ?? process.env.FLAKEWATCH_RUN_ID ?? null,
      onHeal: (record) => {
        testInfo.annotations.push({
          type: HEALED_ANNOTATION,
          description: `${record.oldLocator} → ${record.newLocator} (score ${record.score.toFixed(2)})`,
        })
      },
    })
    await use(healing)
  },
})

export { expect } from '@playwright/test'
