import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { PLAYWRIGHT_LAUNCH_OPTIONS } from '../helpers/chromium.js'
import { servePages } from './helpers/browser.js'
import type { PageServer } from './helpers/browser.js'
import { CHECKOUT, MUTATIONS } from './helpers/pages.js'

// The fixture runs where it is meant to: inside the real Playwright runner, in two runs that share a store file.
const root = resolve(import.meta.dirname, '../..')
const dir = join(root, 'test/.tmp', `heal-fixture-${process.pid}`)
const storeFile = join(dir, 'fw.db')
let server: PageServer

const CONFIG = `
export default {
  testDir: '.',
  testMatch: '*.spec.mjs',
  outputDir: './results',
  workers: 1,
  retries: 0,
  reporter: [['json', { outputFile: process.env.FW_REPORT }]],
  projects: [{
    name: 'chromium',
    use: {
      browserName: 'chromium',
      launchOptions: ${PLAYWRIGHT_LAUNCH_OPTIONS},
    },
  }],
}
`

// No store is configured: the fixture opens the flakewatch store at FLAKEWATCH_DB, as users get it.
const SPEC = `
import { test, expect } from ${JSON.stringify(join(root, 'src/playwright/fixture.ts'))}

test.use({ flakewatchHeal: { probeTimeout: 4000, logger: { warn: (m) => console.log(m) } } })

test.describe('checkout', () => {
  test('pays', async ({ page }) => {
    // Room for one probe wait, not for one per call: a heal must be reused by every later call of the test.
    test.setTimeout(20_000)
    page.setDefaultTimeout(3000)
    await page.goto(process.env.FW_URL)
    // Web-first assertions through @playwright/test's own expect: they learn, and heal, like an action. In the
    // second run the id is gone, so toBeVisible is the first use of the broken locator and must heal by itself.
    await expect(page.locator('#pay')).toBeVisible()
    for (let i = 0; i < 3; i++) {
      await expect(page.locator('#pay')).toHaveText('Place order')
      const handle = await page.locator('#pay').elementHandle()
      if ((await handle.getAttribute('name')) !== 'pay') throw new Error('the heal acted on another element')
      await page.evaluate(() => delete document.body.dataset.clicked)
      await page.locator('#pay').click()
      await expect(page.locator('body')).toHaveAttribute('data-clicked', 'pay')
    }
    await expect(page.getByRole('button', { name: 'Cancel' })).toBeVisible()
  })
})
`

beforeAll(async () => {
  server = await servePages()
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'playwright.config.mjs'), CONFIG)
  writeFileSync(join(dir, 'heal.spec.mjs'), SPEC)
})

afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface JsonReport {
  suites: Array<{ suites: Array<{ specs: Array<{ tests: Array<{ status: string; annotations: unknown[] }> }> }> }>
}

type ReportedTest = JsonReport['suites'][0]['suites'][0]['specs'][0]['tests'][0]

/** Runs the Playwright CLI without blocking: the page server lives in this process. */
interface PlaywrightRun {
  code: number | null
  output: string
  test: ReportedTest
}

async function runPlaywright(url: string, report: string): Promise<PlaywrightRun> {
  const child = spawn(
    process.execPath,
    [join(root, 'node_modules/@playwright/test/cli.js'), 'test', '-c', join(dir, 'playwright.config.mjs')],
    {
      cwd: dir,
      env: {
        ...process.env,
        FW_URL: url,
        FLAKEWATCH_DB: storeFile,
        FW_REPORT: join(dir, report),
        FLAKEWATCH_SUITE: 'e2e',
        CI: '1',
      },
    },
  )
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
  const code = await new Promise<number | null>((done) => child.on('close', done))
  const json = JSON.parse(readFileSync(join(dir, report), 'utf8')) as JsonReport
  return { code, output, test: json.suites[0]!.suites[0]!.specs[0]!.tests[0]! }
}

const PAY_ROLE = "getByRole('button', { name: 'Place order', exact: true })"

const name = 'the @playwright/test fixture learns in one run, heals in the next and annotates the test'

test(name, { timeout: 180_000 }, async () => {
  const first = await runPlaywright(server.set('/checkout', CHECKOUT), 'first.json')
  expect(first.code, first.output).toBe(0)
  expect(first.test.annotations).toEqual([])
  const learnedStore = await openSqliteStore(storeFile)
  expect(await learnedStore.getFingerprint('e2e::heal.spec.mjs::checkout › pays', "locator('#pay')")).not.toBeNull()
  await learnedStore.close()

  const second = await runPlaywright(server.set('/checkout', MUTATIONS.idRenamed(CHECKOUT)), 'second.json')
  expect(second.code, second.output).toBe(0)
  expect(second.test.status).toBe('expected')
  expect(second.test.annotations).toEqual([
    {
      type: 'flakewatch-healed',
      description: expect.stringMatching(
        /^locator\('#pay'\) → getByRole\('button', \{ name: 'Place order', exact: true \}\) \(score 0\.\d\d\)$/,
      ),
    },
  ])
  expect(second.output).toContain(`flakewatch: healed locator('#pay') → ${PAY_ROLE}`)
  const store = await openSqliteStore(storeFile)
  const heals = await store.listHeals()
  await store.close()
  expect(heals).toEqual([
    expect.objectContaining({ testId: 'e2e::heal.spec.mjs::checkout › pays', newLocator: PAY_ROLE }),
  ])
})
