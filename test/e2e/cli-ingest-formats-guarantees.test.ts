import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { MAX_NAME } from '../../src/limits.js'
import { ISSUE_29_REPORTS } from '../helpers/fixtures.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

/**
 * Issue 29, item 4, through the real CLI for every format that issue added: ingesting a report twice is one
 * duplicate, and a report broken after more cases than one parser chunk (2,000) leaves the store as it was (one
 * report is one transaction, even when the parser streamed the first chunks to the store already).
 */
const FIXTURES = ISSUE_29_REPORTS

const N = 2_500
const many = (f: (i: number) => string) => Array.from({ length: N }, (_, i) => f(i)).join('\n')

/** Per streamed format: N cases, then something the parser refuses. */
const BROKEN_LATE: Record<string, string> = {
  'go-json': `${many(
    (i) => `{"Action":"run","Package":"p","Test":"T${i}"}\n{"Action":"pass","Package":"p","Test":"T${i}","Elapsed":0}`,
  )}\n{"Action":"pass","Package":\n`,
  tap: `TAP version 13\n${many((i) => `ok ${i + 1} - t${i}`)}\nok ${N + 1} - ${'n'.repeat(MAX_NAME + 1)}\n`,
  nunit: `<test-run>\n<test-suite type="Assembly" name="a.dll">\n${many(
    (i) => `<test-case fullname="C.t${i}" name="t${i}" classname="C" result="Passed"/>`,
  )}\n<test-case fullname="C.late" <oops/>\n`,
  xunit: `<assemblies>\n<assembly name="a.dll">\n<collection>\n${many(
    (i) => `<test name="C.t${i}" type="C" method="t${i}" result="Pass"/>`,
  )}\n<test name="C.late" <oops/>\n`,
  'bazel-bep': `{"id":{"started":{}},"started":{"uuid":"u-broken","startTimeMillis":"1767225600000"}}\n${many(
    (i) =>
      `{"id":{"testResult":{"label":"//a:t${i}","run":1,"shard":1,"attempt":1}},"testResult":{"status":"PASSED"}}\n` +
      `{"id":{"testSummary":{"label":"//a:t${i}"}},"testSummary":{"overallStatus":"PASSED"}}`,
  )}\n{"id":\n`,
  'cucumber-messages': `{"meta":{"protocolVersion":"32.2.0"}}\n${many(
    (i) =>
      `{"pickle":{"id":"p${i}","uri":"a.feature","name":"s${i}","astNodeIds":[],"location":{"line":${i + 2}}}}\n` +
      `{"testCase":{"id":"c${i}","pickleId":"p${i}"}}\n` +
      `{"testCaseStarted":{"id":"s${i}","testCaseId":"c${i}","attempt":0}}\n` +
      `{"testStepFinished":{"testCaseStartedId":"s${i}","testStepResult":{"status":"PASSED"}}}\n` +
      `{"testCaseFinished":{"testCaseStartedId":"s${i}","willBeRetried":false}}`,
  )}\n{"pickle":\n`,
}

function count(db: string, sql: string): number {
  const d = new Database(db, { readonly: true })
  try {
    return (d.prepare(sql).get() as { n: number }).n
  } finally {
    d.close()
  }
}

interface Summary {
  ingested: { file: string; results: number }[]
  duplicates: { file: string }[]
  failed: { file: string; error: string }[]
}

describe('every format of issue 29: duplicates and one transaction', { timeout: 120_000 }, () => {
  for (const [format, fixture] of Object.entries(FIXTURES)) {
    it(`${format}: the same report twice is one duplicate`, async () => {
      const dir = testdir({}, `dup-${format}-`)
      const db = join(dir, 'fw.db')
      const file = join(ROOT, fixture)
      const first = await runCli(['ingest', file, '--db', db, '--suite', 's', '--json'])
      expect(first.exitCode, first.stderr).toBe(0)
      const stored = count(db, 'SELECT count(*) AS n FROM results')
      expect(stored).toBe((JSON.parse(first.stdout) as Summary).ingested[0]!.results)
      expect(stored).toBeGreaterThan(0)
      // A copy under another name: recognised by its content (or Bazel's invocation id), not its path.
      const copy = join(dir, `copy-${format}`)
      writeFileSync(copy, readFileSync(file))
      const again = await runCli(['ingest', copy, '--db', db, '--suite', 's', '--json'])
      expect(again.exitCode, again.stderr).toBe(0)
      const summary = JSON.parse(again.stdout) as Summary
      expect([summary.ingested.length, summary.duplicates.map((d) => d.file)]).toEqual([0, [copy]])
      expect(count(db, 'SELECT count(*) AS n FROM results')).toBe(stored)
    })
  }

  for (const [format, content] of Object.entries(BROKEN_LATE)) {
    it(`${format}: broken after ${N} cases, refused whole, nothing stored`, async () => {
      const dir = testdir({ [`late.${format}`]: content }, `late-${format}-`)
      const db = join(dir, 'fw.db')
      const out = await runCli(['ingest', join(dir, `late.${format}`), '--db', db, '--suite', 's', '--json'])
      expect(out.exitCode).toBe(2)
      const summary = JSON.parse(out.stdout) as Summary
      expect(summary.failed).toEqual([{ file: join(dir, `late.${format}`), error: expect.stringMatching(/:\d+: /) }])
      expect(count(db, 'SELECT count(*) AS n FROM results')).toBe(0)
      expect(count(db, 'SELECT count(*) AS n FROM runs')).toBe(0)
      // The same file without its broken end is read: the refusal came from the end, after the first chunks.
      const whole = content.slice(0, content.lastIndexOf('\n', content.length - 2))
      const fixed = join(dir, `fixed.${format}`)
      writeFileSync(
        fixed,
        `${format === 'nunit' ? whole + '\n</test-suite></test-run>' : format === 'xunit' ? whole + '\n</collection></assembly></assemblies>' : whole}\n`,
      )
      const ok = await runCli(['ingest', fixed, '--db', db, '--suite', 's', '--json'])
      expect(ok.exitCode, ok.stderr).toBe(0)
      expect(count(db, 'SELECT count(*) AS n FROM results')).toBe(N)
    })
  }
})
