import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import type { ParsedReport } from '../../src/ingest/types.js'
import { CHROMIUM_PATH, PLAYWRIGHT_LAUNCH_OPTIONS } from '../helpers/chromium.js'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { ctrfSchemaErrors } from '../helpers/ctrf-schema.js'
import { caseNamed, countByStatus } from './helpers.js'
import { runTool, type Ran } from './spawn-tool.js'

/*
 * Real runners from node_modules write real reports, and the parsers must read what they really write. The
 * suites live under test/.tmp (via testdir) so that `vitest`, `jest` and `@playwright/test` resolve from the
 * repository's node_modules. All runners start at once in beforeAll; the tests then only read their output.
 * FLAKEWATCH_UPDATE_FIXTURES=1 also copies the outputs (paths neutralised) to test/fixtures/reports/.
 */

const CHROMIUM = CHROMIUM_PATH
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium && process.env.CI === 'true') throw new Error(`${CHROMIUM} not found: the Playwright runs need it`)

const bin = {
  vitest: join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
  jest: join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
  playwright: join(ROOT, 'node_modules', '@playwright', 'test', 'cli.js'),
}

const files: Record<string, string> = {
  'vitest/vitest.config.mjs': "export default { test: { include: ['*.test.mjs'] } }\n",
  'vitest/math.test.mjs': `import { describe, expect, it } from 'vitest'
let tries = 0
describe('math', () => {
  it('adds', () => expect(1 + 1).toBe(2))
  it('fails', () => expect(1 + 1).toBe(3))
  it.skip('skipped', () => {})
  it.todo('todo')
  it('flaky', { retry: 1 }, () => expect(++tries).toBe(2))
  describe('nested', () => it('deep', () => {}))
})
it('top level', () => {})
`,
  // vitest-ctrf-json-reporter 0.0.3 with a configured retry limit, as a user would set it: the real package writes
  // the report. It implements Vitest 3's onInit/onFinished(files); Vitest 4 calls onTestRunEnd with the modules,
  // whose tasks are the same File objects.
  'vitest-ctrf/vitest.config.mjs': `export default { test: { include: ['*.test.mjs'], retry: 2,
  reporters: [['./ctrf-adapter.mjs', { outputDir: '../out', outputFile: 'vitest-ctrf.json' }]] } }
`,
  'vitest-ctrf/ctrf-adapter.mjs': `import Ctrf from 'vitest-ctrf-json-reporter'
const Real = Ctrf.default ?? Ctrf
export default class Adapter {
  constructor(options) { this.real = new Real(options) }
  onInit(ctx) { this.real.onInit(ctx) }
  onTestRunEnd(modules, errors) { this.real.onFinished(modules.map((m) => m.task), errors) }
}
`,
  'vitest-ctrf/cart.test.mjs': `import { describe, expect, it } from 'vitest'
let tries = 0
describe('cart', () => {
  it('adds', () => expect(1 + 1).toBe(2))
  it('passes on its second try', () => expect(++tries).toBe(2))
  it('fails', () => expect(1 + 1).toBe(3))
})
`,
  // A package.json of its own: these are CommonJS test files, which Jest runs without ESM flags.
  'jest/package.json': '{}\n',
  'jest/math.test.js': `jest.retryTimes(1)
let tries = 0
describe('math', () => {
  test('adds', () => expect(1 + 1).toBe(2))
  test('fails', () => expect(1 + 1).toBe(3))
  test.skip('skipped', () => {})
  test.todo('todo')
  test('flaky', () => expect(++tries).toBe(2))
  describe('nested', () => test('deep', () => {}))
})
test('top level', () => {})
`,
  'node/math.test.mjs': `import { describe, it } from 'node:test'
import assert from 'node:assert'
describe('math', () => {
  it('adds', () => assert.equal(1 + 1, 2))
  it('fails', () => assert.equal(1 + 1, 3))
  it.skip('skipped', () => {})
  it.todo('todo')
  describe('nested', () => it('deep', () => {}))
})
it('top level', () => {})
`,
  'playwright/playwright.config.mjs': `import { defineConfig } from '@playwright/test'
export default defineConfig({
  testDir: '.',
  retries: 1,
  workers: 1,
  // Playwright would otherwise put test-results/ beside the nearest package.json: the repository root.
  outputDir: '../out/test-results',
  reporter: [['json', { outputFile: '../out/playwright.json' }], ['junit', { outputFile: '../out/playwright.xml' }]],
  use: {
    launchOptions: ${PLAYWRIGHT_LAUNCH_OPTIONS},
  },
  projects: [{ name: 'chromium' }],
})
`,
  'playwright/shop.spec.mjs': `import { test, expect } from '@playwright/test'
test.describe('shop', () => {
  test('passes', async () => expect(1).toBe(1))
  test('flaky', async ({}, testInfo) => expect(testInfo.retry).toBe(1))
  test('always fails', async () => expect(1).toBe(2))
  test.skip('skipped', async () => {})
  test('renders the cart', async ({ page }) => {
    await page.setContent('<h1>Cart</h1><button>Pay</button>')
    await expect(page.locator('h1')).toHaveText('Cart')
    await expect(page.getByRole('button', { name: 'Pay' })).toBeVisible()
  })
})
`,
}

