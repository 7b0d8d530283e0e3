import { afterAll, describe, expect, it } from 'vitest'
import { BIN, cleanup, ensureDist, projectDir, run } from './helpers.js'

// A quarantine file with one rule: timeouts on main are forgiven, anything else is not.
const quarantineFile = JSON.stringify({
  version: 1,
  quarantined: [],
  rules: [{ id: 'timeouts-main', match: { message: 'Timeout \\d+ms exceeded', branch: 'main' }, reason: 'slow CI' }],
})

const spec = (kind: 'vitest' | 'jest') => `${kind === 'vitest' ? "import { test } from 'vitest'\n" : ''}
test('adds', () => {})
test('loads', () => { throw new Error('Timeout 30000ms exceeded') })
`

const dirs: string[] = []
afterAll(() => dirs.forEach(cleanup))

describe('the Vitest, Jest and Playwright reporters enforce quarantine rules', { timeout: 180_000 }, () => {
  it('Vitest: a run whose only failure a rule forgives exits 0, and 1 where the rule does not apply', async () => {
    ensureDist()
    const dir = projectDir('vitest-q', {
      'vitest.config.mjs': `export default { test: { include: ['*.check.mjs'], reporters: ['default',
        ['flakewatch/vitest', { db: 'fw.db', suite: 'unit', quarantineFile: 'quarantine.json' }]] } }\n`,
      'a.check.mjs': spec('vitest'),
      'quarantine.json': quarantineFile,
    })
    dirs.push(dir)
    const onMain = await run(BIN.vitest, ['run', '--root', '.'], dir, { FLAKEWATCH_BRANCH: 'main' })
    expect(onMain.exitCode, onMain.stdout + onMain.stderr).toBe(0)
    expect(onMain.stderr).toMatch(/failed unit::a\.check\.mjs::loads \(quarantined by rule timeouts-main: slow CI/)
    const onBranch = await run(BIN.vitest, ['run', '--root', '.'], dir, { FLAKEWATCH_BRANCH: 'feature' })
    expect(onBranch.exitCode).toBe(1)
  })

  it('Jest: the same', async () => {
    ensureDist()
    const dir = projectDir('jest-q', {
      'package.json': '{}\n',
      'jest.config.js': `module.exports = { testMatch: ['**/*.check.js'], reporters: ['default',
        ['flakewatch/jest', { db: 'fw.db', suite: 'unit', quarantineFile: 'quarantine.json' }]] }\n`,
      'a.check.js': spec('jest'),
      'quarantine.json': quarantineFile,
    })
    dirs.push(dir)
    const onMain = await run(BIN.jest, [], dir, { FLAKEWATCH_BRANCH: 'main' })
    expect(onMain.exitCode, onMain.stdout + onMain.stderr).toBe(0)
    expect(onMain.stderr).toMatch(/quarantined by rule timeouts-main: slow CI/)
    const onBranch = await run(BIN.jest, [], dir, { FLAKEWATCH_BRANCH: 'feature' })
    expect(onBranch.exitCode).toBe(1)
  })

  it('Playwright: the same, and a failure with another message is not forgiven', async () => {
    ensureDist()
    const dir = projectDir('pw-q', {
      'playwright.config.mjs': `import { defineConfig } from '@playwright/test'
export default defineConfig({ testDir: '.', testMatch: '*.check.mjs', workers: 1, outputDir: process.env.OUT,
  reporter: [['dot'], ['flakewatch/playwright/reporter', { db: process.env.DB, quarantineFile: 'quarantine.json' }]] })
`,
      'a.check.mjs': `import { test } from '@playwright/test'
test('adds', () => {})
test('loads', () => { throw new Error(process.env.OTHER ? 'expected 1 to be 2' : 'Timeout 30000ms exceeded') })
`,
      'quarantine.json': quarantineFile,
    })
    dirs.push(dir)
    const pw = (env: Record<string, string>, name: string) =>
      run(BIN.playwright, ['test', '-c', 'playwright.config.mjs'], dir, {
        ...env,
        DB: `${name}.db`,
        OUT: `out-${name}`,
      })
    // Three independent runs (own database and output each), so they run side by side.
    const [onMain, onBranch, otherMessage] = await Promise.all([
      pw({ FLAKEWATCH_BRANCH: 'main' }, 'main'),
      pw({ FLAKEWATCH_BRANCH: 'feature' }, 'feature'),
      pw({ FLAKEWATCH_BRANCH: 'main', OTHER: '1' }, 'other'),
    ])
    expect(onMain.exitCode, onMain.stdout + onMain.stderr).toBe(0)
    expect(onMain.stderr).toMatch(/failed default::a\.check\.mjs::loads \(quarantined by rule timeouts-main: slow CI/)
    expect(onBranch.exitCode).not.toBe(0)
    expect(onBranch.stderr).not.toMatch(/Forgiven/)
    expect(otherMessage.exitCode).not.toBe(0)
    expect(otherMessage.stderr).not.toMatch(/Forgiven/)
  })
})
