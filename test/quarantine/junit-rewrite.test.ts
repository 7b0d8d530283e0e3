import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { validateXML } from 'xmllint-wasm'
import { parseReport, sourceFromFile, type ParsedCase } from '../../src/ingest/index.js'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

/** Public JUnit schemas, vendored with their sources (test/fixtures/junit-xsd/SOURCES.md). */
const XSD = {
  junit: join(ROOT, 'test/fixtures/junit-xsd/junit-10.xsd'),
  surefire: join(ROOT, 'test/fixtures/junit-xsd/surefire-test-report-3.0.xsd'),
}

/** libxml2's schema errors for a document, without line numbers (a copy may wrap attributes differently). */
async function schemaErrors(file: string, xsd: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'report.xml', contents: readFileSync(file, 'utf8') }],
    schema: [{ fileName: 'schema.xsd', contents: readFileSync(xsd, 'utf8') }],
  })
  return result.errors.map((e) => e.rawMessage.replace(/^report\.xml:\d+: /, '')).sort()
}

async function cases(file: string): Promise<Map<string, ParsedCase>> {
  const parsed = await parseReport(sourceFromFile(file))
  return new Map(parsed.cases.map((c) => [`${c.module}::${c.name}`, c]))
}

/** Gates `report` with `ids` quarantined and returns the gated copy's path. */
async function gateWith(reports: string[], ids: string[], dir: string, exitCode = 0): Promise<{ out: string }> {
  const q = { version: 1, quarantined: ids.map((test_id) => ({ test_id, reason: 'known flake', owner: 'team-a' })) }
  writeFileSync(join(dir, 'q.json'), JSON.stringify(q))
  const out = join(dir, 'gated.xml')
  const args = ['gate', ...reports, '--suite', 'unit', '--quarantine-file', join(dir, 'q.json'), '--junit-out', out]
  const res = await runCli([...args, '--json'])
  expect(res.exitCode, res.stderr).toBe(exitCode)
  return { out }
}

/** What a JUnit reader sees of every case, but the ones quarantined must be identical in the copy. */
async function expectOnlyQuarantinedChanged(input: string, output: string, quarantined: string[]) {
  const before = await cases(input)
  const after = await cases(output)
  expect([...after.keys()]).toEqual([...before.keys()])
  for (const [key, c] of before) {
    const copy = after.get(key)!
    if (quarantined.some((id) => id === `unit::${key}`)) {
      expect(c.status).toMatch(/failed|error/)
      expect(copy.status).toBe('skipped')
      expect(copy.message).toMatch(/^quarantined: known flake \(owner: team-a\)/)
    } else expect(copy).toEqual(c)
  }
}

