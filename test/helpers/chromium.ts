import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'

/**
 * Debian's Chromium (nothing can download a browser here), or the one `FLAKEWATCH_CHROMIUM` names
 * (docs/development.md). Every browser the tests start, directly or through a Playwright config they write, is
 * this one.
 */
export const CHROMIUM_PATH = process.env.FLAKEWATCH_CHROMIUM || '/usr/bin/chromium'

/** Headless, sandboxless (CI runs as root), with everything that would phone home switched off. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** The Playwright `launchOptions` for that browser, as a config-file snippet. */
export const PLAYWRIGHT_LAUNCH_OPTIONS = `{ executablePath: ${JSON.stringify(CHROMIUM_PATH)}, args: ${JSON.stringify(CHROMIUM_ARGS)} }`

/**
 * A missing browser is a failure, never a skip: the browser tests have nothing else to run on. The message names
 * the path and how to give another.
 */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install chromium, or set FLAKEWATCH_CHROMIUM to one`)
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
}
