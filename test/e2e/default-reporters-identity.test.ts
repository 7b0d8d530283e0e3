import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findRepoRoot } from '../../src/ingest/repo-root.js'
import { openStore } from '../../src/store/open.js'
import { BIN, ensureDist, ROOT, run, type Ran } from '../reporters/helpers.js'

/**
 * Issue 27, item 5: real Jest, Vitest and Playwright runs with their reporters' DEFAULT settings (jest-junit's
 * templates that drop the file, absolute paths in the JSON and CTRF files, ` > ` and ` › `, Playwright projects),
 * in a checkout that is neither a git repository nor a known CI root, ingested through every format into one store:
 * one id per test, and each test's history holds every report.
 */
const dirs: string[] = []
afterAll(() => {
  if (!process.env.FLAKEWATCH_KEEP_TMP) for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/**
 * A project in the system's temporary folder, outside any repository, whose node_modules links to this
 * repository's packages (so the runners and reporters resolve as installed) and to the built flakewatch.
 */
function checkout(prefix: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), `fw-ids-${prefix}-`))
  dirs.push(dir)
  expect(findRepoRoot(dir)).toBeNull()
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), content)
  }
  const modules = join(dir, 'node_modules')
  mkdirSync(modules)
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry !== '.bin' && entry !== 'flakewatch') symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry))
  }
  const pkg = join(modules, 'flakewatch')
  mkdirSync(pkg)
  const { name, type, exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name, type, exports }))
  symlinkSync(join(ROOT, 'dist'), join(pkg, 'dist'), 'dir')
  return dir
}

function expectRan(r: Ran): void {
  expect(r.exitCode, r.stdout.slice(-2000) + r.stderr.slice(-2000)).toBe(0)
}

/** Each report by a command of its own (`together`: all in one command); run ids from the content. */
async function ingest(cwd: string, db: string, reports: string[], together = false): Promise<void> {
  for (const files of together ? [reports] : reports.map((f) => [f])) {
    const r = await run(BIN.flakewatch, ['ingest', ...files, '--suite', 'unit', '--db', db], cwd)
    expect(r.exitCode, `${files.join(' ')}: ${r.stderr}`).toBe(0)
    expect(r.stderr, files.join(' ')).not.toMatch(/kept as tests of their own/)
  }
}

/** Every test id of the store, and how many results each has. */
async function stored(db: string): Promise<Record<string, number>> {
  const store = await openStore({ db })
  try {
    const out: Record<string, number> = {}
    for (const t of await store.listTests()) out[t.testId] = (await store.getTestHistory(t.testId))!.entries.length
    return out
  } finally {
    await store.close()
  }
}

/** Two files, nested describe blocks, a `>` inside a title: every test title is unique in the suite. */
const AUTH = `describe('Auth', () => {
  test('expires the session', () => {})
  describe('login', () => { test('accepts a > b', () => {}) })
})
test('signs out', () => {})
`
const CART = `describe('Cart', () => {
  describe('totals', () => { test('sums', () => {}); test('rounds', () => {}) })
})
test('empties', () => {})
`
const TESTS = 6

/** The same reports as an agent with another checkout path wrote them, ingested from the folder above it. */
function otherAgent(dir: string, files: string[]): { cwd: string; files: string[] } {
  const agent = mkdtempSync(join(tmpdir(), 'fw-ids-agent-'))
  dirs.push(agent)
  const other = join(agent, 'work', 'shop')
  mkdirSync(other, { recursive: true })
  for (const f of files) {
    mkdirSync(dirname(join(other, f)), { recursive: true })
    writeFileSync(join(other, f), readFileSync(join(dir, f), 'utf8').replaceAll(dir, other))
  }
  return { cwd: agent, files: files.map((f) => join('work', 'shop', f)) }
}

/** The six tests' ids, as a runner joining titles with `sep` names them with files under `dir`. */
function idsOf(dir: string, ext: string, sep: string): string[] {
  const auth = `unit::${dir}auth/auth.${ext}::`
  const cart = `unit::${dir}cart/cart.${ext}::`
  return [
    `${auth}Auth ${sep} expires the session`,
    `${auth}Auth ${sep} login ${sep} accepts a > b`,
    `${auth}signs out`,
    `${cart}Cart ${sep} totals ${sep} rounds`,
    `${cart}Cart ${sep} totals ${sep} sums`,
    `${cart}empties`,
  ]
}

