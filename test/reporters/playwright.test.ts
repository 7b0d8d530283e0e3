import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import {
  BIN,
  CHROMIUM,
  cleanup,
  comparable,
  ensureDist,
  PLAYWRIGHT_USE,
  projectDir,
  readStore,
  run,
  type Ran,
} from './helpers.js'

const haveChromium = existsSync(CHROMIUM)
if (!haveChromium && process.env.CI === 'true') throw new Error(`${CHROMIUM} not found: the Playwright runs need it`)

const CHROMIUM_RUN = 'github-4242-1-e2e[project=chromium]'

/** Run context a GitHub Actions job gives. */
const CI_ENV = {
  GITHUB_ACTIONS: 'true',
  GITHUB_RUN_ID: '4242',
  GITHUB_RUN_ATTEMPT: '1',
  GITHUB_JOB: 'e2e',
  GITHUB_SHA: 'abc123',
  GITHUB_REF_NAME: 'feature/reporters',
}

const shopSpec = `import { test, expect } from '@playwright/test'
test.describe('shop', () => {
  test('renders', async ({ page }) => {
    await page.setContent('<h1>Hello</h1>')
    await expect(page.locator('h1')).toHaveText('Hello')
  })
  test('flaky', { tag: '@slow' }, async ({}, testInfo) => expect(testInfo.retry).toBe(1))
  test('healed', async ({}, testInfo) => {
    testInfo.annotations.push({ type: 'flakewatch-healed', description: '#buy → [data-test=buy] (score 0.91)' })
  })
  test('always fails', async () => expect(1).toBe(2))
  test('known bug', async () => {
    test.fail()
    expect(1).toBe(2)
  })
  test.skip('skipped', async () => {})
})
`

// Each failed attempt costs Playwright a new worker process: the timeout is tried once.
const unitSpec = `import { test, expect } from '@playwright/test'
test.describe.configure({ retries: 0 })
test('pure', () => expect(1 + 1).toBe(2))
test.describe(() => {
  test('in an anonymous describe', () => {})
})
test('too slow', async () => {
  test.setTimeout(300)
  await new Promise((r) => setTimeout(r, 2000))
})
`

const mainConfig = `import { defineConfig } from '@playwright/test'
export default defineConfig({
  testDir: '.',
  retries: 1,
  workers: 1,
  // Playwright would otherwise put test-results/ beside the nearest package.json: the repository root.
  outputDir: 'test-results',
  reporter: [
    ['flakewatch/playwright/reporter', { db: 'fw.db', suite: 'e2e' }],
    ['flakewatch/playwright/reporter', { outputFile: 'out/ctrf.json', suite: 'e2e' }],
    ['json', { outputFile: 'pw.json' }],
  ],
  projects: [
    { name: 'chromium', testMatch: 'shop.spec.mjs', use: ${PLAYWRIGHT_USE} },
    { name: 'node', testMatch: 'unit.spec.mjs' },
  ],
})
`

