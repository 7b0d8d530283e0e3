import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ReportLimitError } from '../../src/errors.js'
import { parseReport, sourceFromBuffer, sourceFromFile } from '../../src/ingest/index.js'
import type { ParsedCase, ParsedReport } from '../../src/ingest/types.js'
import { MAX_JSON_DEPTH, MAX_NAME } from '../../src/limits.js'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { caseNamed, refused } from './helpers.js'
import { runTool, type Ran } from './spawn-tool.js'

/*
 * Issue 29: Cucumber. The real cucumber-js (@cucumber/cucumber, a devDependency) runs a feature with `--retry 1`
 * and writes its JSON, its message stream and its JUnit; the parsers must name each scenario once, outline rows
 * included, and the message stream must show the retries the JSON leaves out. Cucumber-JVM's JSON is read from
 * the public fixtures (test/fixtures/public/cucumber-json, checked in public-fixtures.test.ts).
 */

const FEATURE = `@shop
Feature: Cart
  Background:
    Given an empty cart

  Scenario: adds an item
    When I add 1 item
    Then the cart has 1 item

  Scenario: fails
    When I add 1 item
    Then the cart has 2 item

  Scenario: flaky
    Then it passes on the second try

  Scenario Outline: adding <n> items
    When I add <n> item
    Then the cart has <n> item

    Examples:
      | n |
      | 1 |
      | 2 |

  Scenario Outline: same name rows
    When I add <n> item
    Then the cart has <n> item

    Examples: small
      | n |
      | 3 |
    Examples: big
      | n |
      | 4 |

  Scenario: undefined
    Given a step nobody wrote

  Rule: discounts
    Scenario: pending one
      Given a pending step
`

const STEPS = `const { Given, When, Then } = require('@cucumber/cucumber')
const assert = require('assert')
let tries = 0
Given('an empty cart', function () { this.items = 0 })
When('I add {int} item', function (n) { this.items += n })
Then('the cart has {int} item', function (n) { assert.equal(this.items, n) })
Then('it passes on the second try', function () { assert.equal(++tries, 2) })
Given('a pending step', function () { return 'pending' })
`

const CUCUMBER = join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber-js')

let dir = ''
let ran: Ran = { code: null, output: '' }
const out = (name: string) => join(dir, 'out', name)

beforeAll(async () => {
  dir = testdir(
    {
      'package.json': '{}\n',
      'features/cart.feature': FEATURE,
      'features/step_definitions/steps.js': STEPS,
      'out/.keep': '',
    },
    'cucumber-',
  )
  const formats = ['--format', `json:${out('cucumber.json')}`, '--format', `message:${out('cucumber.ndjson')}`]
  ran = await runTool(
    process.execPath,
    [CUCUMBER, '--retry', '1', ...formats, '--format', `junit:${out('cucumber.xml')}`],
    dir,
  )
  // FLAKEWATCH_UPDATE_FIXTURES=1 keeps the JSON and the message stream (paths neutralised) for the fast tests.
  if (process.env.FLAKEWATCH_UPDATE_FIXTURES === '1') {
    const target = join(ROOT, 'test', 'fixtures', 'reports', 'cucumber')
    mkdirSync(target, { recursive: true })
    for (const f of ['cucumber.json', 'cucumber.ndjson']) {
      writeFileSync(
        join(target, f),
        readFileSync(out(f), 'utf8').replaceAll(dir, '/project').replaceAll(ROOT, '/project'),
      )
    }
  }
}, 120_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function report(name: string): Promise<ParsedReport> {
  expect(existsSync(out(name)), `${name} was not written (exit ${ran.code}):\n${ran.output.slice(-3000)}`).toBe(true)
  return parseReport(sourceFromFile(out(name)))
}

const rows = (cases: ParsedCase[]) => cases.map((c) => [c.module, c.name, c.status])
const ids = (cases: ParsedCase[]) => cases.map((c) => `${c.module} :: ${c.name}`).sort()
const FILE = 'features/cart.feature'

describe('cucumber-js', () => {
  it('--format json: feature file and scenario; outline rows by name, or by line where they share one', async () => {
    expect(ran.code, ran.output).toBe(1)
    const r = await report('cucumber.json')
    expect(r.format).toBe('cucumber-json')
    expect(rows(r.cases)).toEqual([
      [FILE, 'adds an item', 'passed'],
      [FILE, 'fails', 'failed'],
      [FILE, 'flaky', 'passed'],
      [FILE, 'adding 1 items', 'passed'],
      [FILE, 'adding 2 items', 'passed'],
      [FILE, 'same name rows (line 32)', 'passed'],
      [FILE, 'same name rows (line 35)', 'passed'],
      [FILE, 'undefined', 'error'],
      [FILE, 'pending one', 'skipped'],
    ])
    expect(caseNamed(r, 'fails').message).toMatch(/^AssertionError \[ERR_ASSERTION\]: 1 == 2/)
    expect(caseNamed(r, 'fails').stack).toMatch(/steps\.js:6/)
    expect(caseNamed(r, 'undefined')).toMatchObject({
      errorType: 'undefined',
      message: 'Undefined step: Given a step nobody wrote',
    })
    // The JSON leaves out the attempts that willBeRetried: the retried pass is a plain pass here.
    expect(caseNamed(r, 'flaky')).toMatchObject({ flakyOnRetry: false, attempts: [expect.anything()] })
    expect(caseNamed(r, 'adds an item').durationMs).toBeGreaterThanOrEqual(0)
  })

  it('--format message: the same ids, and every attempt of --retry', async () => {
    const json = await report('cucumber.json')
    const r = await report('cucumber.ndjson')
    expect(r.format).toBe('cucumber-messages')
    expect(rows(r.cases)).toEqual(rows(json.cases))
    const flaky = caseNamed(r, 'flaky')
    expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true })
    expect(flaky.message).toMatch(/^AssertionError \[ERR_ASSERTION\]: 1 == 2/)
    expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    expect(caseNamed(r, 'fails').attempts.map((a) => a.status)).toEqual(['failed', 'failed'])
    expect(caseNamed(r, 'fails').errorType).toBe('AssertionError')
    // --retry retries failures only: an undefined step is not retried.
    expect(caseNamed(r, 'undefined').attempts).toHaveLength(1)
    expect(r.meta.startedAt).toMatch(/^\d{4}-/)
    expect(r.meta.finishedAt! >= r.meta.startedAt!).toBe(true)
  })

  it('--format junit names by feature name and Cucumber’s example numbering, not the file: other ids', async () => {
    const json = await report('cucumber.json')
    const r = await report('cucumber.xml')
    expect(r.format).toBe('junit')
    expect(r.cases).toHaveLength(json.cases.length)
    expect(ids(r.cases)).not.toEqual(ids(json.cases))
    expect(caseNamed(r, 'same name rows - big - #2.1').module).toBe('Cart')
  })
})