describe('gate --junit-out copies JUnit reports with only the quarantined failures changed', () => {
  it('jest-junit: keeps every other case, the failure body and the counts, and stays valid JUnit', async () => {
    const input = join(PUBLIC_FIXTURES, 'jest-junit/jest-junit-nested-describe.xml')
    expect(await schemaErrors(input, XSD.junit)).toEqual([])
    const id = 'unit::__tests__\\main.test.js::Test 1 › Test 1.1 › Failing test'
    const dir = testdir({}, 'junit-out-')
    const { out } = await gateWith([input], [id, ...(await otherFailures(input, id))], dir)
    expect(await schemaErrors(out, XSD.junit)).toEqual([])
    const gated = readFileSync(out, 'utf8')
    // The body of the failure (its stack) is kept inside <skipped>, under the quarantine's message.
    const original = readFileSync(input, 'utf8')
    const stackLine = /at Object\.&lt;anonymous&gt; \([^)]*\)/.exec(original)![0]
    expect(gated).toContain(stackLine)
    expect(gated).not.toMatch(/<failure|<error/)
    // Every count: no failure left, the quarantined ones counted as skipped.
    const suites = [...gated.matchAll(/<testsuite [^>]*>/g)].map((m) => m[0])
    expect(suites.every((s) => /failures="0"/.test(s) && /errors="0"/.test(s))).toBe(true)
  })

  it('Playwright: keeps system-out with its [[ATTACHMENT|…]] lines, adds no schema error', async () => {
    const input = join(PUBLIC_FIXTURES, 'playwright-junit/playwright-report.xml')
    const id =
      'unit::tests/grid.spec.ts::Grid › Data Entry › should open select dropdown options when pressing Spacebar in grid cell'
    const dir = testdir({}, 'junit-out-')
    // Three other failures are not quarantined: the job fails, and the copy still shows only this one skipped.
    const { out } = await gateWith([input], [id], dir, 1)
    // Playwright's own report is not valid against the Jenkins schema (an `id` on <testsuites>); the copy adds
    // nothing to what is wrong with it.
    expect(await schemaErrors(out, XSD.junit)).toEqual(await schemaErrors(input, XSD.junit))
    await expectOnlyQuarantinedChanged(input, out, [id])
    const attachments = (file: string) => readFileSync(file, 'utf8').match(/\[\[ATTACHMENT\|[^\]]+\]\]/g)
    expect(attachments(out)).toEqual(attachments(input))
    expect(attachments(out)!.length).toBeGreaterThan(0)
    const root = (file: string) => /<testsuites [^>]*>/.exec(readFileSync(file, 'utf8'))![0]
    expect(root(out)).toMatch(/failures="3"/)
    expect(root(input)).toMatch(/failures="4"/)
  })

  it('Surefire: keeps rerunFailure and flakyFailure, and puts <skipped> where Surefire’s schema wants it', async () => {
    const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="io.acme.CartTest" time="1.5" tests="3" errors="0" skipped="0" failures="2">
  <properties><property name="java.version" value="17"/></properties>
  <testcase name="adds" classname="io.acme.CartTest" time="0.1"/>
  <testcase name="pays" classname="io.acme.CartTest" time="0.6">
    <failure message="gateway timeout" type="java.net.SocketTimeoutException">java.net.SocketTimeoutException: gateway timeout
	at io.acme.CartTest.pays(CartTest.java:42)</failure>
    <rerunFailure message="gateway timeout" type="java.net.SocketTimeoutException">
      <stackTrace>java.net.SocketTimeoutException: gateway timeout</stackTrace>
      <system-out>[[ATTACHMENT|target/screenshots/pays-rerun1.png]]</system-out>
    </rerunFailure>
    <system-out>[[ATTACHMENT|target/screenshots/pays.png]]</system-out>
  </testcase>
  <testcase name="totals" classname="io.acme.CartTest" time="0.3">
    <failure message="expected 81" type="org.opentest4j.AssertionFailedError">expected 81 but was 90</failure>
  </testcase>
  <testcase name="retries" classname="io.acme.CartTest" time="0.5">
    <flakyFailure message="once" type="java.lang.AssertionError"><stackTrace>once</stackTrace></flakyFailure>
  </testcase>
</testsuite>
`
    const dir = testdir({ 'TEST-io.acme.CartTest.xml': report }, 'junit-out-')
    const input = join(dir, 'TEST-io.acme.CartTest.xml')
    expect(await schemaErrors(input, XSD.surefire)).toEqual([])
    const q = ['unit::io.acme.CartTest::pays']
    writeFileSync(
      join(dir, 'q.json'),
      JSON.stringify({ version: 1, quarantined: [{ test_id: q[0], reason: 'known flake' }] }),
    )
    const out = join(dir, 'gated.xml')
    const res = await runCli([
      'gate',
      input,
      '--suite',
      'unit',
      '--quarantine-file',
      join(dir, 'q.json'),
      '--junit-out',
      out,
    ])
    expect(res.exitCode).toBe(1) // `totals` still fails
    expect(await schemaErrors(out, XSD.surefire)).toEqual([])
    const gated = readFileSync(out, 'utf8')
    expect(gated).toMatch(/<testsuite [^>]*skipped="1" failures="1"/)
    expect(gated).toMatch(
      /<rerunFailure[\s\S]*pays-rerun1\.png[\s\S]*<\/rerunFailure>\s*<skipped message="quarantined: known flake; failure: gateway timeout">java\.net\.SocketTimeoutException: gateway timeout\n\tat io\.acme\.CartTest\.pays\(CartTest\.java:42\)<\/skipped>\s*<system-out>\[\[ATTACHMENT\|target\/screenshots\/pays\.png\]\]<\/system-out>/,
    )
    expect(gated).toMatch(/<flakyFailure message="once"/)
    expect(gated).toMatch(/<properties><property name="java.version" value="17"\/><\/properties>/)
  })

  it('Surefire report invalid as written (rerun elements out of order): the copy adds no schema error', async () => {
    const input = join(PUBLIC_FIXTURES, 'maven-surefire/TEST-io.olamy.AlwaysFailTest.xml')
    const dir = testdir({}, 'junit-out-')
    const { out } = await gateWith([input], ['unit::io.olamy.AlwaysFailTest::testApp'], dir)
    expect(await schemaErrors(out, XSD.surefire)).toEqual(await schemaErrors(input, XSD.surefire))
    expect((readFileSync(out, 'utf8').match(/<rerunFailure/g) ?? []).length).toBe(3)
    await expectOnlyQuarantinedChanged(input, out, ['unit::io.olamy.AlwaysFailTest::testApp'])
  })

  it('several reports go under one <testsuites>, each kept, and the result is valid JUnit', async () => {
    const dir = testdir({}, 'junit-out-')
    const a = join(dir, 'a.xml')
    const b = join(dir, 'b.xml')
    copyFileSync(join(PUBLIC_FIXTURES, 'jest-junit/jest-junit-nested-describe.xml'), a)
    copyFileSync(join(PUBLIC_FIXTURES, 'gradle/TEST-com.github.guenhter.junit.CalculatorTest.xml'), b)
    const failing = await otherFailures(a, '')
    const { out } = await gateWith([a, b], failing, dir)
    expect(await schemaErrors(out, XSD.junit)).toEqual([])
    const both = new Map([...(await cases(a)), ...(await cases(b))])
    expect([...(await cases(out)).keys()].sort()).toEqual([...both.keys()].sort())
  })

  it('a test rerun as repeated <testcase> elements (gotestsum --rerun-fails): each of its failures is forgiven', async () => {
    const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="pkg" tests="5" failures="3" errors="0">
  <testcase classname="pkg" name="TestDial" time="0.2"><failure message="dial tcp: timeout">first try</failure></testcase>
  <testcase classname="pkg" name="TestParse" time="0.1"/>
  <testcase classname="pkg" name="TestRetry" time="0.1"><failure message="once">first try</failure></testcase>
  <testcase classname="pkg" name="TestDial" time="0.2"><failure message="dial tcp: refused">second try</failure></testcase>
  <testcase classname="pkg" name="TestRetry" time="0.1"/>
</testsuite>
`
    const dir = testdir({ 'junit.xml': report }, 'junit-out-')
    const { out } = await gateWith([join(dir, 'junit.xml')], ['unit::pkg::TestDial'], dir)
    const gated = readFileSync(out, 'utf8')
    expect(gated).toMatch(/<testsuite [^>]*failures="1"/)
    expect(gated).toContain('<skipped message="quarantined: known flake (owner: team-a); failure: dial tcp: timeout">')
    expect(gated).toContain('<skipped message="quarantined: known flake (owner: team-a); failure: dial tcp: refused">')
    // The pass on retry is not a failure the gate forgave: its failed try stays as written.
    expect(gated).toContain('<testcase classname="pkg" name="TestRetry" time="0.1"><failure message="once">')
  })

  it('a Playwright test in two projects: a rule for one project changes only that project’s case', async () => {
    const suite = (project: string) =>
      `<testsuite name="cart.spec.ts" hostname="${project}" tests="1" failures="1">` +
      `<testcase name="pays" classname="cart.spec.ts" time="1"><failure message="Timeout 5000ms exceeded">x</failure></testcase>` +
      `</testsuite>`
    const report = `<testsuites id="" name="" tests="2" failures="2">${suite('chromium')}${suite('firefox')}</testsuites>`
    const rule = {
      id: 'chromium-timeouts',
      match: { test_id: 'unit::**', env: { project: 'chromium' } },
      reason: 'slow',
    }
    const dir = testdir(
      { 'junit.xml': report, 'q.json': JSON.stringify({ version: 1, quarantined: [], rules: [rule] }) },
      'junit-out-',
    )
    const out = join(dir, 'gated.xml')
    const args = ['--suite', 'unit', '--quarantine-file', join(dir, 'q.json'), '--junit-out', out, '--json']
    const res = await runCli(['gate', join(dir, 'junit.xml'), ...args])
    expect(res.exitCode, res.stderr).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ quarantined: [{ rule: 'chromium-timeouts' }], blocking: [{}] })
    const gated = readFileSync(out, 'utf8')
    expect(gated).toMatch(
      /hostname="chromium"[^>]*><testcase [^>]*><skipped message="quarantined by rule chromium-timeouts/,
    )
    expect(gated).toMatch(/hostname="firefox"[^>]*><testcase [^>]*><failure message="Timeout 5000ms exceeded"/)
  })

  it('a report in another format gets a JUnit copy written from its results, also valid', async () => {
    const dir = testdir({}, 'junit-out-')
    const input = join(PUBLIC_FIXTURES, 'ctrf/playwright-ctrf-flaky-project.json')
    const failing = await otherFailures(input, '')
    const { out } = await gateWith([input], failing, dir)
    expect(await schemaErrors(out, XSD.junit)).toEqual([])
    expect(readFileSync(out, 'utf8')).toMatch(/<skipped message="quarantined: known flake/)
  })
})

/** The failing test ids of a report other than `except`, as the gate names them. */
async function otherFailures(file: string, except: string): Promise<string[]> {
  const res = await runCli(['gate', file, '--suite', 'unit', '--quarantine-file', '/nonexistent/q.json', '--json'])
  const blocking = (JSON.parse(res.stdout) as { blocking: { test_id: string }[] }).blocking
  return blocking.map((b) => b.test_id).filter((id) => id !== except)
}
