import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { escapeRegex, playwrightGrep, testNamePattern } from '../../src/retry/test-patterns.js'
import { BIN, cleanup, ensureDist, projectDir, readStore, run, type Ran } from '../reporters/helpers.js'

describe('test patterns', () => {
  it('escapes every regex metacharacter in a title', () => {
    const title = 'costs $1.50 (a+b)*[c]{2}^|\\/?'
    expect(new RegExp(`^${escapeRegex(title)}$`).test(title)).toBe(true)
    expect(new RegExp(`^${escapeRegex('a.b')}$`).test('axb')).toBe(false)
  })

  it('selects Playwright grep titles of the listed tests only, with tags and describe tags in between', () => {
    const re = new RegExp(
      playwrightGrep([
        { module: 'tests/e2e/cart.spec.ts', name: 'cart › adds (1+1)' },
        { module: 'tests/e2e/cart.spec.ts', name: 'top level' },
      ]),
    )
    // What Playwright matches: " <project> <file from the project's testDir> <describes> <title> <tags>".
    expect(re.test(' chromium e2e/cart.spec.ts cart adds (1+1)')).toBe(true)
    expect(re.test(' chromium cart.spec.ts cart @smoke adds (1+1) @slow')).toBe(true)
    expect(re.test(' chromium cart.spec.ts top level')).toBe(true)
    expect(re.test(' chromium cart.spec.ts cart adds (1+1) twice')).toBe(false)
    expect(re.test(' chromium cart.spec.ts cart adds 11')).toBe(false)
    expect(re.test(' chromium minicart.spec.ts top level')).toBe(false)
    expect(re.test(' chromium other.spec.ts cart adds (1+1)')).toBe(false)
  })

  it('builds a Vitest/Jest -t pattern from the describe chain, whatever the separator', () => {
    const re = new RegExp(testNamePattern([{ name: 'cart > adds [item]' }, { name: 'suite › nested › x.y' }]))
    expect(re.test('cart adds [item]')).toBe(true)
    expect(re.test('src/cart.test.ts cart adds [item]')).toBe(true)
    expect(re.test('suite nested x.y')).toBe(true)
    expect(re.test('suite nested xzy')).toBe(false)
    expect(re.test('recart adds [item]')).toBe(false)
  })

  it('an empty selection matches nothing (an empty pattern would match every test)', () => {
    expect(new RegExp(playwrightGrep([])).test(' chromium a.spec.ts anything')).toBe(false)
    expect(new RegExp(testNamePattern([])).test('')).toBe(false)
  })
})

const quarantine = JSON.stringify({
  version: 1,
  quarantined: [
    { test_id: 'default::retry.spec.mjs::shop › flaky (1+1) [x]', reason: 'known flake', owner: null },
    { test_id: 'default::retry.spec.mjs::quarantined but steady', reason: 'known flake', owner: null },
  ],
})

// Each test counts its attempts in a file: a known flaky test passes on its second try; others always fail once.
const spec = `import { test, expect } from '@playwright/test'
test.describe('shop', { tag: '@shop' }, () => {
  test('flaky (1+1) [x]', async ({}, info) => expect(info.retry).toBe(1))
  test('flaky (1+1) [x] too', async ({}, info) => expect(info.retry).toBe(1))
})
test('unknown failure', async () => expect(1).toBe(2))
test('quarantined but steady', async () => {})
`

const config = `import { defineConfig } from '@playwright/test'
import { retryKnownFlaky } from 'flakewatch/playwright/retries'
export default defineConfig({
  testDir: '.',
  workers: 1,
  outputDir: 'test-results',
  reporter: [['flakewatch/playwright/reporter', { db: 'fw.db' }]],
  projects: retryKnownFlaky([{ name: 'node' }], { retries: 2, file: 'retry.grep' }),
})
`

describe('retry only known flaky tests in a real Playwright run', () => {
  let dir: string
  let listed: Ran
  let ran: Ran

  beforeAll(async () => {
    ensureDist()
    dir = projectDir('retry', { 'playwright.config.mjs': config, 'retry.spec.mjs': spec, 'q.json': quarantine })
    const args = ['list', '--quarantined', '--quarantine-file', 'q.json', '--format', 'grep', '-o', 'retry.grep']
    listed = await run(BIN.flakewatch, args, dir)
    ran = await run(BIN.playwright, ['test', '-c', 'playwright.config.mjs'], dir)
  }, 120_000)
  afterAll(() => cleanup(dir))

  it('retries the listed tests and no other', async () => {
    expect(listed.exitCode, listed.stderr).toBe(0)
    expect(readFileSync(join(dir, 'retry.grep'), 'utf8')).toContain('flaky \\(1\\+1\\) \\[x\\]')
    expect(ran.exitCode, ran.stderr).toBe(1)
    const tests = await readStore(join(dir, 'fw.db'))
    expect(tests.get('default::retry.spec.mjs::shop › flaky (1+1) [x]')).toMatchObject({
      status: 'passed',
      flakyOnRetry: true,
      attempts: ['failed', 'passed'],
      env: { project: 'node' },
    })
    // Same title plus a suffix: not listed, so not retried.
    expect(tests.get('default::retry.spec.mjs::shop › flaky (1+1) [x] too')).toMatchObject({ attempts: ['failed'] })
    expect(tests.get('default::retry.spec.mjs::unknown failure')).toMatchObject({ attempts: ['failed'] })
    expect(tests.get('default::retry.spec.mjs::quarantined but steady')).toMatchObject({ attempts: ['passed'] })
    expect(tests.size).toBe(4)
  })
})