/**
 * Ingests `reports` one command each after the native reporter wrote `native.db`, then `fromAgent` as another
 * agent's checkout wrote them, and checks that each of `ids` is the only test and has `results` results.
 */
async function expectOneIdEach(
  dir: string,
  reports: string[],
  fromAgent: string[],
  ids: string[],
  results: number,
): Promise<void> {
  await ingest(dir, join(dir, 'native.db'), reports)
  const agent = otherAgent(dir, fromAgent)
  await ingest(agent.cwd, join(dir, 'native.db'), agent.files)
  expect(await stored(join(dir, 'native.db'))).toEqual(Object.fromEntries(ids.map((id) => [id, results])))
}

describe('one id per test under the reporters’ default settings (real runners, no git)', { timeout: 300_000 }, () => {
  it('Jest: default jest-junit, --json, jest-ctrf-json-reporter and flakewatch/jest', async () => {
    ensureDist()
    const dir = checkout('jest', {
      'package.json': '{}\n',
      'jest.config.js': `module.exports = { testMatch: ['**/src/**/*.test.js'],
        reporters: ['default', 'jest-junit', 'jest-ctrf-json-reporter', ['flakewatch/jest', { db: 'native.db', suite: 'unit' }]] }\n`,
      'src/auth/auth.test.js': AUTH,
      'src/cart/cart.test.js': CART,
    })
    expectRan(await run(BIN.jest, ['--ci', '--json', '--outputFile=jest.json'], dir))
    // The defaults as they are: no file in jest-junit, absolute paths in the JSON and CTRF files.
    const junit = readFileSync(join(dir, 'junit.xml'), 'utf8')
    expect(junit).toContain('name="Auth expires the session"')
    expect(junit).not.toContain('auth.test.js')
    expect(readFileSync(join(dir, 'jest.json'), 'utf8')).toContain(join(dir, 'src/auth/auth.test.js'))
    const reports = ['junit.xml', 'jest.json', 'ctrf/ctrf-report.json']

    // Every report in one command, then the other agent's.
    await ingest(dir, join(dir, 'formats.db'), reports, true)
    const agent = otherAgent(dir, ['jest.json', 'ctrf/ctrf-report.json'])
    await ingest(agent.cwd, join(dir, 'formats.db'), agent.files)
    const formats = await stored(join(dir, 'formats.db'))
    expect(Object.keys(formats)).toHaveLength(TESTS)
    for (const [id, n] of Object.entries(formats)) expect(n, id).toBe(5)

    // JUnit first, each report by a command of its own: the test is stored under jest-junit's fileless name (the
    // first describe block as module), and the later reports' names join it, as the store remembers.
    await ingest(dir, join(dir, 'junit-first.db'), reports)
    await ingest(agent.cwd, join(dir, 'junit-first.db'), agent.files)
    const junitFirst = await stored(join(dir, 'junit-first.db'))
    expect(Object.keys(junitFirst).sort()).toEqual([
      'unit::Auth::Auth expires the session',
      'unit::Auth::Auth login accepts a > b',
      'unit::Auth::signs out',
      'unit::Cart::Cart totals rounds',
      'unit::Cart::Cart totals sums',
      'unit::Cart::empties',
    ])
    for (const [id, n] of Object.entries(junitFirst)) expect(n, id).toBe(5)
    // `show` lists the names it was seen under, and shows the test by any of them.
    const show = await run(
      BIN.flakewatch,
      ['show', 'unit::src/auth/auth.test.js::signs out', '--json', '--db', join(dir, 'junit-first.db')],
      dir,
    )
    expect(show.exitCode, show.stderr).toBe(0)
    const shown = JSON.parse(show.stdout) as { test_id: string; names: string[] }
    expect(shown.test_id).toBe('unit::Auth::signs out')
    expect(shown.names).toContain('unit::src/auth/auth.test.js::signs out')
    // The other agent's checkout, seen from the folder above it, is one more name of the same test.
    expect(shown.names).toContain('unit::work/shop/src/auth/auth.test.js::signs out')

    // The native reporter first (its ids name the file), then every report: the history survives the switch.
    await expectOneIdEach(dir, reports, ['jest.json', 'ctrf/ctrf-report.json'], idsOf('src/', 'test.js', '›'), 6)
  })

  it('Vitest: default JUnit and JSON, flakewatch/vitest and its CTRF file', async () => {
    ensureDist()
    const body = (s: string) => `import { describe, test } from 'vitest'\n${s}`
    const dir = checkout('vitest', {
      'vitest.config.mjs': `export default { test: { include: ['src/**/*.test.mjs'], reporters: ['default',
        ['junit', { outputFile: 'junit.xml' }], ['json', { outputFile: 'vitest.json' }],
        ['flakewatch/vitest', { outputFile: 'ctrf.json' }], ['flakewatch/vitest', { db: 'native.db', suite: 'unit' }]] } }\n`,
      'src/auth/auth.test.mjs': body(AUTH),
      'src/cart/cart.test.mjs': body(CART),
    })
    expectRan(await run(BIN.vitest, ['run'], dir))
    expect(readFileSync(join(dir, 'vitest.json'), 'utf8')).toContain(join(dir, 'src/auth/auth.test.mjs'))
    const ids = idsOf('src/', 'test.mjs', '>')
    await expectOneIdEach(dir, ['junit.xml', 'vitest.json', 'ctrf.json'], ['vitest.json'], ids, 5)
  })

  it('Playwright: default JUnit, JSON, playwright-ctrf-json-reporter and flakewatch, two projects', async () => {
    ensureDist()
    const body = (s: string) =>
      `import { test } from '@playwright/test'\n${s.replaceAll('describe(', 'test.describe(')}`
    const dir = checkout('pw', {
      'playwright.config.mjs': `import { defineConfig } from '@playwright/test'
export default defineConfig({ testDir: 'src', workers: 1, outputDir: 'out',
  projects: [{ name: 'chromium' }, { name: 'firefox' }],
  reporter: [['dot'], ['junit', { outputFile: 'junit.xml' }], ['json', { outputFile: 'pw.json' }],
    ['playwright-ctrf-json-reporter', {}], ['flakewatch/playwright/reporter', { db: 'native.db', suite: 'unit' }]] })
`,
      'src/auth/auth.spec.mjs': body(AUTH),
      'src/cart/cart.spec.mjs': body(CART),
    })
    expectRan(await run(BIN.playwright, ['test', '-c', 'playwright.config.mjs'], dir))
    const ctrf = readFileSync(join(dir, 'ctrf/ctrf-report.json'), 'utf8')
    // playwright-ctrf-json-reporter names the project in the suite path and gives absolute paths.
    expect(ctrf).toContain('"chromium > ')
    expect(ctrf).toContain(join(dir, 'src'))
    // Five reports, two projects each: the project is a facet of the run, never a part of the name.
    const reports = ['junit.xml', 'pw.json', 'ctrf/ctrf-report.json']
    await expectOneIdEach(dir, reports, ['ctrf/ctrf-report.json'], idsOf('', 'spec.mjs', '›'), 10)
  })

  it('a monorepo: jest-junit names files from the package, the native reporter and --json from the repository', async () => {
    ensureDist()
    const dir = checkout('mono', {
      'packages/cart/package.json': '{}\n',
      'packages/cart/jest.config.js': `module.exports = { testMatch: ['**/src/**/*.test.js'],
        reporters: ['default', 'jest-junit', ['flakewatch/jest', { db: '../../native.db', suite: 'unit' }]] }\n`,
      'packages/cart/src/auth/auth.test.js': AUTH,
      'packages/cart/src/cart/cart.test.js': CART,
    })
    execFileSync('git', ['init', '-q'], { cwd: dir })
    // jest-junit as docs/reporters.md sets it up: the file as the suite's name, relative to the package.
    const junitEnv = {
      JEST_JUNIT_SUITE_NAME: '{filepath}',
      JEST_JUNIT_CLASSNAME: '{classname}',
      JEST_JUNIT_TITLE: '{title}',
    }
    const pkg = join(dir, 'packages', 'cart')
    expectRan(
      await run(BIN.jest, ['--ci', '--json', '--outputFile=jest.json'], pkg, {
        ...junitEnv,
        JEST_JUNIT_ANCESTOR_SEPARATOR: ' › ',
      }),
    )
    expect(readFileSync(join(pkg, 'junit.xml'), 'utf8')).toContain('name="src/auth/auth.test.js"')
    await ingest(dir, join(dir, 'native.db'), ['packages/cart/junit.xml', 'packages/cart/jest.json'])
    expect(await stored(join(dir, 'native.db'))).toEqual(
      Object.fromEntries(idsOf('packages/cart/src/', 'test.js', '›').map((id) => [id, 3])),
    )
  })
})
