import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeTestId, type Result } from '../../src/model.js'
import { openStore } from '../../src/store/open.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { ROOT, runCli, testdir as makeDir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

/**
 * A test is found by any name it was seen under, as ingest finds it: `quarantine add` and `quarantine remove` take
 * a name a report gave it (or one ingest would match to it), and `flakewatch comment` sorts a report's failures by
 * the tests they are stored as. Real reports of one Jest run (jest-junit's default names, and Jest's JSON, which
 * names the file) on a real SQLite file.
 */
const FIXTURES = join(ROOT, 'test/fixtures/reports/identity')
const JEST_JUNIT = join(FIXTURES, 'jest-junit-default.xml')
const JEST_JSON = join(FIXTURES, 'jest-results.json')
/** jest-junit's name for the test Jest's JSON names `…auth.test.js::Auth › expires the session`. */
const JUNIT_EXPIRES = 'unit::Auth::Auth expires the session'

const dirs: string[] = []
afterAll(() => dirs.forEach(cleanup))
const testdir = (files: Record<string, string>, prefix: string) => {
  const dir = makeDir(files, prefix)
  dirs.push(dir)
  return dir
}

async function cli(dir: string, args: string[], code = 0) {
  const r = await runCli([...args, '--db', 'fw.db'], { cwd: dir })
  expect(r.exitCode, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(code)
  return r
}

async function storedIds(dir: string): Promise<string[]> {
  const store = await openStore({ db: join(dir, 'fw.db'), readOnly: true })
  try {
    return (await store.listTests()).map((t) => t.testId).sort()
  } finally {
    await store.close()
  }
}

const quarantined = async (dir: string) =>
  (
    JSON.parse((await cli(dir, ['quarantine', 'list', '--json'])).stdout) as { quarantined: { test_id: string }[] }
  ).quarantined
    .map((q) => q.test_id)
    .sort()

describe('quarantine add and remove by any name of a test', () => {
  it('takes a name the test was seen under (test_names), and releases it by that name', async () => {
    const dir = testdir({}, 'alias-q-')
    await cli(dir, ['ingest', JEST_JSON, '--suite', 'unit'])
    // The second report names the same tests jest-junit's way: ingest records those names (test_names).
    await cli(dir, ['ingest', JEST_JUNIT, '--suite', 'unit', '--run-id', 'junit'])
    const ids = await storedIds(dir)
    const expires = ids.find((id) => id.endsWith('::Auth › expires the session'))!
    expect(ids).not.toContain(JUNIT_EXPIRES)

    const add = await cli(dir, ['quarantine', 'add', JUNIT_EXPIRES, '--reason', 'flaky', '--json'])
    expect((JSON.parse(add.stdout) as { test_id: string }[]).map((r) => r.test_id)).toEqual([expires])
    expect(add.stderr).toContain(`${JUNIT_EXPIRES} is a name of ${expires}`)
    expect(await quarantined(dir)).toEqual([expires])

    await cli(dir, ['quarantine', 'remove', JUNIT_EXPIRES, '--reason', 'fixed'])
    expect(await quarantined(dir)).toEqual([])
  })

  it('takes a name ingest would match to one stored test, and says so', async () => {
    const dir = testdir({}, 'alias-q-')
    await cli(dir, ['ingest', JEST_JSON, '--suite', 'unit'])
    const expires = (await storedIds(dir)).find((id) => id.endsWith('::Auth › expires the session'))!
    const add = await cli(dir, ['quarantine', 'add', JUNIT_EXPIRES, '--reason', 'flaky'])
    expect(add.stderr).toContain(`${JUNIT_EXPIRES} is matched, as ingest would, to ${expires}`)
    expect(await quarantined(dir)).toEqual([expires])
  })

  it('refuses a name that fits several tests, listing them, and an unknown one as before', async () => {
    const dir = testdir({}, 'alias-q-')
    const store = await openStore({ db: join(dir, 'fw.db') })
    const inFile = (file: string): Result => ({
      ...result('Cart › adds', 'passed'),
      test: { testId: makeTestId('unit', file, 'Cart › adds'), suite: 'unit', module: file, name: 'Cart › adds', file },
    })
    try {
      await store.ingestReport(
        batch(runMeta('r1', '2026-11-01T00:00:00Z'), [inFile('src/a.test.js'), inFile('src/b.test.js')]),
      )
    } finally {
      await store.close()
    }
    const both = await cli(dir, ['quarantine', 'add', 'unit::Cart::Cart adds', '--reason', 'flaky'], 2)
    expect(both.stderr).toContain('unit::Cart::Cart adds fits several stored tests')
    expect(both.stderr).toContain('unit::src/a.test.js::Cart › adds')
    expect(both.stderr).toContain('unit::src/b.test.js::Cart › adds')
    const unknown = await cli(dir, ['quarantine', 'add', 'unit::nowhere::nothing', '--reason', 'flaky'], 2)
    expect(unknown.stderr).toContain('unit::nowhere::nothing has never been seen in the store')
    expect(await quarantined(dir)).toEqual([])
  })
})

describe('flakewatch comment matches its report to the stored tests', () => {
  it('sorts a jest-junit failure as the stored test it is: quarantined under the id Jest JSON gave it', async () => {
    const dir = testdir({}, 'alias-comment-')
    await cli(dir, ['ingest', JEST_JSON, '--suite', 'unit'])
    const ids = await storedIds(dir)
    const expires = ids.find((id) => id.endsWith('::Auth › expires the session'))!
    const sums = ids.find((id) => id.endsWith('::Cart › sums totals'))!
    await cli(dir, ['quarantine', 'add', expires, '--reason', 'flaky'])

    const r = await cli(dir, ['comment', JEST_JUNIT, '--suite', 'unit', '--dry-run', '--json'])
    const failures = (JSON.parse(r.stdout) as { failures: { test_id: string; quarantined: boolean }[] }).failures
    expect(failures.map((f) => [f.test_id, f.quarantined]).sort()).toEqual([
      [expires, true],
      [sums, false],
    ])
  })
})
