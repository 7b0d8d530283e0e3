import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')

const junit = (cases: string) => `<?xml version="1.0"?>\n<testsuite name="s">\n${cases}\n</testsuite>\n`
const pass = (name: string) => `<testcase classname="m" name="${name}" time="0.01"/>`
const fail = (name: string, msg = 'boom') =>
  `<testcase classname="m" name="${name}" time="0.02"><failure message="${msg}">${msg}</failure></testcase>`

describe('flakewatch gate', () => {
  const quarantineFile = JSON.stringify({
    version: 1,
    quarantined: [
      { test_id: 'unit::m::q', reason: 'flaky on slow runners', owner: 'team-a', expires_at: '2999-01-01T00:00:00Z' },
    ],
  })

  it('exits 0 when every failure is quarantined, 1 otherwise, 2 on bad input', async () => {
    const dir = testdir({
      'q.json': quarantineFile,
      'only-quarantined.xml': junit(pass('a') + fail('q')),
      'blocking.xml': junit(pass('a') + fail('q') + fail('b')),
      'bad.xml': junit('<testcase name="x">'),
    })
    const args = (f: string) => ['gate', join(dir, f), '--suite', 'unit', '--quarantine-file', join(dir, 'q.json')]
    const ok = await runCli([...args('only-quarantined.xml'), '--json'])
    expect(ok.exitCode, ok.stderr).toBe(0)
    const okJson = JSON.parse(ok.stdout)
    expect(okJson.verdict).toBe('pass')
    expect(okJson.quarantined).toMatchObject([
      { test_id: 'unit::m::q', reason: 'flaky on slow runners', owner: 'team-a' },
    ])
    const blocked = await runCli(args('blocking.xml'))
    expect(blocked.exitCode).toBe(1)
    expect(blocked.stdout).toMatch(/Blocking failures \(1\):\n {2}unit::m::b/)
    expect(blocked.stdout).toMatch(
      /Quarantined failures, not blocking \(1\):[\s\S]*reason: flaky on slow runners; owner: team-a/,
    )
    expect((await runCli(args('bad.xml'))).exitCode).toBe(2)
    expect((await runCli(args('nope.xml'))).exitCode).toBe(2)
    writeFileSync(join(dir, 'broken-q.json'), '{"version":1,"quarantined":[{"test_id":"x"}]}')
    const badQ = await runCli(['gate', join(dir, 'blocking.xml'), '--quarantine-file', join(dir, 'broken-q.json')])
    expect(badQ.exitCode).toBe(2)
    expect(badQ.stderr).toMatch(/broken-q\.json/)
  })

  it('writes a gated JUnit copy and a GitHub step summary', async () => {
    const dir = testdir({ 'q.json': quarantineFile, 'r.xml': junit(pass('a') + fail('q', 'x &lt; y &amp; z')) })
    const summary = join(dir, 'summary.md')
    const res = await runCli(
      [
        'gate',
        join(dir, 'r.xml'),
        '--suite',
        'unit',
        '--quarantine-file',
        join(dir, 'q.json'),
        '--junit-out',
        join(dir, 'gated.xml'),
      ],
      { env: { GITHUB_STEP_SUMMARY: summary } },
    )
    expect(res.exitCode).toBe(0)
    const gated = readFileSync(join(dir, 'gated.xml'), 'utf8')
    // The failure's message and body stay, under the quarantine's reason.
    expect(gated).toMatch(
      /<testcase classname="m" name="q"[^>]*>\s*<skipped message="quarantined: flaky on slow runners \(owner: team-a\); failure: x &lt; y &amp; z">x &lt; y &amp; z<\/skipped>/,
    )
    expect(gated).toMatch(/<testcase classname="m" name="a" time="0.01"\/>/)
    expect(gated).not.toMatch(/<failure/)
    expect(readFileSync(summary, 'utf8')).toMatch(
      /flakewatch gate: ✅ pass[\s\S]*unit::m::q \|\s*\| flaky on slow runners/,
    )
  })

  it('passes a pass-on-retry unless --fail-on-flaky', async () => {
    const flaky = `<testcase classname="m" name="f" time="0.1"><flakyFailure message="timeout" type="T">t</flakyFailure></testcase>`
    const dir = testdir({ 'r.xml': junit(flaky), 'q.json': '{"version":1,"quarantined":[]}' })
    const base = ['gate', join(dir, 'r.xml'), '--quarantine-file', join(dir, 'q.json')]
    const res = await runCli([...base, '--json'])
    expect(res.exitCode).toBe(0)
    expect(JSON.parse(res.stdout).flaky).toHaveLength(1)
    expect((await runCli([...base, '--fail-on-flaky'])).exitCode).toBe(1)
  })
})

