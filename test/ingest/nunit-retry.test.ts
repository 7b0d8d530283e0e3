import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'
import { caseNamed } from './helpers.js'

/*
 * Issue 29 asks for "NUnit's retry attribute" to be read. NUnit 3 writes `[Retry(n)]` as a test property (the limit,
 * `<property name="Retry" value="n" />`), and the result of the last try only: how many tries ran is not in the
 * XML (nunit/nunit#1879, open since 2016; #2916 closed as its duplicate). So a retried pass must read as one
 * passing attempt, never as made-up failed attempts. The real console file (dorny/test-reporter) is given the
 * property where NUnit writes it, on a passing and on a failing case.
 */
const real = readFileSync(join(PUBLIC_FIXTURES, 'nunit/dotnet-nunit3-console.xml'), 'utf8')
const RETRY = '<properties>\n              <property name="Retry" value="3" />\n            </properties>'

describe('NUnit [Retry(n)]', () => {
  it('the limit NUnit writes is not a count of tries: one attempt, the last result, never flaky', async () => {
    const pass = /(<test-case id="1-1001" name="Passing_Test"[^>]*?) \/>/
    const fail = /(<test-case id="1-1003" name="Failing_Test"[^>]*>)/
    expect(real).toMatch(pass)
    expect(real).toMatch(fail)
    const text = real.replace(pass, `$1>${RETRY}</test-case>`).replace(fail, `$1${RETRY}`)
    const before = await parseReport(sourceFromBuffer('nunit.xml', Buffer.from(real)))
    const after = await parseReport(sourceFromBuffer('nunit.xml', Buffer.from(text)))
    expect(after.format).toBe('nunit')
    expect(after.cases.map((c) => [c.name, c.status])).toEqual(before.cases.map((c) => [c.name, c.status]))
    for (const name of ['Passing_Test', 'Failing_Test']) {
      const c = caseNamed(after, name)
      expect(c.attempts, name).toHaveLength(1)
      expect(c.flakyOnRetry, name).toBe(false)
    }
    expect(caseNamed(after, 'Passing_Test').status).toBe('passed')
    expect(caseNamed(after, 'Failing_Test').status).toBe('failed')
  })
})
