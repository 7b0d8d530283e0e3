import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctrfSchemaErrors } from '../helpers/ctrf-schema.js'
import { BIN, cleanup, comparable, ensureDist, projectDir, readStore, run, type Ran } from './helpers.js'

const cartTest = `jest.retryTimes(2)
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

// The reporter named as users name it, resolved from node_modules/flakewatch (an ES module loaded by Jest).
const jestConfig = `module.exports = {
  testMatch: ['**/*.test.js'],
  reporters: [
    'default',
    ['flakewatch/jest', { db: 'fw.db', suite: 'unit' }],
    ['flakewatch/jest', { outputFile: 'out/ctrf.json', suite: 'unit' }],
    // A database path that is a directory, and a CTRF path below a file: neither can be written.
    ['flakewatch/jest', { db: 'a-directory' }],
    ['flakewatch/jest', { outputFile: 'not-a-dir/ctrf.json' }],
  ],
}
`

describe('flakewatch/jest in a real Jest run', () => {
  let dir: string
  let ran: Ran

  beforeAll(async () => {
    ensureDist()
    dir = projectDir('jest', {
      // A package.json of its own: CommonJS test files, which Jest runs without ESM flags.
      'package.json': '{}\n',
      'jest.config.js': jestConfig,
      'cart.test.js': cartTest,
      'broken.test.js': 'this is not javascript\n',
    })
    mkdirSync(join(dir, 'a-directory'))
    writeFileSync(join(dir, 'not-a-dir'), 'a file\n')
    ran = await run(BIN.jest, ['--json', '--outputFile=jest.json'], dir, { FLAKEWATCH_BRANCH: 'main' })
  }, 60_000)
  afterAll(() => cleanup(dir))

  it('keeps Jest’s outcome and says what it wrote or could not write', () => {
    expect(ran.exitCode, ran.stderr).toBe(1)
    expect(ran.stderr).toMatch(/flakewatch: recorded 8 tests \(2 failed, 1 flaky\) as run local-/)
    expect(ran.stderr).toMatch(/flakewatch: wrote 8 tests .* to .*out\/ctrf\.json/)
    expect(ran.stderr).toMatch(/flakewatch: could not record this run's results in .*a-directory: /)
    expect(ran.stderr).toMatch(/flakewatch: could not record this run's results in .*not-a-dir\/ctrf\.json: /)
  })

  it('records every attempt of a retried test', async () => {
    const tests = await readStore(join(dir, 'fw.db'))
    const id = (name: string) => `unit::cart.test.js::${name}`
    const flaky = tests.get(id('cart › flaky'))
    expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true, attempts: ['failed', 'passed'] })
    expect(tests.get(id('cart › fails'))).toMatchObject({ status: 'failed', attempts: ['failed', 'failed', 'failed'] })
    expect(tests.get(id('cart › todo'))).toMatchObject({ status: 'skipped' })
    const broken = tests.get('unit::broken.test.js::Test suite failed to run')
    expect(broken).toMatchObject({ status: 'error' })
    expect([...tests.values()][0]).toMatchObject({ runStatus: 'complete' })
  })

  it('stores what `flakewatch ingest` stores from the same run’s --json report', async () => {
    const ingested = await run(BIN.flakewatch, ['ingest', 'jest.json', '--db', 'ingest.db', '--suite', 'unit'], dir)
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    expect(comparable(await readStore(join(dir, 'fw.db')))).toEqual(comparable(await readStore(join(dir, 'ingest.db'))))
  })

  it('writes a CTRF file that the official CTRF schema accepts', () => {
    const ctrf = JSON.parse(readFileSync(join(dir, 'out/ctrf.json'), 'utf8')) as { results: { tests: unknown[] } }
    expect(ctrf.results.tests.length).toBe(8)
    expect(ctrfSchemaErrors(ctrf)).toEqual([])
  })

  it('writes a CTRF file that ingests to the same tests and attempts', async () => {
    const ingested = await run(BIN.flakewatch, ['ingest', 'out/ctrf.json', '--db', 'ctrf.db', '--suite', 'unit'], dir)
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    const fromCtrf = comparable(await readStore(join(dir, 'ctrf.db')))
    const fromReporter = comparable(await readStore(join(dir, 'fw.db')))
    // CTRF has no "error" status: the file that failed to load comes back as a failure.
    const broken = 'unit::broken.test.js::Test suite failed to run'
    expect(fromCtrf[broken]?.status).toBe('failed')
    fromCtrf[broken] = fromReporter[broken]!
    expect(fromCtrf).toEqual(fromReporter)
  })
})
