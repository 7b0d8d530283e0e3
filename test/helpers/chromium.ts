import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'

/** Debian's Chromium: nothing can download a browser here. */
export const CHROMIUM_PATH = process.env.FLAKEWATCH_CHROMIUM ?? '/usr/bin/chromium'

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

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
}
