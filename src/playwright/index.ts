/**
 * `flakewatch/playwright`: self-healing locators for Playwright. Loads `@playwright/test` (for the fixture), so
 * import it only from Playwright tests.
 */
export { createHealingPage, withHealing } from './page.js'
export type { HealingPage, HealingPageOptions, HealingState, LocatorHealOptions } from './page.js'
export { HEALED_ANNOTATION, expect, playwrightTestId, test } from './fixture.js'
export type { FlakewatchHealOptions, FlakewatchTestFixtures, FlakewatchWorkerFixtures } from './fixture.js'
export { HealMismatchError, HealRefusedError } from '../heal/healer.js'
export type { HealLogger, HealSettings, HealStore } from '../heal/healer.js'
export { createMemoryHealStore } from '../heal/memory-store.js'
export { DEFAULT_MARGIN, DEFAULT_THRESHOLD, DEFAULT_WEIGHTS } from '../heal/similarity.js'
export type { Signal, Weights } from '../heal/similarity.js'