// Each case starts real Vitest runs, several on a loaded machine; the default 30 s is too short there.
describe('flakewatch run with a real test runner (vitest from npm)', { timeout: 180_000 }, () => {
  const project = {
    'vitest.config.mjs': "export default { test: { include: ['*.test.mjs'] } }\n",
    'a.test.mjs': "import { test, expect } from 'vitest'\ntest('adds', () => expect(1 + 1).toBe(2))\n",
    'b.test.mjs':
      "import { test, expect } from 'vitest'\ntest('flaky thing', () => expect(process.env.MAKE_IT_PASS).toBe('1'))\n",
  }
  const testCmd = [
    '--',
    process.execPath,
    VITEST,
    'run',
    '--config',
    'vitest.config.mjs',
    '--reporter=junit',
    '--outputFile=reports/junit.xml',
  ]

  it('fails on a failure, passes once that failure is quarantined, and stores every run', async () => {
    const dir = testdir(project)
    const db = join(dir, 'fw.db')
    const first = await runCli(
      ['run', '--db', db, '--suite', 'unit', '--report', 'reports/*.xml', '--json', ...testCmd],
      { cwd: dir },
    )
    expect(first.exitCode, first.stderr).toBe(1)
    const verdict = JSON.parse(first.stdout)
    expect(verdict.verdict).toBe('fail')
    expect(verdict.blocking).toHaveLength(1)
    const testId: string = verdict.blocking[0].test_id
    expect(testId).toMatch(/^unit::.*b\.test\.mjs::.*flaky thing$/)

    const add = await runCli(
      ['quarantine', 'add', testId, '--db', db, '--reason', 'depends on env', '--owner', 'me', '--actor', 'tester'],
      { cwd: dir },
    )
    expect(add.exitCode, add.stderr).toBe(0)
    const second = await runCli(['run', '--db', db, '--suite', 'unit', '--report', 'reports/*.xml', ...testCmd], {
      cwd: dir,
    })
    expect(second.exitCode, second.stdout + second.stderr).toBe(0)
    expect(second.stdout).toMatch(/Quarantined failures, not blocking \(1\)/)
    const shown = JSON.parse((await runCli(['show', testId, '--db', db, '--json'], { cwd: dir })).stdout)
    expect(shown.history.map((h: { status: string }) => h.status)).toEqual(['failed', 'failed'])
    expect(shown.quarantine).toMatchObject({
      reason: 'depends on env',
      owner: 'me',
      created_by: 'tester',
      source: 'manual',
    })
  })

  it('never passes silently: no report, or a failure the reports do not show, keeps the command’s exit code', async () => {
    const dir = testdir({ 'pass.xml': junit(pass('a')) })
    const crash = await runCli(
      ['run', '--db', join(dir, 'fw.db'), '--report', 'reports/*.xml', '--', process.execPath, '-e', 'process.exit(3)'],
      { cwd: dir },
    )
    expect(crash.exitCode).toBe(3)
    expect(crash.stderr).toMatch(/wrote no report/)
    // A passing command whose report the pattern misses (a typo) would turn recording off: exit 2, unless allowed.
    const typo = ['run', '--db', join(dir, 'fw.db'), '--report', 'reports/none-*.xml']
    const missed = await runCli([...typo, '--json', '--', process.execPath, '-e', ''], { cwd: dir })
    expect(missed.exitCode).toBe(2)
    expect(missed.stderr).toMatch(/wrote no report matching "reports\/none-\*\.xml", so nothing was recorded/)
    expect(JSON.parse(missed.stdout)).toMatchObject({ error: { code: 'FW_INPUT' } })
    const allowed = await runCli([...typo, '--allow-no-report', '--', process.execPath, '-e', ''], { cwd: dir })
    expect(allowed.exitCode).toBe(0)
    expect(allowed.stderr).toMatch(/nothing was recorded \(--allow-no-report\)/)
    expect(existsSync(join(dir, 'fw.db'))).toBe(false)
    mkdirSync(join(dir, 'reports'))
    const script = "require('fs').copyFileSync('pass.xml', 'reports/junit.xml'); process.exit(4)"
    const hidden = await runCli(
      ['run', '--db', join(dir, 'fw.db'), '--report', 'reports/*.xml', '--', process.execPath, '-e', script],
      { cwd: dir },
    )
    expect(hidden.exitCode).toBe(4)
    expect(hidden.stderr).toMatch(/reports show no failing test/)
  })
})

