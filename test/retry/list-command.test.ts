import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { history } from '../helpers/builders.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

const FIXTURES = join(ROOT, 'test', 'fixtures', 'reports', 'junit')

describe('flakewatch list', () => {
  let dir: string
  const db = () => join(dir, 'fw.db')

  beforeAll(async () => {
    dir = testdir({}, 'list-')
    copyFileSync(join(FIXTURES, 'vitest-junit.xml'), join(dir, 'vitest-junit.xml'))
    copyFileSync(join(FIXTURES, 'playwright-flaky-retry.xml'), join(dir, 'playwright-flaky-retry.xml'))
    const store = await openStore({ db: db() })
    try {
      const h = history()
      for (let i = 0; i < 12; i++) {
        h.run(`r${i}`, { revision: `rev${i >> 1}` }).pass('steady')
        if (i % 2) h.fail('wobbly')
        else h.pass('wobbly')
      }
      for (const b of h.build()) await store.ingestReport(b)
    } finally {
      await store.close()
    }
  })
  afterAll(() => cleanup(dir))

  it('lists flaky tests by verdict as ids, a Playwright grep and a -t pattern', async () => {
    const lines = await runCli(['list', '--flaky', '--db', db()], { cwd: dir })
    expect(lines.exitCode, lines.stderr).toBe(0)
    expect(lines.stdout).toBe('unit::mod::wobbly\n')
    const json = await runCli(['list', '--flaky', '--db', db(), '--format', 'json'], { cwd: dir })
    const parsed = JSON.parse(json.stdout) as {
      tests: { test_id: string; reasons: string[] }[]
      playwright_grep: string
    }
    expect(parsed.tests).toEqual([expect.objectContaining({ test_id: 'unit::mod::wobbly', reasons: ['flaky'] })])
    expect(new RegExp(parsed.playwright_grep).test(' chromium mod wobbly')).toBe(true)
    const t = await runCli(['list', '--flaky', '--db', db(), '--format', 'test-name'], { cwd: dir })
    expect(t.stdout.trim()).toBe('(?:^| )wobbly$')
  })

  it('lists tests of this run never seen on the default branch', async () => {
    await runCli(['ingest', 'vitest-junit.xml', '--db', db(), '--suite', 'unit', '--branch', 'main'], { cwd: dir })
    const both = ['vitest-junit.xml', 'playwright-flaky-retry.xml']
    const res = await runCli(['list', '--new', ...both, '--db', db(), '--suite', 'unit', '--format', 'json'], {
      cwd: dir,
    })
    expect(res.exitCode, res.stderr).toBe(0)
    const ids = (JSON.parse(res.stdout) as { tests: { test_id: string; reasons: string[] }[] }).tests
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.every((t) => t.reasons.join() === 'new')).toBe(true)
    // The vitest tests ran on main; every listed test comes from the Playwright report.
    const known = await runCli(['list', '--new', 'vitest-junit.xml', '--db', db(), '--suite', 'unit'], { cwd: dir })
    expect(known.stdout).toBe('')
    const other = await runCli(
      ['list', '--new', 'vitest-junit.xml', '--db', db(), '--suite', 'unit', '--default-branch', 'develop'],
      { cwd: dir },
    )
    expect(other.stdout.trim().split('\n').length).toBeGreaterThan(0)
    expect(other.stdout).not.toBe('')
  })

  it('refuses a list without a selection, and --new without reports', async () => {
    expect((await runCli(['list', '--db', db()], { cwd: dir })).exitCode).toBe(2)
    const res = await runCli(['list', '--new', '--db', db()], { cwd: dir })
    expect(res.exitCode).toBe(2)
    expect(res.stderr).toMatch(/--new: give the reports/)
  })
})
