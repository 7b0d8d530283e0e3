import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { runCli, testdir } from '../helpers/run-cli.js'

/**
 * An ingest of several files parses them in a worker thread while the main thread stores them; one small file is
 * parsed in the main thread. Both must store the same thing, with every guarantee of the single-thread path.
 */

const junit = (cases: string) =>
  `<?xml version="1.0"?>\n<testsuite name="s" timestamp="2026-03-01T10:00:00Z">\n${cases}\n</testsuite>\n`

/** More cases than one parser chunk (2,000), with the first one repeated at the very end: a repeat across chunks. */
function bigWithLateRepeat(): string {
  const cases = ['<testcase classname="big" name="first" time="0.1"><failure message="boom">trace</failure></testcase>']
  for (let i = 0; i < 2500; i++) cases.push(`<testcase classname="big" name="t${i}" time="0.001"/>`)
  cases.push('<testcase classname="big" name="first" time="0.2"/>')
  return junit(cases.join('\n'))
}

const FILES = {
  'a.xml': junit(
    [
      '<testcase classname="m" name="one" time="0.5"><failure message="x">at a</failure></testcase>',
      '<testcase classname="m" name="two" time="NaN"/>',
      '<testcase classname="m" name="one" time="0.25"/>',
    ].join('\n'),
  ),
  'b.xml': junit('<testcase classname="n" name="three" time="1"/>'),
  'c.xml': junit('<testcase classname="bad" name="early" time="1"/>\n<testcase classname="bad" name="late" <oops/>'),
  'd.xml': bigWithLateRepeat(),
}

function rows(db: string, sql: string): unknown[] {
  const d = new Database(db, { readonly: true })
  try {
    return d.prepare(sql).all()
  } finally {
    d.close()
  }
}

/** Everything stored about results and attempts, keyed by test id rather than by integer keys. */
function stored(db: string) {
  return {
    results: rows(
      db,
      `SELECT t.test_id, r.status, r.flaky, r.duration_ms, r.attempts, r.failed_attempts, r.position, r.error_type
       FROM results r JOIN tests t ON t.id = r.test ORDER BY t.test_id`,
    ),
    attempts: rows(
      db,
      `SELECT t.test_id, a.retry, a.status, a.duration_ms FROM attempts a JOIN tests t ON t.id = a.test
       ORDER BY t.test_id, a.retry`,
    ),
    runs: rows(db, 'SELECT run_id, total, passed, failed, flaky FROM runs ORDER BY run_id'),
  }
}

interface Summary {
  ingested: { file: string; run_id: string; results: number; warnings?: string[] }[]
  duplicates: { file: string; run_id: string }[]
  failed: { file: string; error: string }[]
}

describe('flakewatch ingest of several files (parsed in a worker thread)', () => {
  it('stores what file-by-file ingest stores, refuses a file broken late whole, and recognises duplicates', async () => {
    const dir = testdir(FILES)
    const together = join(dir, 'together.db')
    const args = (db: string) => ['--db', db, '--run-id', 'job-1', '--suite', 'u', '--json']
    const files = ['a.xml', 'b.xml', 'c.xml', 'd.xml'].map((f) => join(dir, f))
    const first = await runCli(['ingest', ...files, ...args(together)])
    expect(first.exitCode).toBe(2)
    const summary = JSON.parse(first.stdout) as Summary
    expect(summary.failed).toEqual([{ file: join(dir, 'c.xml'), error: expect.stringMatching(/c\.xml:4: /) }])
    expect(summary.ingested.map((e) => [e.file.slice(dir.length + 1), e.run_id, e.results])).toEqual([
      ['a.xml', 'job-1', 2],
      ['b.xml', 'job-1', 1],
      ['d.xml', 'job-1', 2501],
    ])
    expect(summary.ingested[0]!.warnings).toEqual([expect.stringMatching(/1 duration\(s\).*NaN/)])

    // The same files one command each: one small file is parsed in the main thread.
    const apart = join(dir, 'apart.db')
    for (const f of files) await runCli(['ingest', f, ...args(apart)])
    const got = stored(together)
    expect(got).toEqual(stored(apart))
    expect(got.results).not.toContainEqual(expect.objectContaining({ test_id: 'u::bad::early' }))
    expect(got.results).toContainEqual(
      expect.objectContaining({ test_id: 'u::m::one', status: 0, flaky: 1, attempts: 2, failed_attempts: 1 }),
    )
    expect(got.results).toContainEqual(
      expect.objectContaining({ test_id: 'u::big::first', flaky: 1, attempts: 2, position: 0 }),
    )
    expect(got.runs).toEqual([{ run_id: 'job-1', total: 2504, passed: 2504, failed: 0, flaky: 2 }])

    const again = JSON.parse((await runCli(['ingest', dir, ...args(together)])).stdout) as Summary
    expect(again.ingested).toEqual([])
    expect(again.duplicates.map((d) => d.file.slice(dir.length + 1))).toEqual(['a.xml', 'b.xml', 'd.xml'])
    expect(again.failed.map((f) => f.file.slice(dir.length + 1))).toEqual(['c.xml'])
    expect(stored(together)).toEqual(got)
  })

  it('goes on with the next file when the store refuses one part-way through (a repeat over --max-attempts)', async () => {
    // Files are taken in name order: the refused one first.
    const dir = testdir({ 'd.xml': FILES['d.xml'], 'e.xml': FILES['b.xml'] })
    const db = join(dir, 'limit.db')
    const files = ['d.xml', 'e.xml'].map((f) => join(dir, f))
    const out = await runCli(['ingest', ...files, '--db', db, '--suite', 'u', '--max-attempts', '1', '--json'])
    expect(out.exitCode).toBe(2)
    const summary = JSON.parse(out.stdout) as Summary
    expect(summary.failed).toEqual([{ file: files[0], error: expect.stringMatching(/attempts of "u::big::first"/) }])
    expect(summary.ingested.map((e) => e.file)).toEqual([files[1]])
    expect(stored(db).results).toEqual([expect.objectContaining({ test_id: 'u::n::three', status: 0 })])
  })

  it('parses a file over 8 MB in the main thread and the others in the worker, all stored', async () => {
    const padding = `<!-- ${'x'.repeat(9 * 1024 * 1024)} -->`
    const dir = testdir({
      'a.xml': junit(`${padding}\n<testcase classname="big" name="one"/>`),
      'b.xml': FILES['b.xml'],
    })
    const db = join(dir, 'mixed.db')
    const out = await runCli(['ingest', dir, '--db', db, '--suite', 'u', '--json'])
    expect(out.exitCode).toBe(0)
    expect((JSON.parse(out.stdout) as Summary).ingested.map((e) => e.file.slice(dir.length + 1))).toEqual([
      'a.xml',
      'b.xml',
    ])
    expect(stored(db).results.map((r) => (r as { test_id: string }).test_id)).toEqual(['u::big::one', 'u::n::three'])
  })
})