const envelope = (e: object) => JSON.stringify(e)
const META = envelope({ meta: { protocolVersion: '32.2.0', implementation: { name: 'cucumber-js' } } })
const pickle = (id: string, name: string, line = 3) =>
  envelope({ pickle: { id, uri: 'features/a.feature', name, astNodeIds: ['s'], location: { line } } })
const started = (id: string, attempt: number) =>
  envelope({ testCaseStarted: { id, testCaseId: 'tc', attempt, timestamp: { seconds: 1795779551, nanos: 0 } } })

describe('hostile Cucumber input', () => {
  it('JSON nested past the limit, in either format: refused', async () => {
    const deep = `[{"uri":"a.feature","elements":[],"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`
    expect((await refused('deep.json', deep)).message).toMatch(
      new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels`),
    )
    const line = `{"testCase":{"id":"t","x":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`
    expect(await refused('deep.ndjson', `${META}\n${line}\n`)).toMatchObject({ line: 2 })
  })

  it('an attempt number past the attempt limit: refused at its line', async () => {
    const lines = [
      META,
      pickle('p', 'a'),
      envelope({ testCase: { id: 'tc', pickleId: 'p' } }),
      started('s', 1_000_000_000),
    ]
    const e = await refused('attempts.ndjson', lines.join('\n'))
    expect(e).toBeInstanceOf(ReportLimitError)
    expect(e.message).toMatch(/line 4: testCaseStarted\.attempt \+ 1 is 1,000,000,001, over the limit of 100/)
  })

  it('a scenario name over the identity limit: refused, with the line in the message stream', async () => {
    const big = 'n'.repeat(MAX_NAME + 1)
    expect(await refused('name.ndjson', [META, pickle('p', big)].join('\n'))).toMatchObject({
      line: 2,
      detail: `scenario name is ${MAX_NAME + 1} characters long (limit ${MAX_NAME})`,
    })
    const json = JSON.stringify([{ uri: 'a.feature', elements: [{ type: 'scenario', name: big, steps: [] }] }])
    expect((await refused('name.json', json)).message).toMatch(/\[0\]\.elements\[0\]\.name is 16385 characters long/)
  })

  it('invalid UTF-8 at the start is refused; malformed JSON names its line', async () => {
    const bad = Buffer.concat([Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from(META)])
    expect((await refused('bad.ndjson', bad)).message).toMatch(/binary file/)
    expect(await refused('broken.ndjson', `${META}\n{"pickle":{"id":\n`)).toMatchObject({ line: 2 })
    const e = await refused('broken.json', '[{"uri":"a.feature","elements":[\n{"name":}]}]', 'cucumber-json')
    expect(e).toMatchObject({ line: 2 })
  })

  it('a message stream cut mid-scenario: the running attempt is an error, not lost', async () => {
    const lines = [
      META,
      pickle('p', 'a'),
      envelope({ testCase: { id: 'tc', pickleId: 'p' } }),
      started('s', 0),
      envelope({ testStepFinished: { testCaseStartedId: 's', testStepResult: { status: 'PASSED' } } }),
    ]
    const r = await parseReport(sourceFromBuffer('cut.ndjson', lines.join('\n')))
    expect(r.cases).toEqual([expect.objectContaining({ module: 'features/a.feature', name: 'a', status: 'error' })])
  })
})
