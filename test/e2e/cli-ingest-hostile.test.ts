import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { printIngest } from '../../src/cli/commands/ingest.js'
import type { Io } from '../../src/cli/output.js'
import { runCli, testdir } from '../helpers/run-cli.js'

/** Hostile and untrustworthy reports through the real CLI: refused whole (exit 2, store unchanged) or trusted less. */

function query(db: string, sql: string): unknown[] {
  const d = new Database(db, { readonly: true })
  try {
    return d.prepare(sql).all()
  } finally {
    d.close()
  }
}

const runsIn = (db: string) => (query(db, 'SELECT count(*) AS n FROM runs')[0] as { n: number }).n

/** A passing JUnit report of `cases` test cases: past the size where spreading arrays hit the call-stack limit. */
function bigPassingJunit(cases: number): string {
  const parts = ['<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">']
  for (let i = 0; i < cases; i++) parts.push(`<testcase classname="c${i % 50}" name="t${i}" time="0.001"/>`)
  parts.push('</testsuite>')
  return parts.join('')
}

const junit = (suiteAttrs: string, cases: string) =>
  `<?xml version="1.0"?><testsuite name="s" ${suiteAttrs}>${cases}</testsuite>`

/**
 * A heap far below what holding every result of a 150,000-case report takes (the gate that did needed over 64 MB
 * for it): `gate` and `run` keep a few bytes per passing test, and ingest streams.
 */
const SMALL_HEAP = '--max-old-space-size=48'