describe.skipIf(!haveChromium)('flakewatch/playwright/reporter in a real Playwright run', () => {
  let dir: string
  let ran: Ran

  beforeAll(async () => {
    ensureDist()
    const files = { 'playwright.config.mjs': mainConfig, 'shop.spec.mjs': shopSpec, 'unit.spec.mjs': unitSpec }
    dir = projectDir('pw', files)
    ran = await run(BIN.playwright, ['test', '-c', 'playwright.config.mjs'], dir, CI_ENV)
  }, 120_000)
  afterAll(() => cleanup(dir))

  it('leaves the run failed, says where it wrote, and prints nothing on stdout of its own', () => {
    expect(ran.exitCode, ran.stderr).toBe(1)
    const runs = /as run github-4242-1-e2e\[project=(chromium|node)\], github-4242-1-e2e\[project=(chromium|node)\]/
    expect(ran.stderr).toMatch(/flakewatch: recorded 9 tests \(2 failed, 1 flaky\) as run /)
    expect(ran.stderr).toMatch(runs)
    expect(ran.stderr).toMatch(/flakewatch: wrote 9 tests .* to .*out\/ctrf\.json/)
    expect(ran.stdout).not.toMatch(/^flakewatch:/m)
  })

  it('records every attempt, flakiness, healing and the project facet', async () => {
    const tests = await readStore(join(dir, 'fw.db'))
    const t = (name: string) => tests.get(`e2e::shop.spec.mjs::shop › ${name}`)
    expect(t('flaky')).toMatchObject({ status: 'passed', flakyOnRetry: true, attempts: ['failed', 'passed'] })
    expect(t('always fails')).toMatchObject({ status: 'failed', flakyOnRetry: false, attempts: ['failed', 'failed'] })
    expect(tests.get('e2e::unit.spec.mjs::too slow')).toMatchObject({ status: 'failed', attempts: ['failed'] })
    expect(t('known bug')).toMatchObject({ status: 'passed', attempts: ['passed'] })
    expect(t('skipped')).toMatchObject({ status: 'skipped', attempts: ['skipped'] })
    expect(t('renders')).toMatchObject({ status: 'passed', healingOccurred: false, env: { project: 'chromium' } })
    expect(t('healed')).toMatchObject({ status: 'passed', healingOccurred: true })
    expect(tests.get('e2e::unit.spec.mjs::pure')).toMatchObject({ status: 'passed', env: { project: 'node' } })
    expect(tests.get('e2e::unit.spec.mjs:: › in an anonymous describe')?.status).toBe('passed')

    const store = await openStore({ db: join(dir, 'fw.db') })
    try {
      const runs = await store.listRuns()
      expect(runs.map((r) => r.runId).sort()).toEqual([CHROMIUM_RUN, 'github-4242-1-e2e[project=node]'])
      expect(runs[0]).toMatchObject({ suite: 'e2e', branch: 'feature/reporters', revision: 'abc123' })
      expect(runs[0]!.pipelineId).toBe('4242')
      expect(runs[0]!.status).toBe('complete')
      const history = await store.getTestHistory('e2e::unit.spec.mjs::too slow')
      expect(history!.entries[0]!.errorType).toBe('timeout')
      const attempts = await store.getAttempts('e2e::shop.spec.mjs::shop › always fails', CHROMIUM_RUN)
      expect(attempts.map((a) => a.retry)).toEqual([0, 1])
      expect(attempts[0]!.message).toMatch(/expect\(received\)\.toBe\(expected\)/)
      expect(attempts[0]!.durationMs).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
  })

  it('stores what `flakewatch ingest` stores from the same run’s JSON report', async () => {
    const args = ['ingest', 'pw.json', '--db', 'ingest.db', '--suite', 'e2e']
    const ingested = await run(BIN.flakewatch, args, dir, CI_ENV)
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    const fromReporter = await readStore(join(dir, 'fw.db'))
    const fromIngest = await readStore(join(dir, 'ingest.db'))
    expect(comparable(fromReporter)).toEqual(comparable(fromIngest))
    expect([...fromReporter.values()].map((t) => t.env)).toEqual([...fromIngest.values()].map((t) => t.env))
  })

  it('writes a CTRF file that ingests to the same tests and attempts', async () => {
    const args = ['ingest', 'out/ctrf.json', '--db', 'ctrf.db', '--suite', 'e2e']
    const ingested = await run(BIN.flakewatch, args, dir, CI_ENV)
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    expect(comparable(await readStore(join(dir, 'ctrf.db')))).toEqual(comparable(await readStore(join(dir, 'fw.db'))))
  })
})

// The quarantined failure comes last: a failure costs a new worker for the tests after it.
const quarantineSpec = `import { test, expect } from '@playwright/test'
test('passes', () => expect(1).toBe(1))
test('other', () => expect(process.env.OTHER_FAILS ? 2 : 1).toBe(1))
test('known broken', () => expect(1).toBe(2))
`

// Options come from the environment so that one suite serves every case; each run has its own db and output.
const quarantineConfig = `import { defineConfig } from '@playwright/test'
const source = process.env.Q_FILE ? { quarantineFile: 'quarantine.json' } : { quarantine: true }
export default defineConfig({
  testDir: '.',
  workers: 1,
  outputDir: process.env.OUT,
  globalTeardown: './teardown.mjs',
  reporter: [
    ['dot'],
    ['flakewatch/playwright/reporter', { db: process.env.DB, ...source }],
    // A database path that is a directory: this reporter cannot write, and must not change the outcome.
    ['flakewatch/playwright/reporter', { db: 'a-directory' }],
  ],
})
`

const quarantineFile = JSON.stringify({
  version: 1,
  quarantined: [{ test_id: 'default::q.spec.mjs::known broken', reason: 'backend flake', owner: 'team-shop' }],
})

describe('quarantine enforcement from inside Playwright', () => {
  let dir: string
  const runs: Record<string, Ran> = {}

  beforeAll(async () => {
    ensureDist()
    dir = projectDir('pwq', {
      'playwright.config.mjs': quarantineConfig,
      'q.spec.mjs': quarantineSpec,
      'quarantine.json': quarantineFile,
      'teardown.mjs': "export default async () => { if (process.env.CRASH) throw new Error('teardown crashed') }\n",
    })
    mkdirSync(join(dir, 'a-directory'))
    // Quarantines in the store, as `flakewatch quarantine add` leaves them.
    for (const db of ['store.db', 'other.db', 'crash.db']) {
      const store = await openStore({ db: join(dir, db) })
      const at = new Date().toISOString()
      await store.putQuarantine(
        {
          testId: 'default::q.spec.mjs::known broken',
          reason: 'backend flake',
          owner: null,
          issueUrl: null,
          createdAt: at,
          createdBy: 'test',
          expiresAt: null,
          source: 'manual',
        },
        { action: 'quarantine', actor: 'test', at, reason: 'backend flake', source: 'manual' },
      )
      await store.close()
    }
    const cases: Record<string, Record<string, string>> = {
      file: { Q_FILE: '1', DB: 'file.db' },
      store: { DB: 'store.db' },
      other: { DB: 'other.db', OTHER_FAILS: '1' },
      crash: { DB: 'crash.db', CRASH: '1' },
    }
    await Promise.all(
      Object.entries(cases).map(async ([name, env]) => {
        const args = ['test', '-c', 'playwright.config.mjs']
        runs[name] = await run(BIN.playwright, args, dir, { ...env, OUT: `out-${name}` })
      }),
    )
  }, 120_000)
  afterAll(() => cleanup(dir))

  it('passes a run whose only failure is quarantined (file or store), and lists what it forgave', () => {
    for (const name of ['file', 'store']) {
      const r = runs[name]!
      expect(r.exitCode, `${name}: ${r.stderr}`).toBe(0)
      expect(r.stderr).toMatch(/the run passes\. Forgiven:\n\s+failed default::q\.spec\.mjs::known broken \(/)
    }
    expect(runs.file!.stderr).toMatch(/owner team-shop/)
  })

  it('records the quarantined failure as a failure all the same', async () => {
    const tests = await readStore(join(dir, 'file.db'))
    expect(tests.get('default::q.spec.mjs::known broken')).toMatchObject({ status: 'failed', runStatus: 'complete' })
  })

  it('fails a run with a failure that is not quarantined', () => {
    expect(runs.other!.exitCode).not.toBe(0)
    expect(runs.other!.stderr).not.toMatch(/Forgiven/)
  })

  it('never passes a run with an error outside the tests, and stores it as interrupted', async () => {
    expect(runs.crash!.exitCode).not.toBe(0)
    expect(runs.crash!.stderr).toMatch(/error\(s\) outside the tests; quarantine does not apply/)
    const tests = await readStore(join(dir, 'crash.db'))
    expect(tests.get('default::q.spec.mjs::known broken')).toMatchObject({ status: 'failed', runStatus: 'interrupted' })
  })

  it('says on stderr when it cannot write, and leaves the outcome alone', () => {
    for (const r of Object.values(runs)) {
      expect(r.stderr).toMatch(/flakewatch: could not record this run's results in .*a-directory: .*unchanged\./)
    }
    expect(runs.file!.exitCode).toBe(0)
  })
})
