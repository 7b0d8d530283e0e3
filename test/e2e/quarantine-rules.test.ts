import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')

const junit = (cases: string) => `<?xml version="1.0"?>\n<testsuite name="s">\n${cases}\n</testsuite>\n`
const pass = (name: string) => `<testcase classname="m" name="${name}" time="0.01"/>`
const fail = (name: string, msg = 'boom') =>
  `<testcase classname="m" name="${name}" time="0.02"><failure message="${msg}">${msg}</failure></testcase>`

const FUTURE = '2999-01-30T00:00:00.000Z'

describe('quarantine inputs are validated (issue 18)', { timeout: 180_000 }, () => {
  it('refuses an expiry in the past, a non-http issue link and an unknown test id, each with exit 2', async () => {
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('b')) })
    const db = join(dir, 'fw.db')
    expect((await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--suite', 'unit'])).exitCode).toBe(0)
    const add = (id: string, ...extra: string[]) =>
      runCli(['quarantine', 'add', id, '--db', db, '--reason', 'flaky', ...extra])

    const past = await add('unit::m::b', '--expires', '2020-01-01')
    expect(past.exitCode).toBe(2)
    expect(past.stderr).toMatch(/--expires: 2020-01-01T00:00:00.000Z is in the past/)
    const js = await add('unit::m::b', '--issue', 'javascript:alert(1)')
    expect(js.exitCode).toBe(2)
    expect(js.stderr).toMatch(/issue: only http\(s\) links are accepted/)
    const unknown = await add('audit')
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(/audit has never been seen in the store.*--allow-unknown/)
    expect(JSON.parse((await runCli(['quarantine', 'list', '--db', db, '--json'])).stdout).quarantined).toEqual([])

    expect((await add('unit::m::b', '--issue', 'https://example.test/1', '--expires', FUTURE)).exitCode).toBe(0)
    expect((await add('unit::m::future-test', '--allow-unknown')).exitCode).toBe(0)
    const rule = await runCli([
      ...['quarantine', 'rule', 'add', 'bad', '--db', db, '--reason', 'x', '--message', '(?!x)a'],
    ])
    expect(rule.exitCode).toBe(2)
    expect(rule.stderr).toMatch(/rule bad: message: not a pattern flakewatch can match in linear time .*\(\?!/)
  })

  it('refuses a quarantine file whose new entries expired, link elsewhere than http(s) or name unknown tests', async () => {
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('b')) })
    const db = join(dir, 'fw.db')
    await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--suite', 'unit'])
    const file = (entries: object[], rules: object[] = []) => {
      const f = join(dir, 'q.json')
      writeFileSync(f, JSON.stringify({ version: 1, quarantined: entries, rules }))
      return runCli(['quarantine', 'import', '--db', db, '--file', f, '--actor', 'reviewer'])
    }
    const expired = await file([{ test_id: 'unit::m::b', reason: 'x', expires_at: '2020-01-01T00:00:00Z' }])
    expect(expired.exitCode).toBe(2)
    expect(expired.stderr).toMatch(/q\.json: unit::m::b: expires_at: .* is in the past/)
    const js = await file([{ test_id: 'unit::m::b', reason: 'x', issue: 'javascript:alert(1)' }])
    expect(js.exitCode).toBe(2)
    expect(js.stderr).toMatch(/q\.json: unit::m::b: issue: only http\(s\) links/)
    const unknown = await file([{ test_id: 'audit', reason: 'x' }])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(/audit has never been seen in the store/)
    // Nothing of a refused file was applied; a rule needs no known test.
    const ok = await file(
      [{ test_id: 'unit::m::b', reason: 'x' }],
      [{ id: 'legacy', match: { file: 'legacy/**' }, reason: 'being rewritten', expires_at: FUTURE }],
    )
    expect(ok.exitCode, ok.stderr).toBe(0)
    const list = JSON.parse((await runCli(['quarantine', 'list', '--db', db, '--json'])).stdout)
    expect(list.quarantined.map((q: { test_id: string }) => q.test_id)).toEqual(['unit::m::b'])
    expect(list.rules.map((r: { id: string }) => r.id)).toEqual(['legacy'])
  })
})

