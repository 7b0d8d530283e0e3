import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

/** Two failures no single quarantine covers: one a message rule forgives, one a branch-scoped rule. */
const junit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="unit" tests="3">
  <testcase classname="mod" name="talks to the api" time="0.1"><failure message="socket hang up">at a</failure></testcase>
  <testcase classname="mod" name="legacy export" time="0.1"><failure message="expected 1 to be 2">at b</failure></testcase>
  <testcase classname="mod" name="fine" time="0.1"/>
</testsuite></testsuites>
`

interface Out {
  failures: { kind: string; test_id: string; quarantined: boolean; rule: string | null }[]
}

describe('flakewatch comment respects quarantine rules, as the gate does', () => {
  let dir: string
  const db = () => join(dir, 'fw.db')

  beforeAll(async () => {
    dir = testdir({ 'junit.xml': junit }, 'comment-rules-')
    const store = await openStore({ db: db() })
    try {
      // Known tests that always passed before: without the rules, both failures are new.
      for (let i = 0; i < 3; i++) {
        const run = runMeta(`r${i}`, new Date(Date.UTC(2026, 0, 1 + i)).toISOString())
        await store.ingestReport(batch(run, [result('talks to the api', 'passed'), result('legacy export', 'passed')]))
      }
    } finally {
      await store.close()
    }
    const rule = (args: string[]) => runCli(['quarantine', 'rule', 'add', ...args, '--db', db()], { cwd: dir })
    expect((await rule(['socket-flakes', '--message', 'socket hang up', '--reason', 'flaky network'])).exitCode).toBe(0)
    expect(
      (await rule(['release-legacy', '--title', '^legacy', '--branch', 'release/*', '--reason', 'legacy on release']))
        .exitCode,
    ).toBe(0)
  })
  afterAll(() => cleanup(dir))

  const comment = async (extra: string[]): Promise<Out> => {
    const r = await runCli(['comment', 'junit.xml', '--suite', 'unit', '--dry-run', '--json', ...extra], { cwd: dir })
    expect(r.exitCode, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as Out
  }
  const byId = (out: Out) => Object.fromEntries(out.failures.map((f) => [f.test_id, f]))

  it('calls a failure a rule forgives known flaky and names the rule; a rule for another branch forgives nothing', async () => {
    const main = byId(await comment(['--db', db(), '--branch', 'main']))
    expect(main['unit::mod::talks to the api']).toMatchObject({
      kind: 'known_flaky',
      quarantined: true,
      rule: 'socket-flakes',
    })
    expect(main['unit::mod::legacy export']).toMatchObject({ kind: 'new_failure', quarantined: false, rule: null })

    const release = byId(await comment(['--db', db(), '--branch', 'release/2.0']))
    expect(release['unit::mod::legacy export']).toMatchObject({
      kind: 'known_flaky',
      quarantined: true,
      rule: 'release-legacy',
    })
  })

  it('says which rule in the comment body, and agrees with the gate', async () => {
    const r = await runCli(['comment', 'junit.xml', '--suite', 'unit', '--db', db(), '--branch', 'main', '--dry-run'], {
      cwd: dir,
    })
    expect(r.stdout).toMatch(/quarantined by rule socket\\?-flakes: flaky network/)
    const gate = await runCli(['gate', 'junit.xml', '--suite', 'unit', '--db', db(), '--branch', 'main', '--json'], {
      cwd: dir,
    })
    const verdict = JSON.parse(gate.stdout) as { blocking: { test_id: string }[]; quarantined: { test_id: string }[] }
    expect(verdict.quarantined.map((q) => q.test_id)).toEqual(['unit::mod::talks to the api'])
    expect(verdict.blocking.map((q) => q.test_id)).toEqual(['unit::mod::legacy export'])
  })

  it('reads the rules from a quarantine file too', async () => {
    const file = join(dir, 'quarantine.json')
    expect((await runCli(['quarantine', 'export', '--db', db(), '-o', file], { cwd: dir })).exitCode).toBe(0)
    const out = byId(await comment(['--quarantine-file', file, '--branch', 'main']))
    expect(out['unit::mod::talks to the api']).toMatchObject({ kind: 'known_flaky', rule: 'socket-flakes' })
  })
})
