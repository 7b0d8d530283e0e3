import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { BIN, cleanup, ensureDist, projectDir, run, type Ran } from '../reporters/helpers.js'
import { testdir } from '../helpers/run-cli.js'

/**
 * Issue 14, item 7: the same test, reported through every format a runner writes (JUnit, the runner's JSON, CTRF,
 * flakewatch's own reporter), on any machine, has one id. Each runner runs once, in its own git repository, with
 * all its reporters; every report goes into one store under its own run id.
 */
const dirs: string[] = []
afterAll(() => dirs.forEach(cleanup))

async function storeIds(db: string): Promise<{ ids: string[]; runs: number }> {
  const store = await openStore({ db })
  try {
    const tests = await store.listTests()
    return {
      ids: tests.map((t) => t.testId).sort(),
      runs: (await store.listRuns()).length,
    }
  } finally {
    await store.close()
  }
}

function project(prefix: string, files: Record<string, string>): string {
  const dir = projectDir(prefix, files)
  dirs.push(dir)
  return dir
}

async function ingestAll(dir: string, reports: string[], db = 'all.db'): Promise<void> {
  for (const f of reports) {
    const r = await run(BIN.flakewatch, ['ingest', f, '--suite', 'unit', '--db', db, '--run-id', `ingest-${f}`], dir)
    expect(r.exitCode, `${f}: ${r.stderr}`).toBe(0)
  }
}

function expectRan(r: Ran, code = 0): void {
  expect(r.exitCode, r.stdout.slice(-2000) + r.stderr.slice(-2000)).toBe(code)
}

const SPEC_BODY = `describe('cart', () => {
  test('adds', () => {})
  describe('totals', () => { test('sums', () => {}) })
})
test('top', () => {})
`

