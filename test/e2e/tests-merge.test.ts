import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { runCli, testdir } from '../helpers/run-cli.js'

/** A JUnit report of one test, `adds`, in class `cls`, that passed or failed. */
const junit = (cls: string, failed = false) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="${cls}" tests="1"><testcase classname="${cls}" name="adds" time="0.01">${failed ? '<failure message="boom"/>' : ''}</testcase></testsuite>
`

describe('flakewatch tests merge and split (issue 27, item 5)', { timeout: 120_000 }, () => {
  it('merges a renamed class’s test into the new one with its history, audited; a split name is a test again', async () => {
    const dir = testdir({
      'old.xml': junit('com.shop.CartTest', true),
      'new.xml': junit('com.shop.CartTests'),
      'old-again.xml': junit('com.shop.CartTest'),
      'old-after-split.xml': junit('com.shop.CartTest', true),
    })
    const db = join(dir, 'fw.db')
    const ingest = async (file: string) => {
      const r = await runCli(['ingest', file, '--db', db, '--suite', 'unit', '--run-id', file], { cwd: dir })
      expect(r.exitCode, r.stderr).toBe(0)
    }
    const ids = async () => {
      const store = await openStore({ db })
      try {
        return (await store.listTests()).map((t) => t.testId)
      } finally {
        await store.close()
      }
    }
    const [from, into] = ['unit::com.shop.CartTest::adds', 'unit::com.shop.CartTests::adds']
    await ingest('old.xml')
    await ingest('new.xml')
    // Two classes are two tests to ingest: only a person knows the class was renamed.
    expect(await ids()).toEqual([from, into])

    const noReason = await runCli(['tests', 'merge', from, into, '--db', db], { cwd: dir })
    expect(noReason.exitCode).toBe(2)
    expect(noReason.stderr).toMatch(/--reason/)
    const unknown = await runCli(['tests', 'merge', 'unit::x::y', into, '--db', db, '--reason', 'r'], { cwd: dir })
    expect(unknown.exitCode).not.toBe(0)
    expect(unknown.stderr).toContain('no test "unit::x::y"')

    // The old test was quarantined under its old name: the quarantine goes with it.
    const add = ['quarantine', 'add', from, '--reason', 'flaky', '--owner', 'team-cart', '--db', db]
    expect((await runCli(add, { cwd: dir })).exitCode).toBe(0)
    const merged = await runCli(
      ['tests', 'merge', from, into, '--db', db, '--reason', 'class renamed', '--actor', 'ana', '--json'],
      { cwd: dir },
    )
    expect(merged.exitCode, merged.stderr).toBe(0)
    expect(JSON.parse(merged.stdout)).toEqual({
      from,
      into,
      results: 1,
      quarantine: 'moved',
      ticket: null,
      fingerprints: 0,
    })
    expect(await ids()).toEqual([into])
    const listed = await runCli(['quarantine', 'list', '--db', db, '--json'], { cwd: dir })
    expect(
      (JSON.parse(listed.stdout) as { quarantined: { test_id: string; owner: string }[] }).quarantined.map((q) => [
        q.test_id,
        q.owner,
      ]),
    ).toEqual([[into, 'team-cart']])

    // The old name, reported again, is the merged test; show lists it and shows the test by it.
    await ingest('old-again.xml')
    expect(await ids()).toEqual([into])
    const show = await runCli(['show', from, '--db', db, '--json'], { cwd: dir })
    expect(show.exitCode, show.stderr).toBe(0)
    const shown = JSON.parse(show.stdout) as { test_id: string; names: string[]; history: { status: string }[] }
    expect(shown.test_id).toBe(into)
    expect(shown.names).toEqual([from])
    expect(shown.history.map((h) => h.status)).toEqual(['failed', 'passed', 'passed'])

    const split = await runCli(['tests', 'split', from, '--db', db, '--reason', 'two tests after all'], { cwd: dir })
    expect(split.exitCode, split.stderr).toBe(0)
    await ingest('old-after-split.xml')
    expect(await ids()).toEqual([from, into])
    const again = await runCli(['tests', 'split', from, '--db', db, '--reason', 'again'], { cwd: dir })
    expect(again.exitCode).not.toBe(0)

    const store = await openStore({ db })
    try {
      const audit = await store.listAuditLog({ kind: 'test' })
      expect(audit.map((e) => [e.action, e.subject, e.actor, e.reason])).toEqual([
        ['split', from, expect.any(String), 'two tests after all'],
        ['merge', from, 'ana', 'class renamed'],
      ])
    } finally {
      await store.close()
    }
  })
})
