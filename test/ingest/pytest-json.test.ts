import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer, sourceFromFile } from '../../src/ingest/index.js'
import { pytestNames } from '../../src/ingest/pytest-json.js'
import type { ParsedCase } from '../../src/ingest/types.js'
import { MAX_JSON_DEPTH, MAX_NAME } from '../../src/limits.js'
import { caseNamed, countByStatus, refused } from './helpers.js'

/*
 * Issue 29: pytest-json-report. The plugin is neither in Debian nor on npm, so the tests cannot install it; the two
 * reports under test/fixtures/reports come from one real run, made once by hand: pytest 7.2.1 (Debian's
 * python3-pytest) with python3-pytest-rerunfailures 10.2, and pytest-json-report 1.5.0 loaded from its source
 * (numirias/pytest-json-report @ c6f0bc9, `PYTHONPATH=<src> pytest-3 -p pytest_jsonreport.plugin --reruns 1
 * --junitxml=pytest-rerun.xml --json-report --json-report-file=pytest-rerun.json tests`, FLAKY_FILE set as in
 * runner-formats.test.ts), the run's directory renamed /project. The plugin's own sample report is in the public
 * fixtures (public-fixtures.test.ts).
 */
const REPORTS = join(import.meta.dirname, '..', 'fixtures', 'reports')
const parse = (file: string) => parseReport(sourceFromFile(join(REPORTS, file)))
const ids = (cases: ParsedCase[]) => cases.map((c) => `${c.module} :: ${c.name}`).sort()

describe('pytest-json-report', () => {
  it('names each test as pytest --junitxml of the same run does: one id per test', async () => {
    const json = await parse('pytest-json/pytest-rerun.json')
    const junit = await parse('junit/pytest-rerun.xml')
    expect(json.format).toBe('pytest-json')
    expect(junit.format).toBe('junit')
    expect(ids(json.cases)).toEqual(ids(junit.cases))
    // The test file of runner-formats.test.ts, plus a fixture that fails in setup and an expected failure.
    expect(countByStatus(json.cases)).toEqual({ passed: 4, failed: 1, skipped: 2, error: 1 })
    expect(caseNamed(json, 'test_param[2]', 'tests.test_cart.TestCart').status).toBe('passed')
    expect(caseNamed(json, 'test_xfail', 'tests.test_cart').status).toBe('skipped')
    for (const c of json.cases) expect(caseNamed(junit, c.name, c.module).status, c.name).toBe(c.status)
    expect(caseNamed(json, 'test_fails')).toMatchObject({ file: 'tests/test_cart.py', message: 'assert (1 + 1) == 3' })
    expect(caseNamed(json, 'test_fails').stack).toMatch(/tests\/test_cart\.py:8: AssertionError$/)
    expect(caseNamed(json, 'test_setup_error').message).toBe('RuntimeError: fixture broke')
    expect(caseNamed(json, 'test_skipped').message).toBe('not today')
    expect(json.meta.startedAt! < json.meta.finishedAt!).toBe(true)
  })

  it('pytest-rerunfailures: `rerun` is a failure and then a pass, which its JUnit does not show', async () => {
    const json = await parse('pytest-json/pytest-rerun.json')
    const flaky = caseNamed(json, 'test_flaky')
    expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true })
    expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    const junit = await parse('junit/pytest-rerun.xml')
    expect(caseNamed(junit, 'test_flaky')).toMatchObject({ status: 'passed', flakyOnRetry: false })
  })

  it.each([
    ['tests/test_a.py::test_x', 'tests.test_a', 'test_x', 'tests/test_a.py'],
    ['tests/test_a.py::TestA::TestB::test_x', 'tests.test_a.TestA.TestB', 'test_x', 'tests/test_a.py'],
    ['test_a.py::test_p[a::b-1.5]', 'test_a', 'test_p[a::b-1.5]', 'test_a.py'],
    ['tests/test_a.py', '', 'tests.test_a', 'tests/test_a.py'],
  ])('%s: module %s, name %s', (nodeid, module, name, file) => {
    expect(pytestNames(nodeid)).toEqual({ module, name, file })
  })
})

describe('hostile pytest-json-report input', () => {
  const report = (tests: unknown[]) => JSON.stringify({ created: 1, duration: 0, exitcode: 1, root: '/r', tests })

  it('nested past the JSON limit, malformed, or starting with invalid UTF-8: refused', async () => {
    const deep = `{"exitcode":1,"root":"/r","tests":[],"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
    expect((await refused('deep.json', deep)).message).toMatch(new RegExp(`nested deeper than ${MAX_JSON_DEPTH}`))
    expect(await refused('broken.json', '{"exitcode": 1, "root": "/r",\n"tests": [\n{"nodeid": }]}')).toMatchObject({
      line: 3,
    })
    const bad = Buffer.concat([Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from(report([]))])
    expect((await refused('bad.json', bad)).message).toMatch(/binary file/)
  })

  it('a node id over the identity limit: refused, naming the field', async () => {
    const e = await refused('name.json', report([{ nodeid: `t.py::${'n'.repeat(MAX_NAME)}`, outcome: 'passed' }]))
    expect(e.message).toMatch(/tests\[0\]\.nodeid is 16390 characters long \(limit 16384\)/)
  })

  it('an unknown outcome is an error, a skip reason that is not a tuple is kept as written', async () => {
    const r = await parseReport(
      sourceFromBuffer(
        'odd.json',
        report([
          { nodeid: 't.py::a', outcome: 'exploded' },
          { nodeid: 't.py::b', outcome: 'skipped', setup: { outcome: 'skipped', longrepr: `${"('".repeat(5000)}x` } },
        ]),
      ),
    )
    expect(r.cases.map((c) => c.status)).toEqual(['error', 'skipped'])
    expect(r.cases[1]!.message).toHaveLength(2 * 5000 + 1)
  })
})