describe('one test identity across formats and machines (real runners)', { timeout: 300_000 }, () => {
  it('Jest: jest-junit, --json, CTRF and the native reporter give one id per test, also from another checkout', async () => {
    ensureDist()
    const dir = project('jest-id', {
      'package.json': '{}\n',
      'jest.config.js': `module.exports = { testMatch: ['**/*.check.js'], reporters: ['default', 'jest-junit',
        ['flakewatch/jest', { db: 'all.db', suite: 'unit' }], ['flakewatch/jest', { outputFile: 'ctrf.json', suite: 'unit' }]] }\n`,
      'src/cart/cart.check.js': SPEC_BODY,
    })
    // jest-junit as docs/reporters.md configures it: the file as suite name, the describe path as classname.
    const junitEnv = {
      JEST_JUNIT_OUTPUT_FILE: 'junit.xml',
      JEST_JUNIT_SUITE_NAME: '{filepath}',
      JEST_JUNIT_CLASSNAME: '{classname}',
      JEST_JUNIT_TITLE: '{title}',
      JEST_JUNIT_ANCESTOR_SEPARATOR: ' › ',
    }
    expectRan(await run(BIN.jest, ['--ci', '--json', '--outputFile=jest.json'], dir, junitEnv))
    // Jest's JSON and the CTRF file carry absolute paths of this checkout.
    expect(readFileSync(join(dir, 'jest.json'), 'utf8')).toContain(join(dir, 'src/cart/cart.check.js'))
    await ingestAll(dir, ['junit.xml', 'jest.json', 'ctrf.json'])

    // The same reports as another agent wrote them, from a checkout elsewhere on its disk.
    const agent = testdir({}, 'agent-')
    dirs.push(agent)
    const other = join(agent, 'builds', 'x', 'checkout')
    mkdirSync(other, { recursive: true })
    execFileSync('git', ['init', '-q'], { cwd: other })
    for (const f of ['jest.json', 'ctrf.json']) {
      writeFileSync(join(other, f), readFileSync(join(dir, f), 'utf8').replaceAll(dir, other))
    }
    for (const f of ['jest.json', 'ctrf.json']) {
      const r = await run(
        BIN.flakewatch,
        ['ingest', f, '--suite', 'unit', '--db', join(dir, 'all.db'), '--run-id', `agent-${f}`],
        other,
      )
      expect(r.exitCode, r.stderr).toBe(0)
    }

    const stored = await storeIds(join(dir, 'all.db'))
    expect(stored.runs).toBe(6)
    expect(stored.ids).toEqual([
      'unit::src/cart/cart.check.js::cart › adds',
      'unit::src/cart/cart.check.js::cart › totals › sums',
      'unit::src/cart/cart.check.js::top',
    ])
  })

  it('Vitest: JUnit, JSON, CTRF and the native reporter give one id per test', async () => {
    ensureDist()
    const dir = project('vitest-id', {
      'vitest.config.mjs': `export default { test: { include: ['**/*.check.mjs'], reporters: ['default',
        ['junit', { outputFile: 'junit.xml' }], ['json', { outputFile: 'vitest.json' }],
        ['flakewatch/vitest', { db: 'all.db', suite: 'unit' }], ['flakewatch/vitest', { outputFile: 'ctrf.json', suite: 'unit' }]] } }\n`,
      'src/cart/cart.check.mjs': `import { describe, test } from 'vitest'\n${SPEC_BODY}`,
    })
    expectRan(await run(BIN.vitest, ['run', '--root', '.'], dir))
    await ingestAll(dir, ['junit.xml', 'vitest.json', 'ctrf.json'])
    const stored = await storeIds(join(dir, 'all.db'))
    expect(stored.runs).toBe(4)
    expect(stored.ids).toEqual([
      'unit::src/cart/cart.check.mjs::cart > adds',
      'unit::src/cart/cart.check.mjs::cart > totals > sums',
      'unit::src/cart/cart.check.mjs::top',
    ])
  })

  it('Playwright: JUnit, JSON, CTRF and the native reporter give one id per test; the project is a facet', async () => {
    ensureDist()
    const dir = project('pw-id', {
      'playwright.config.mjs': `import { defineConfig } from '@playwright/test'
export default defineConfig({ testDir: '.', testMatch: '**/*.check.mjs', workers: 1, outputDir: 'out',
  projects: [{ name: 'chromium' }, { name: 'firefox' }], retries: 1,
  // includeRetries: without it Playwright's JUnit shows a pass on retry as a plain pass (docs/reporters.md).
  reporter: [['dot'], ['junit', { outputFile: 'junit.xml', includeRetries: true }], ['json', { outputFile: 'pw.json' }],
    ['flakewatch/playwright/reporter', { db: 'all.db', suite: 'unit' }],
    ['flakewatch/playwright/reporter', { outputFile: 'ctrf.json', suite: 'unit' }]] })
`,
      'src/cart/cart.check.mjs': `import { test, expect } from '@playwright/test'
${SPEC_BODY.replaceAll('describe(', 'test.describe(')}
test('retried', ({}, info) => expect(info.retry).toBe(1))
`,
    })
    expectRan(await run(BIN.playwright, ['test', '-c', 'playwright.config.mjs'], dir))
    await ingestAll(dir, ['junit.xml', 'pw.json', 'ctrf.json'])
    const stored = await storeIds(join(dir, 'all.db'))
    expect(stored.ids).toEqual([
      'unit::src/cart/cart.check.mjs::cart › adds',
      'unit::src/cart/cart.check.mjs::cart › totals › sums',
      'unit::src/cart/cart.check.mjs::retried',
      'unit::src/cart/cart.check.mjs::top',
    ])
    // Each format, each project: a run per project, never a project in a test's name.
    const store = await openStore({ db: join(dir, 'all.db') })
    try {
      const runs = await store.listRuns()
      expect(runs).toHaveLength(8)
      expect(new Set(runs.map((r) => r.env.project))).toEqual(new Set(['chromium', 'firefox']))
      // The pass on retry is visible through every format, JUnit included.
      const retried = await store.getTestHistory('unit::src/cart/cart.check.mjs::retried')
      expect(retried!.entries).toHaveLength(8)
      for (const e of retried!.entries) {
        expect(e, `run ${e.run.runId}`).toMatchObject({ status: 'passed', flakyOnRetry: true })
      }
    } finally {
      await store.close()
    }
  })
})
