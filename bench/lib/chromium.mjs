// Debian's Chromium for the browser benchmarks, with the same flags as the tests (test/helpers/chromium.ts).
import { chromium } from 'playwright-core'

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.FLAKEWATCH_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
