import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { BIN, cleanup, ensureDist, projectDir, readStore, run, type Ran } from './helpers.js'

// `.check.mjs`: the repository's own vitest run must not pick these up.
const cartTest = `import { describe, expect, test } from 'vitest'
let tries = 0
describe('cart', () => {
  test('adds', () => expect(1 + 1).toBe(2))
  test('flaky', () => expect(++tries).toBe(2))
  test('fails', () => expect(1 + 1).toBe(3))
  test.skip('skipped', () => {})
  test.todo('todo')
  describe('nested', () => test('deep', () => {}))
})
test('top level', () => {})
`

const vitestConfig = `export default {
  test: {
    include: ['*.check.mjs'],
    retry: 2,
    reporters: [
      'default',
      ['flakewatch/vitest', { db: 'fw.db', suite: 'unit' }],
      ['junit', { outputFile: 'junit.xml' }],
      // A database path that is a directory: this reporter cannot write, and must not change the outcome.
      ['flakewatch/vitest', { db: 'a-directory' }],
    ],
  },
}
`

describe('flakewatch/vitest in a real Vitest run', () => {
  let dir: string
  let ran: Ran

  beforeAll(async () => {
    ensureDist()
    dir = projectDir('vitest', {
      'vitest.config.mjs': vitestConfig,
      'cart.check.mjs': cartTest,
      'broken.check.mjs': "import './missing.mjs'\n",
    })
    mkdirSync(join(dir, 'a-directory'))
    ran = await run(BIN.vitest, ['run', '--root', '.'], dir, { FLAKEWATCH_RUN_ID: 'vitest-run-1' })
  }, 60_000)
  afterAll(() => cleanup(dir))

  it('keeps Vitest’s outcome and says what it wrote or could not write', () => {
    expect(ran.exitCode, ran.stdout + ran.stderr).toBe(1)
    expect(ran.stderr).toMatch(/flakewatch: recorded 8 tests \(2 failed, 1 flaky\) as run vitest-run-1 in /)
    expect(ran.stderr).toMatch(/flakewatch: could not record this run's results in .*a-directory: /)
  })

  it('records every attempt of a retried test', async () => {
    const tests = await readStore(join(dir, 'fw.db'))
    const t = (name: string) => tests.get(`unit::cart.check.mjs::${name}`)
    expect(t('cart > flaky')).toMatchObject({ status: 'passed', flakyOnRetry: true, attempts: ['failed', 'passed'] })
    expect(t('cart > fails')).toMatchObject({ status: 'failed', attempts: ['failed', 'failed', 'failed'] })
    expect(t('cart > nested > deep')).toMatchObject({ status: 'passed', attempts: ['passed'] })
    expect(tests.get('unit::broken.check.mjs::broken.check.mjs')).toMatchObject({ status: 'error' })
    const store = await openStore({ db: join(dir, 'fw.db') })
    try {
      const attempts = await store.getAttempts('unit::cart.check.mjs::cart > fails', 'vitest-run-1')
      expect(attempts.map((a) => a.message)).toEqual(Array(3).fill(expect.stringMatching(/expected 2 to be 3/)))
    } finally {
      await store.close()
    }
  })

  it('gives the test ids and final statuses `flakewatch ingest` reads from Vitest’s JUnit report', async () => {
    const ingested = await run(BIN.flakewatch, ['ingest', 'junit.xml', '--db', 'ingest.db', '--suite', 'unit'], dir)
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    const finals = (tests: Map<string, { status: string }>) =>
      Object.fromEntries([...tests].map(([id, t]) => [id, t.status === 'error' ? 'failed' : t.status]))
    // JUnit knows no retries, so only ids and final statuses can agree; a module that failed to load is a failure.
    expect(finals(await readStore(join(dir, 'fw.db')))).toEqual(finals(await readStore(join(dir, 'ingest.db'))))
  })
})