describe('the gate with rules, suites and empty reports (issue 18)', { timeout: 180_000 }, () => {
  it('fails an empty report with exit 2 unless --allow-empty', async () => {
    const dir = testdir({ 'empty.xml': junit(''), 'q.json': '{"version":1,"quarantined":[]}' })
    const args = ['gate', join(dir, 'empty.xml'), '--quarantine-file', join(dir, 'q.json')]
    const empty = await runCli(args)
    expect(empty.exitCode).toBe(2)
    expect(empty.stderr).toMatch(/empty\.xml: the report holds no test \(0 tests\).*--allow-empty/)
    expect((await runCli([...args, '--allow-empty'])).exitCode).toBe(0)
  })

  it('says plainly when the ids differ from the quarantines only by suite, and names the flag', async () => {
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('q')) })
    const db = join(dir, 'fw.db')
    await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--suite', 'unit'])
    await runCli(['quarantine', 'add', 'unit::m::q', '--db', db, '--reason', 'flaky'])
    const gated = await runCli(['gate', join(dir, 'r.xml'), '--db', db])
    expect(gated.exitCode).toBe(1)
    expect(gated.stderr).toMatch(/hint: this report's tests are in suite "default", but the store knows only "unit"/)
    expect(gated.stderr).toMatch(/hint: default::m::q is not quarantined, but unit::m::q is .*--suite <name>/)
    const json = JSON.parse((await runCli(['gate', join(dir, 'r.xml'), '--db', db, '--json'])).stdout)
    expect(json.hints).toHaveLength(2)
    expect((await runCli(['gate', join(dir, 'r.xml'), '--db', db, '--suite', 'unit'])).exitCode).toBe(0)
  })

  it('forgives by rule from the store and from the file, naming the rule in the output and the step summary', async () => {
    const timeout = 'Timeout 30000ms exceeded'
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('slow', timeout)), 'other.xml': junit(fail('b')) })
    const db = join(dir, 'fw.db')
    const add = await runCli([
      ...['quarantine', 'rule', 'add', 'timeouts-arm64', '--db', db, '--message', 'Timeout \\d+ms exceeded'],
      ...['--env', 'runner=arm64', '--reason', 'arm64 runners are slow', '--owner', 'team-infra', '--expires', FUTURE],
    ])
    expect(add.exitCode, add.stderr).toBe(0)
    const summary = join(dir, 'summary.md')
    const gate = (file: string, ...extra: string[]) =>
      runCli(['gate', join(dir, file), '--db', db, '--suite', 'unit', ...extra], {
        env: { GITHUB_STEP_SUMMARY: summary },
      })
    expect((await gate('r.xml', '--env', 'runner=amd64')).exitCode).toBe(1)
    const onArm = await gate('r.xml', '--env', 'runner=arm64', '--junit-out', join(dir, 'gated.xml'))
    expect(onArm.exitCode, onArm.stderr).toBe(0)
    expect(onArm.stdout).toMatch(
      /unit::m::slow\n\s+rule timeouts-arm64: reason: arm64 runners are slow; owner: team-infra/,
    )
    expect(readFileSync(summary, 'utf8')).toMatch(/unit::m::slow \| timeouts-arm64 \| arm64 runners are slow/)
    expect(readFileSync(join(dir, 'gated.xml'), 'utf8')).toMatch(/quarantined by rule timeouts-arm64/)
    // Another message on the same runner is not forgiven.
    expect((await gate('other.xml', '--env', 'runner=arm64')).exitCode).toBe(1)

    // The reviewable file carries the rule, and the gate applies it without a database.
    expect((await runCli(['quarantine', 'export', '--db', db, '--file', join(dir, 'q.json')])).exitCode).toBe(0)
    const exported = JSON.parse(readFileSync(join(dir, 'q.json'), 'utf8'))
    expect(exported.rules).toMatchObject([{ id: 'timeouts-arm64', match: { env: { runner: 'arm64' } } }])
    const fromFile = await runCli([
      ...['gate', join(dir, 'r.xml'), '--suite', 'unit', '--env', 'runner=arm64', '--json'],
      ...['--quarantine-file', join(dir, 'q.json')],
    ])
    expect(fromFile.exitCode).toBe(0)
    expect(JSON.parse(fromFile.stdout).quarantined).toMatchObject([
      { test_id: 'unit::m::slow', rule: 'timeouts-arm64' },
    ])
  })

  it('lists rules beside single tests with the tests each covered lately', async () => {
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('slow', 'Timeout 30000ms exceeded') + fail('b')) })
    const db = join(dir, 'fw.db')
    await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--suite', 'unit', '--env', 'runner=arm64'])
    await runCli(['quarantine', 'add', 'unit::m::b', '--db', db, '--reason', 'flaky'])
    await runCli([
      ...['quarantine', 'rule', 'add', 'timeouts-arm64', '--db', db, '--message', 'Timeout \\d+ms exceeded'],
      ...['--env', 'runner=arm64', '--reason', 'slow runners'],
    ])
    const list = await runCli(['quarantine', 'list', '--db', db])
    expect(list.exitCode).toBe(0)
    expect(list.stdout).toMatch(/unit::m::b/)
    expect(list.stdout).toMatch(
      /timeouts-arm64 .*message \/Timeout \\d\+ms exceeded\/, runner=arm64.*1 test\(s\), 1 failure\(s\): unit::m::slow/,
    )
    const json = JSON.parse((await runCli(['quarantine', 'list', '--db', db, '--json'])).stdout)
    expect(json.rules[0].covered).toEqual({ days: 14, tests: 1, failures: 1, test_ids: ['unit::m::slow'] })
  })
})