describe('flakewatch ingest refuses counts over its limits', () => {
  it('a 261-byte CTRF file asking for a billion retries: exit 2 naming the field and limit, nothing stored', async () => {
    const ctrf = JSON.stringify({
      results: {
        tool: { name: 'x' },
        tests: [{ name: 't', status: 'passed', duration: 1, retries: 1_000_000_000 }],
      },
    })
    expect(ctrf.length).toBeLessThan(1024)
    const dir = testdir({ 'ctrf.json': ctrf, 'ok.xml': junit('', '<testcase classname="c" name="a"/>') })
    const db = join(dir, 'fw.db')
    const r = await runCli(['ingest', join(dir, 'ctrf.json'), '--db', db, '--json'])
    expect(r.exitCode).toBe(2)
    const out = JSON.parse(r.stdout) as { failed: { error: string }[]; ingested: unknown[] }
    expect(out.ingested).toEqual([])
    expect(out.failed[0]!.error).toMatch(/results\.tests\[0\]\.retries \+ 1 is 1,000,000,001, over the limit of 100/)
    // The store exists (opened and migrated) but holds nothing of the refused report.
    expect(runsIn(db)).toBe(0)
  }, 60_000)

  it('Jest JSON with a billion invocations is refused; --max-attempts raises the limit', async () => {
    const jest = (invocations: number) =>
      JSON.stringify({
        numTotalTests: 1,
        testResults: [{ name: 'a.test.js', assertionResults: [{ title: 't', status: 'passed', invocations }] }],
      })
    const dir = testdir({ 'big.json': jest(1_000_000_000), 'some.json': jest(150) })
    const db = join(dir, 'fw.db')
    const big = await runCli(['ingest', join(dir, 'big.json'), '--db', db])
    expect(big.exitCode).toBe(2)
    expect(big.stderr).toMatch(/testResults\[0\]\.assertionResults\[0\]\.invocations is 1,000,000,000, over the limit/)
    const some = await runCli(['ingest', join(dir, 'some.json'), '--db', db])
    expect(some.exitCode).toBe(2)
    expect(some.stderr).toMatch(/over the limit of 100/)
    expect(runsIn(db)).toBe(0)
    const raised = await runCli(['ingest', join(dir, 'some.json'), '--db', db, '--max-attempts', '200', '--json'])
    expect(raised.exitCode).toBe(0)
    expect(JSON.parse(raised.stdout).ingested[0]).toMatchObject({ results: 1, attempts: 150 })
    expect((await runCli(['ingest', join(dir, 'some.json'), '--db', db, '--max-attempts', '0'])).exitCode).toBe(2)
  }, 60_000)

  it('repeats of one JUnit case beyond the attempt limit are refused, even when far apart', async () => {
    const filler = Array.from({ length: 2500 }, (_, i) => `<testcase classname="c" name="f${i}"/>`).join('')
    const repeat = '<testcase classname="c" name="again"><failure message="x"/></testcase>'
    const dir = testdir({ 'r.xml': junit('', `${repeat}${filler}${repeat.repeat(3)}`) })
    const db = join(dir, 'fw.db')
    const r = await runCli(['ingest', join(dir, 'r.xml'), '--db', db, '--max-attempts', '3'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/attempts of ".*again" is 4, over the limit of 3/)
    expect(runsIn(db)).toBe(0)
  }, 60_000)
})

describe('flakewatch ingest does not trust impossible times and durations', () => {
  it('a run dated 9999-12-31 is stored at the ingest time, with a warning in the --json entry', async () => {
    const dir = testdir({
      'future.xml': junit('timestamp="9999-12-31T00:00:00"', '<testcase classname="c" name="a"/>'),
    })
    const db = join(dir, 'fw.db')
    const before = Date.now()
    const r = await runCli(['ingest', join(dir, 'future.xml'), '--db', db, '--json'])
    expect(r.exitCode).toBe(0)
    const entry = (JSON.parse(r.stdout) as { ingested: { warnings?: string[] }[] }).ingested[0]!
    expect(entry.warnings?.join('\n')).toMatch(/startedAt 9999-12-31T00:00:00\.000Z is more than a day after ingest/)
    const [run] = query(db, 'SELECT at, started_at FROM runs') as { at: number; started_at: string }[]
    expect(run!.at).toBeGreaterThanOrEqual(before)
    expect(run!.at).toBeLessThanOrEqual(Date.now())
    expect(Date.parse(run!.started_at)).toBe(run!.at)
  }, 60_000)

  it('a run dated 0001-01-01 or not dated at all is stored at the ingest time, each ignored timestamp named (issue 33)', async () => {
    const dir = testdir({
      'past.xml': junit('timestamp="0001-01-01T00:00:00Z"', '<testcase classname="c" name="a"/>'),
      'words.xml': junit('timestamp="yesterday"', '<testcase classname="c" name="b"/>'),
      'old.xml': junit('timestamp="1990-06-01T00:00:00Z"', '<testcase classname="c" name="c"/>'),
    })
    const db = join(dir, 'fw.db')
    const before = Date.now()
    const r = await runCli(['ingest', dir, '--db', db, '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    const entries = (JSON.parse(r.stdout) as { ingested: { file: string; warnings?: string[] }[] }).ingested
    const warningsOf = (name: string) => entries.find((e) => e.file.endsWith(name))?.warnings?.join('\n')
    expect(warningsOf('past.xml')).toMatch(
      /1 timestamp\(s\) before 1980 ignored as placeholders \(first: "0001-01-01T00:00:00Z"\)/,
    )
    expect(warningsOf('words.xml')).toMatch(/1 timestamp\(s\) that are not a date ignored \(first: "yesterday"\)/)
    expect(warningsOf('old.xml')).toMatch(/startedAt 1990-06-01T00:00:00\.000Z is before 2000; the ingest time is used/)
    for (const run of query(db, 'SELECT at FROM runs') as { at: number }[]) {
      expect(run.at).toBeGreaterThanOrEqual(before)
      expect(run.at).toBeLessThanOrEqual(Date.now())
    }
  }, 60_000)

  it('durations of NaN, Infinity (1e308), hex and negative become unknown, each noted', async () => {
    const cases = ['1e308', '0x10', '-1', 'NaN', '2.5']
      .map((t, i) => `<testcase classname="c" name="t${i}" time="${t}"/>`)
      .join('')
    const dir = testdir({ 'times.xml': junit('timestamp="2026-03-01T10:00:00Z"', cases) })
    const db = join(dir, 'fw.db')
    const r = await runCli(['ingest', join(dir, 'times.xml'), '--db', db, '--json'])
    expect(r.exitCode).toBe(0)
    const entry = (JSON.parse(r.stdout) as { ingested: { warnings?: string[] }[] }).ingested[0]!
    expect(entry.warnings?.join('\n')).toMatch(/4 duration\(s\) not a finite non-negative decimal number/)
    const rows = query(db, 'SELECT t.name, r.duration_ms FROM results r JOIN tests t ON t.id = r.test ORDER BY t.name')
    expect(rows).toEqual([
      { name: 't0', duration_ms: null },
      { name: 't1', duration_ms: null },
      { name: 't2', duration_ms: null },
      { name: 't3', duration_ms: null },
      { name: 't4', duration_ms: 2500 },
    ])
  }, 60_000)
})

describe('flakewatch ingest streams and still folds', () => {
  it('a case repeated thousands of cases later (another chunk) becomes one result with both attempts', async () => {
    const filler = Array.from({ length: 4500 }, (_, i) => `<testcase classname="c" name="f${i}"/>`).join('')
    const xml = junit(
      'timestamp="2026-03-01T10:00:00Z"',
      `<testcase classname="c" name="x"><failure message="boom"/></testcase>${filler}<testcase classname="c" name="x"/>`,
    )
    const dir = testdir({ 'rerun.xml': xml })
    const db = join(dir, 'fw.db')
    const r = await runCli(['ingest', join(dir, 'rerun.xml'), '--db', db, '--json'])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).ingested[0]).toMatchObject({ tests: 4501, results: 4501, attempts: 4502 })
    const [x] = query(
      db,
      `SELECT r.status, r.flaky, r.attempts, r.failed_attempts FROM results r JOIN tests t ON t.id = r.test
       WHERE t.name = 'x'`,
    )
    expect(x).toEqual({ status: 0, flaky: 1, attempts: 2, failed_attempts: 1 })
    expect(query(db, 'SELECT total, passed, flaky FROM runs')).toEqual([{ total: 4501, passed: 4501, flaky: 1 }])
  }, 60_000)

  it('gate and ingest handle a passing report of 150,000 cases (no call-stack limit, memory bounded)', async () => {
    const dir = testdir()
    const file = join(dir, 'big.xml')
    writeFileSync(file, bigPassingJunit(150_000))
    const db = join(dir, 'fw.db')
    const gate = await runCli(['gate', file, '--db', db], { env: { NODE_OPTIONS: SMALL_HEAP } })
    expect(gate.stderr).not.toMatch(/call stack|heap out of memory/)
    expect(gate.exitCode).toBe(0)
    expect(gate.stdout).toMatch(/PASS \(150000 tests: 150000 passed, 0 failed, 0 skipped\)/)
    const ingest = await runCli(['ingest', file, '--db', db, '--json'])
    expect(ingest.exitCode).toBe(0)
    expect(JSON.parse(ingest.stdout).ingested[0]).toMatchObject({ results: 150_000 })
  }, 180_000)

  it('run passes with a test command that wrote a passing report of 150,000 cases, and stores them all', async () => {
    const dir = testdir()
    const source = join(dir, 'source.xml')
    writeFileSync(source, bigPassingJunit(150_000))
    const db = join(dir, 'fw.db')
    // The report must be written by the command (run takes only reports newer than its start): a copy is.
    const copy = `require('node:fs').copyFileSync(${JSON.stringify(source)}, ${JSON.stringify(join(dir, 'out.xml'))})`
    const run = await runCli(
      ['run', '--db', db, '--report', join(dir, 'out.xml'), '--', process.execPath, '-e', copy],
      {
        env: { NODE_OPTIONS: SMALL_HEAP },
      },
    )
    expect(run.stderr).not.toMatch(/call stack|heap out of memory/)
    expect(run.exitCode).toBe(0)
    expect(query(db, 'SELECT total, passed FROM runs')).toEqual([{ total: 150_000, passed: 150_000 }])
  }, 180_000)

  it('a TRX report that fails after results were already handed on leaves nothing stored (streamed, all or nothing)', async () => {
    const results = Array.from({ length: 6000 }, (_, i) => {
      // The last result's name passes the identity limit: found only in the second pass, chunks after the first.
      const name = i === 5999 ? 'x'.repeat(20_000) : `T${i}`
      return `<UnitTestResult testId="${i}" testName="${name}" outcome="Passed"/>`
    })
    const trx = `<?xml version="1.0"?><TestRun><Results>${results.join('\n')}</Results><TestDefinitions/></TestRun>`
    const dir = testdir({ 'run.trx': trx })
    const db = join(dir, 'fw.db')
    const r = await runCli(['ingest', join(dir, 'run.trx'), '--db', db, '--json'])
    expect(r.exitCode).toBe(2)
    expect((JSON.parse(r.stdout) as { failed: { error: string }[] }).failed[0]!.error).toMatch(/longer than/)
    expect(runsIn(db)).toBe(0)
    expect(query(db, 'SELECT count(*) AS n FROM results')).toEqual([{ n: 0 }])
  }, 60_000)

  it('prints the summary of 200,000 ingested reports, as a table and as JSON (no call-stack limit)', () => {
    const entry = (i: number) => ({ file: `r${i}.xml`, run_id: `run-${i}`, tests: 1, results: 1, attempts: 1 })
    const summary = { ingested: Array.from({ length: 200_000 }, (_, i) => entry(i)), duplicates: [], failed: [] }
    for (const json of [false, true]) {
      const out: string[] = []
      const err: string[] = []
      const io = {
        stdout: { write: (s: string) => out.push(s) },
        stderr: { write: (s: string) => err.push(s) },
        env: {},
      } as unknown as Io
      printIngest(summary, { json }, io)
      if (json) expect(JSON.parse(out.join('')).ingested).toHaveLength(200_000)
      else {
        expect(out.join('').split('\n')).toHaveLength(200_000 + 3)
        expect(err.join('')).toContain('stored 200000 results from 200000 report(s)')
      }
    }
  })
})
