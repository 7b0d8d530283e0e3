import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

/**
 * Issue 27, item 5: a test keeps one id beyond ingest. Real reports of one Jest run (jest-junit with its default
 * templates, and Jest's `--json` with absolute paths from a checkout outside this repository) and one Playwright run
 * (its JUnit, JSON and CTRF reporters, project `chromium`): a quarantine set under one reporter's name holds when the
 * gate reads the other's report, and a bundle exported under one naming imports into the history of the other.
 */
const FIXTURES = join(ROOT, 'test/fixtures/reports/identity')
const JEST_JUNIT = join(FIXTURES, 'jest-junit-default.xml')
const JEST_JSON = join(FIXTURES, 'jest-results.json')
const PW_CTRF = join(FIXTURES, 'playwright-ctrf.json')
const PW_JUNIT = join(FIXTURES, 'playwright-junit.xml')
const PW_JSON = join(FIXTURES, 'playwright-results.json')

async function cli(dir: string, args: string[], code = 0) {
  const r = await runCli(args, { cwd: dir })
  expect(r.exitCode, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(code)
  return r
}

async function testIds(db: string): Promise<string[]> {
  const store = await openStore({ db, readOnly: true })
  try {
    return (await store.listTests()).map((t) => t.testId).sort()
  } finally {
    await store.close()
  }
}

describe('one id for gate, quarantine file and bundle import', () => {
  it('gate: a quarantine set on the jest-junit name forgives the failure Jest JSON reports, and back', async () => {
    const dir = testdir({}, 'ids-gate-')
    await cli(dir, ['ingest', JEST_JUNIT, '--suite', 'unit', '--db', 'fw.db'])
    // Both failures of the run, each quarantined under jest-junit's default name (no file, the describe path joined).
    for (const id of ['unit::Auth::Auth expires the session', 'unit::Cart::Cart sums totals']) {
      await cli(dir, ['quarantine', 'add', id, '--reason', 'flaky', '--db', 'fw.db'])
    }
    const gated = await cli(dir, ['gate', JEST_JSON, '--suite', 'unit', '--db', 'fw.db', '--json'])
    const result = JSON.parse(gated.stdout) as { verdict: string; quarantined: { test_id: string }[] }
    expect(result.verdict).toBe('pass')
    expect(result.quarantined.map((q) => q.test_id).sort()).toEqual([
      'unit::Auth::Auth expires the session',
      'unit::Cart::Cart sums totals',
    ])
    // The gated JUnit copy written from the JSON report skips exactly those two.
    await cli(dir, ['gate', JEST_JSON, '--suite', 'unit', '--db', 'fw.db', '--junit-out', 'gated.xml'])
    const gatedXml = readFileSync(join(dir, 'gated.xml'), 'utf8')
    expect(gatedXml.match(/<skipped/g)).toHaveLength(2)
    expect(gatedXml).not.toMatch(/<failure/)

    // The same from the reviewable file, which knows nothing but the quarantined ids.
    await cli(dir, ['quarantine', 'export', '--db', 'fw.db', '-o', 'q.json'])
    const fromFile = await cli(dir, ['gate', JEST_JSON, '--suite', 'unit', '--quarantine-file', 'q.json', '--json'])
    expect((JSON.parse(fromFile.stdout) as { verdict: string }).verdict).toBe('pass')

    // The other way round: quarantined under Jest JSON's name in a store that first saw the JSON report.
    const other = testdir({}, 'ids-gate-')
    await cli(other, ['ingest', JEST_JSON, '--suite', 'unit', '--db', 'fw.db'])
    const [expires, sums] = (await testIds(join(other, 'fw.db'))).filter((id) => /expires|sums/.test(id))
    expect(expires).toMatch(/auth\.test\.js::Auth › expires the session$/)
    for (const id of [expires!, sums!])
      await cli(other, ['quarantine', 'add', id, '--reason', 'flaky', '--db', 'fw.db'])
    const back = await cli(other, ['gate', JEST_JUNIT, '--suite', 'unit', '--db', 'fw.db', '--json'])
    expect((JSON.parse(back.stdout) as { verdict: string }).verdict).toBe('pass')
    // A quarantine of one test does not forgive the other.
    await cli(other, ['quarantine', 'remove', sums!, '--reason', 'fixed', '--db', 'fw.db'])
    const blocked = await cli(other, ['gate', JEST_JUNIT, '--suite', 'unit', '--db', 'fw.db', '--json'], 1)
    const blocking = (JSON.parse(blocked.stdout) as { blocking: { test_id: string }[] }).blocking
    expect(blocking.map((b) => b.test_id)).toEqual([sums])
  })

  it('gate: a Playwright quarantine from the CTRF report (project and file prefixes) holds for its JUnit and JSON', async () => {
    const dir = testdir({}, 'ids-gate-pw-')
    await cli(dir, ['ingest', PW_CTRF, '--suite', 'e2e', '--db', 'fw.db'])
    const [coupon] = (await testIds(join(dir, 'fw.db'))).filter((id) => id.includes('coupon'))
    await cli(dir, ['quarantine', 'add', coupon!, '--reason', 'flaky', '--db', 'fw.db'])
    for (const report of [PW_JUNIT, PW_JSON]) {
      const r = await cli(dir, ['gate', report, '--suite', 'e2e', '--db', 'fw.db', '--json'])
      const result = JSON.parse(r.stdout) as { verdict: string; quarantined: { test_id: string }[] }
      expect(
        result.quarantined.map((q) => q.test_id),
        report,
      ).toEqual([coupon])
    }
  })

  it('import: a bundle exported under jest-junit names joins the history of the tests Jest JSON named', async () => {
    const from = testdir({}, 'ids-import-')
    await cli(from, ['ingest', JEST_JUNIT, '--suite', 'unit', '--db', 'fw.db'])
    await cli(from, ['export', 'bundle', '--db', 'fw.db', '-o', 'bundle.json'])
    const into = testdir({}, 'ids-import-')
    await cli(into, ['ingest', JEST_JSON, '--suite', 'unit', '--db', 'fw.db'])
    const before = await testIds(join(into, 'fw.db'))
    expect(before).toHaveLength(5)
    await cli(into, ['import', 'bundle', join(from, 'bundle.json'), '--db', 'fw.db'])
    expect(await testIds(join(into, 'fw.db'))).toEqual(before)
    const store = await openStore({ db: join(into, 'fw.db'), readOnly: true })
    try {
      for (const id of before) expect((await store.getTestHistory(id))!.entries, id).toHaveLength(2)
      // The bundle's names are remembered: `show` lists them, and the next report under them is matched at once.
      const names = await store.testNames().listNames({ nameId: 'unit::Auth::Auth expires the session' })
      expect(names.map((n) => n.testId)).toEqual([before.find((id) => id.endsWith('Auth › expires the session'))])
    } finally {
      await store.close()
    }
  })
})