describe('hostile rules cannot hang the gate or forgive everything (issue 33)', { timeout: 300_000 }, () => {
  // A message at the length cap that a backtracking engine needs 2^4096 steps to reject for these patterns (61
  // characters took it more than 40 s). Each command below would never finish with one.
  const hostile = `${'1'.repeat(4095)}!`

  it('gate and quarantine list finish on (\\w|\\d)+$ and (a|a)*$, from the store and from the file', async () => {
    const dir = testdir({ 'r.xml': junit(pass('a') + fail('slow', hostile)) })
    const db = join(dir, 'fw.db')
    expect((await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--suite', 'unit'])).exitCode).toBe(0)
    const add = (id: string, pattern: string, ...extra: string[]) =>
      runCli(['quarantine', 'rule', 'add', id, '--db', db, '--reason', 'x', '--message', pattern, ...extra])
    expect((await add('overlap', '(\\w|\\d)+$')).exitCode).toBe(0)
    // (a|a)*$ matches the empty string at the end of any message: it is broad, and needs saying so.
    const broad = await add('empty-end', '(a|a)*$')
    expect(broad.exitCode).toBe(2)
    expect(broad.stderr).toMatch(/rule empty-end: match: matches every failure: message "\(a\|a\)\*\$".*--allow-broad/)
    expect((await add('empty-end', '(a|a)*x$', '--allow-broad')).exitCode).toBe(0)
    const gate = await runCli(['gate', join(dir, 'r.xml'), '--db', db, '--suite', 'unit', '--json'])
    expect(gate.exitCode, gate.stderr).toBe(1)
    expect(JSON.parse(gate.stdout)).toMatchObject({ blocking: [{ test_id: 'unit::m::slow' }], rules: [] })
    const list = await runCli(['quarantine', 'list', '--db', db, '--json'])
    expect(list.exitCode, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout).rules.map((r: { id: string }) => r.id)).toEqual(['empty-end', 'overlap'])

    // The same patterns from a reviewable file, applied without a database.
    const file = join(dir, 'q.json')
    const rules = [
      { id: 'overlap', match: { message: '(\\w|\\d)+$' }, reason: 'x' },
      { id: 'catch-digits', match: { message: '(\\d|\\d\\d)+!' }, reason: 'x' },
    ]
    writeFileSync(file, JSON.stringify({ version: 1, quarantined: [], rules }))
    const fromFile = await runCli(['gate', join(dir, 'r.xml'), '--suite', 'unit', '--quarantine-file', file])
    expect(fromFile.exitCode, fromFile.stderr).toBe(0)
    expect(fromFile.stdout).toMatch(/rule catch-digits:/)
    expect(fromFile.stdout).toMatch(/Failures each rule forgave:\n {2}catch-digits: 1/)
  })

  it('refuses a rule that forgives everything on the CLI and in the file, and lets the gate say what each rule forgave', async () => {
    const dir = testdir({ 'r.xml': junit(fail('a') + fail('b') + fail('c', 'Timeout 1ms')) })
    const db = join(dir, 'fw.db')
    const add = (...args: string[]) =>
      runCli(['quarantine', 'rule', 'add', 'all', '--db', db, '--reason', 'x', ...args])
    for (const args of [
      ['--test-id', '**'],
      ['--test-id', '{**,x}'],
      ['--branch', 'main'],
      ['--title', '.*'],
    ]) {
      const r = await add(...args)
      expect(r.exitCode, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/rule all: .*(matches every failure|needs test_id).*--allow-broad/)
    }
    const file = join(dir, 'q.json')
    writeFileSync(
      file,
      JSON.stringify({ version: 1, quarantined: [], rules: [{ id: 'all', match: { test_id: '**' }, reason: 'x' }] }),
    )
    const gate = await runCli(['gate', join(dir, 'r.xml'), '--suite', 'unit', '--quarantine-file', file])
    expect(gate.exitCode).toBe(2)
    expect(gate.stderr).toMatch(/q\.json.*rules\.0\.match.*matches every failure: test_id "\*\*"/)
    const imported = await runCli(['quarantine', 'import', '--db', db, '--file', file])
    expect(imported.exitCode).toBe(2)

    // Asked for, a broad rule is kept, marked as such, and the gate counts what it forgave.
    expect((await add('--test-id', '**', '--branch', 'main', '--allow-broad')).exitCode).toBe(0)
    expect(
      (await runCli(['quarantine', 'rule', 'add', 'slow', '--db', db, '--reason', 'x', '--message', 'Timeout']))
        .exitCode,
    ).toBe(0)
    const g = await runCli(['gate', join(dir, 'r.xml'), '--db', db, '--suite', 'unit', '--branch', 'main'])
    expect(g.exitCode, g.stderr).toBe(0)
    expect(g.stdout).toMatch(/Failures each rule forgave:\n {2}all: 3/)
    const exported = join(dir, 'out.json')
    await runCli(['quarantine', 'export', '--db', db, '--file', exported])
    expect(JSON.parse(readFileSync(exported, 'utf8')).rules[0].match).toEqual({
      test_id: '**',
      branch: 'main',
      allow_broad: true,
    })
  })
})

describe('flakewatch run applies rules (real Vitest run)', { timeout: 180_000 }, () => {
  it('passes a run whose only failure a rule forgives, on the runners the rule names', async () => {
    const dir = testdir({
      'vitest.config.mjs': "export default { test: { include: ['*.test.mjs'] } }\n",
      'a.test.mjs': "import { test, expect } from 'vitest'\ntest('adds', () => expect(1 + 1).toBe(2))\n",
      'slow.test.mjs':
        "import { test } from 'vitest'\ntest('loads', () => { throw new Error('Timeout 30000ms exceeded') })\n",
    })
    const db = join(dir, 'fw.db')
    await runCli([
      ...['quarantine', 'rule', 'add', 'timeouts-arm64', '--db', db, '--message', 'Timeout \\d+ms exceeded'],
      ...['--env', 'runner=arm64', '--reason', 'slow runners'],
    ])
    const cmd = ['--', process.execPath, VITEST, 'run', '--reporter=junit', '--outputFile=reports/junit.xml']
    const run = (runner: string) =>
      runCli(['run', '--db', db, '--suite', 'unit', '--env', `runner=${runner}`, '--report', 'reports/*.xml', ...cmd], {
        cwd: dir,
      })
    const amd = await run('amd64')
    expect(amd.exitCode, amd.stdout + amd.stderr).toBe(1)
    const arm = await run('arm64')
    expect(arm.exitCode, arm.stdout + arm.stderr).toBe(0)
    expect(arm.stdout).toMatch(/slow\.test\.mjs::loads\n\s+rule timeouts-arm64: reason: slow runners/)
    expect(arm.stderr).toMatch(/every failure is quarantined; passing/)
  })
})