describe('auto-quarantine and auto-release over many runs', () => {
  it('quarantines a flaky test, never a broken one, and releases it once fixed', { timeout: 90_000 }, async () => {
    const dir = testdir()
    const db = join(dir, 'fw.db')
    const now = Date.now()
    const reportFor = (i: number, cases: string, revision: string) => {
      const at = new Date(now - (110 - i) * 3_600_000).toISOString()
      const props = `<properties><property name="ci.revision" value="${revision}"/><property name="ci.branch" value="main"/></properties>`
      writeFileSync(
        join(dir, `run-${String(i).padStart(2, '0')}.xml`),
        `<?xml version="1.0"?><testsuite name="s" timestamp="${at}">${props}${cases}</testsuite>`,
      )
    }
    // Runs 0-51: "flaky" fails on every third run, on revisions that also saw it pass; "broken" breaks at run 14.
    for (let i = 0; i < 52; i++) {
      const flaky = i % 3 === 0 ? fail('flaky', `timeout after ${1000 + i}ms`) : pass('flaky')
      const broken = i >= 14 ? fail('broken', 'expected 2 got 3') : pass('broken')
      reportFor(i, pass('steady') + flaky + broken, `rev${Math.floor(i / 2)}`)
    }
    const ingested = await runCli(['ingest', dir, '--db', db, '--suite', 'unit', '--json'])
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    expect(JSON.parse(ingested.stdout).ingested).toHaveLength(52)
    const auto = await runCli(['quarantine', 'auto', '--db', db, '--json'])
    expect(auto.exitCode, auto.stderr).toBe(0)
    const decided = JSON.parse(auto.stdout)
    expect(decided.quarantined.map((q: { test_id: string }) => q.test_id)).toEqual(['unit::m::flaky'])
    expect(decided.quarantined[0]).toMatchObject({ source: 'auto', created_by: 'flakewatch' })
    const analyzed = JSON.parse((await runCli(['analyze', '--db', db, '--json'])).stdout)
    const byId = Object.fromEntries(analyzed.map((a: { test_id: string }) => [a.test_id, a]))
    expect(byId['unit::m::broken'].verdict).toBe('broken')
    expect(byId['unit::m::flaky'].verdict).toBe('flaky')
    expect(byId['unit::m::steady'].verdict).toBe('healthy')

    // Runs 52-102: fixed. The quarantine ends by itself once the clean stretch has earned the fix: its 18 failures,
    // at most 2 passes apart, are one burst in the burst scan, so the stretch is judged at the rate bursts begin
    // (1 in 1 run outside it, ≥ 10% at 90%): 2 · 0.9^j ≤ 0.01 asks for 51 clean runs. The failures span 52 runs,
    // more than that, so no longer wait for one short episode (20 flaky runs would have asked for 201 clean ones).
    // (It used to end after 10 passes in a row, which a test still failing a third of the time has 2% of the time.)
    for (let i = 52; i < 103; i++)
      reportFor(i, pass('steady') + pass('flaky') + fail('broken', 'expected 2 got 3'), `rev${i}`)
    const more = JSON.parse((await runCli(['ingest', dir, '--db', db, '--suite', 'unit', '--json'])).stdout)
    expect([more.ingested.length, more.duplicates.length]).toEqual([51, 52])
    const release = JSON.parse((await runCli(['quarantine', 'auto', '--db', db, '--json'])).stdout)
    expect(release.unquarantined.map((q: { test_id: string }) => q.test_id)).toEqual(['unit::m::flaky'])
    expect(release.unquarantined[0].reason).toMatch(/^fixed: no failures in the last 51 runs/)
    expect(release.quarantined).toEqual([])
    const list = JSON.parse((await runCli(['quarantine', 'list', '--db', db, '--json'])).stdout)
    expect(list).toEqual({ quarantined: [], rules: [] })
    const shown = JSON.parse((await runCli(['show', 'unit::m::flaky', '--db', db, '--json'])).stdout)
    expect(shown.audit.map((a: { action: string; actor: string }) => [a.action, a.actor])).toEqual([
      ['release', 'flakewatch'],
      ['quarantine', 'flakewatch'],
    ])
  })
})