const run = (args: string[], cwd: string, env: Record<string, string> = {}) => runTool(process.execPath, args, cwd, env)

let dir = ''
const out = (name: string) => join(dir, 'out', name)
const ran: Record<string, Ran> = {}

beforeAll(async () => {
  dir = testdir(files, 'ingest-runners-')
  mkdirSync(join(dir, 'out'))
  const jestJunit = {
    JEST_JUNIT_OUTPUT_DIR: join(dir, 'out'),
    JEST_JUNIT_OUTPUT_NAME: 'jest-junit.xml',
    // The configuration of the public jest-junit fixtures: file as suite, describe path as classname.
    JEST_JUNIT_SUITE_NAME: '{filepath}',
    JEST_JUNIT_CLASSNAME: '{classname}',
    JEST_JUNIT_TITLE: '{title}',
    JEST_JUNIT_ANCESTOR_SEPARATOR: ' › ',
  }
  const vitest = [bin.vitest, 'run', '-c', 'vitest.config.mjs', '--reporter=junit', `--outputFile=${out('vitest.xml')}`]
  const jest = [bin.jest, '--ci', '--runInBand', '--rootDir', '.', '--reporters=default', '--reporters=jest-junit']
  const jestJson = ['--json', `--outputFile=${out('jest.json')}`]
  const node = ['--test', '--test-reporter=junit', `--test-reporter-destination=${out('node.xml')}`, 'math.test.mjs']
  const jobs: [string, Promise<Ran>][] = [
    ['vitest', run(vitest, join(dir, 'vitest'))],
    ['vitest-ctrf', run([bin.vitest, 'run', '-c', 'vitest.config.mjs'], join(dir, 'vitest-ctrf'))],
    ['jest', run([...jest, ...jestJson], join(dir, 'jest'), jestJunit)],
    ['node', run(node, join(dir, 'node'))],
  ]
  if (haveChromium) {
    jobs.push(['playwright', run([bin.playwright, 'test', '-c', 'playwright.config.mjs'], join(dir, 'playwright'))])
  }
  for (const [name, result] of await Promise.all(jobs.map(async ([n, p]) => [n, await p] as const))) ran[name] = result
  if (process.env.FLAKEWATCH_UPDATE_FIXTURES === '1') saveFixtures()
}, 240_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function report(name: string): Promise<ParsedReport> {
  const path = out(name)
  expect(
    existsSync(path),
    `${name} was not written:\n${Object.values(ran)
      .map((r) => r.output)
      .join('\n')}`,
  ).toBe(true)
  return parseReport(sourceFromFile(path))
}

/** Our own runners' outputs, kept for fast tests; the temporary directory becomes /project. */
function saveFixtures(): void {
  const saved: [string, string][] = [
    ['vitest.xml', 'junit/vitest-junit.xml'],
    ['jest-junit.xml', 'junit/jest-junit-retry.xml'],
    ['node.xml', 'junit/node-test.xml'],
    ['jest.json', 'jest-json/jest-retry.json'],
    ['playwright.json', 'playwright-json/flaky-retry.json'],
    ['playwright.xml', 'junit/playwright-flaky-retry.xml'],
  ]
  for (const [from, to] of saved) {
    if (!existsSync(out(from))) continue
    const target = join(ROOT, 'test', 'fixtures', 'reports', to)
    mkdirSync(join(target, '..'), { recursive: true })
    writeFileSync(target, readFileSync(out(from), 'utf8').replaceAll(dir, '/project').replaceAll(ROOT, '/project'))
  }
}

describe('real runners write reports the parsers read', () => {
  it('vitest --reporter=junit', async () => {
    expect(ran.vitest!.code, ran.vitest!.output).toBe(1)
    const r = await report('vitest.xml')
    expect(r.format).toBe('junit')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['math.test.mjs', 'math > adds', 'passed'],
      ['math.test.mjs', 'math > fails', 'failed'],
      ['math.test.mjs', 'math > skipped', 'skipped'],
      ['math.test.mjs', 'math > todo', 'skipped'],
      ['math.test.mjs', 'math > flaky', 'passed'],
      ['math.test.mjs', 'math > nested > deep', 'passed'],
      ['math.test.mjs', 'top level', 'passed'],
    ])
    expect(caseNamed(r, 'math > fails')).toMatchObject({
      message: 'expected 2 to be 3 // Object.is equality',
      errorType: 'AssertionError',
      file: 'math.test.mjs',
    })
    // vitest's JUnit output does not mention the retry: a plain pass with one attempt.
    const flaky = caseNamed(r, 'math > flaky')
    expect(flaky).toMatchObject({ flakyOnRetry: false })
    expect(flaky.attempts.map((a) => a.status)).toEqual(['passed'])
    expect(r.meta.startedAt).toMatch(/^\d{4}-/)
  })

  it('vitest-ctrf-json-reporter: no attempt is made up from its retry limit, and one warning names the field', async () => {
    expect(ran['vitest-ctrf']!.code, ran['vitest-ctrf']!.output).toBe(1)
    const written = JSON.parse(readFileSync(out('vitest-ctrf.json'), 'utf8'))
    // What the issue describes: the configured limit on every test, no retryAttempts, no reportFormat/specVersion.
    expect(written.results.tests.map((t: { retries: number }) => t.retries)).toEqual([2, 2, 2])
    expect(written.results.tests.some((t: object) => 'retryAttempts' in t || 'flaky' in t)).toBe(false)
    expect(ctrfSchemaErrors(written)).not.toEqual([])
    const r = await report('vitest-ctrf.json')
    expect(r.format).toBe('ctrf')
    expect(r.cases.map((c) => [c.name, c.status, c.flakyOnRetry, c.attempts.map((a) => a.status).join(',')])).toEqual([
      ['adds', 'passed', false, 'passed'],
      // It did fail once, but nothing in the file says so except a count that is the same on every test.
      ['passes on its second try', 'passed', false, 'passed'],
      ['fails', 'failed', false, 'failed'],
    ])
    expect(r.warnings).toHaveLength(1)
    expect(r.warnings![0]).toMatch(/^results\.tests\[0\]\.retries is 2 on a test that passed/)
    expect(r.warnings![0]).toMatch(/not schema-valid CTRF: reportFormat, specVersion/)
  })

  it('jest with jest-junit and --json', async () => {
    expect(ran.jest!.code, ran.jest!.output).toBe(1)
    const junit = await report('jest-junit.xml')
    const json = await report('jest.json')
    expect(json.format).toBe('jest-json')
    const expected = [
      ['math › adds', 'passed'],
      ['math › fails', 'failed'],
      ['math › skipped', 'skipped'],
      ['math › todo', 'skipped'],
      ['math › flaky', 'passed'],
      ['math › nested › deep', 'passed'],
      ['top level', 'passed'],
    ]
    expect(json.cases.map((c) => [c.name, c.status])).toEqual(expected)
    // jest-junit writes a todo as a plain passing case.
    const todoPasses = expected.map(([n, s]) => [n, n === 'math › todo' ? 'passed' : s])
    expect(junit.cases.map((c) => [c.name, c.status])).toEqual(todoPasses)
    expect(junit.cases.every((c) => c.module === 'math.test.js')).toBe(true)
    expect(json.cases.every((c) => c.module === join(dir, 'jest', 'math.test.js'))).toBe(true)
    // Jest 30 records the retry as invocations: 2 (retryReasons stays empty): a failed attempt, then the pass.
    const flaky = caseNamed(json, 'math › flaky')
    expect(flaky).toMatchObject({ flakyOnRetry: true })
    expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    expect(caseNamed(junit, 'math › flaky')).toMatchObject({ flakyOnRetry: false })
    expect(caseNamed(junit, 'math › flaky').attempts.map((a) => a.status)).toEqual(['passed'])
    expect(caseNamed(json, 'math › fails').message).toMatch(/^Error: expect\(received\)\.toBe\(expected\)/)
    expect(caseNamed(junit, 'math › fails').message).toBe(caseNamed(json, 'math › fails').message)
  })

  it('node --test --test-reporter=junit', async () => {
    expect(ran.node!.code, ran.node!.output).toBe(1)
    const r = await report('node.xml')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['math', 'adds', 'passed'],
      ['math', 'fails', 'failed'],
      ['math', 'skipped', 'skipped'],
      ['math', 'todo', 'skipped'],
      ['math › nested', 'deep', 'passed'],
      ['', 'top level', 'passed'],
    ])
    expect(caseNamed(r, 'fails')).toMatchObject({ message: '2 == 3', errorType: 'testCodeFailure' })
  })

  describe.skipIf(!haveChromium)(`Playwright Test driving ${CHROMIUM}`, () => {
    it('json reporter: the flaky test passed on retry with two attempts', async () => {
      expect(ran.playwright!.code, ran.playwright!.output).toBe(1)
      const r = await report('playwright.json')
      expect(r.format).toBe('playwright-json')
      expect(countByStatus(r.cases)).toEqual({ passed: 3, failed: 1, skipped: 1 })
      expect(r.cases.every((c) => c.module === 'shop.spec.mjs' && c.env?.project === 'chromium')).toBe(true)
      const flaky = caseNamed(r, 'shop › flaky')
      expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true })
      expect(flaky.attempts.map((a) => [a.retry, a.status])).toEqual([
        [0, 'failed'],
        [1, 'passed'],
      ])
      expect(flaky.message).toMatch(/^Error: expect\(received\)\.toBe\(expected\)/)
      expect(flaky.attempts[0]!.stack).not.toContain('\u001b')
      const broken = caseNamed(r, 'shop › always fails')
      expect(broken).toMatchObject({ status: 'failed', flakyOnRetry: false })
      expect(broken.attempts.map((a) => a.status)).toEqual(['failed', 'failed'])
      expect(caseNamed(r, 'shop › renders the cart')).toMatchObject({ status: 'passed', attempts: [expect.anything()] })
      expect(caseNamed(r, 'shop › skipped').status).toBe('skipped')
      expect(r.meta.startedAt).toMatch(/^\d{4}-/)
    })

    it('junit reporter: the flaky test shows as a plain pass', async () => {
      const r = await report('playwright.xml')
      expect(countByStatus(r.cases)).toEqual({ passed: 3, failed: 1, skipped: 1 })
      expect(r.cases.every((c) => c.env?.project === 'chromium')).toBe(true)
      expect(r.meta.runnerId).toBeUndefined()
      const flaky = caseNamed(r, 'shop › flaky')
      expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: false })
      expect(flaky.attempts).toHaveLength(1)
      const broken = caseNamed(r, 'shop › always fails')
      expect(broken).toMatchObject({ module: 'shop.spec.mjs', errorType: 'expect.toBe' })
      expect(broken.message).toBe('expect(received).toBe(expected) // Object.is equality')
      // Both tries are in the one failure body, not separate attempts.
      expect(broken.stack).toMatch(/Retry #1/)
    })
  })
})
