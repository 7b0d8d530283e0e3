import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, testdir } from '../helpers/run-cli.js'

const junit = (cases: string) => `<?xml version="1.0"?>\n<testsuite name="s">\n${cases}\n</testsuite>\n`
const pass = (name: string) => `<testcase classname="m" name="${name}" time="0.01"/>`
const fail = (name: string) =>
  `<testcase classname="m" name="${name}" time="0.02"><failure message="boom">boom</failure></testcase>`

// Read commands must answer while another process holds SQLite's write lock (an ingest in progress): they open
// read-only, and the schema check takes no lock when nothing needs migrating. Before, every open ran the check
// inside BEGIN IMMEDIATE and waited up to 30 s for the writer, so five commands took 150 s and this test's
// 60 s limit failed it.
describe('read commands while a writer holds the lock', () => {
  const dir = testdir({
    'r1.xml': junit(pass('a') + fail('b')),
    'r2.xml': junit(pass('a') + pass('b')),
    'job.xml': junit(pass('a') + fail('b')),
  })
  const db = join(dir, 'fw.db')
  let writer: Database.Database | undefined
  afterAll(() => writer?.close())

  it('analyze, show, gate --db, export csv and quarantine list answer from the last committed state', async () => {
    const runs: [string, string][] = [
      ['r1.xml', 'run-1'],
      ['r2.xml', 'run-2'],
    ]
    for (const [file, run] of runs) {
      const r = await runCli(['ingest', join(dir, file), '--db', db, '--suite', 'unit', '--run-id', run])
      expect(r.exitCode, r.stderr).toBe(0)
    }
    writer = new Database(db)
    writer.exec('BEGIN IMMEDIATE')
    // An uncommitted write: readers must neither wait for it nor see it.
    writer.prepare(`UPDATE runs SET branch = 'uncommitted' WHERE run_id = 'run-1'`).run()

    const analyze = await runCli(['analyze', '--db', db, '--json'])
    expect(analyze.exitCode, analyze.stderr).toBe(0)
    const tests = JSON.parse(analyze.stdout) as { tests: { test_id: string }[] } | { test_id: string }[]
    const ids = (Array.isArray(tests) ? tests : tests.tests).map((t) => t.test_id).sort()
    expect(ids).toEqual(['unit::m::a', 'unit::m::b'])

    const show = await runCli(['show', 'unit::m::b', '--db', db, '--json'])
    expect(show.exitCode, show.stderr).toBe(0)
    expect(show.stdout).toContain('unit::m::b')
    expect(show.stdout).not.toContain('uncommitted')

    const gate = await runCli(['gate', join(dir, 'job.xml'), '--suite', 'unit', '--db', db, '--json'])
    expect(gate.exitCode, gate.stderr).toBe(1)
    expect(JSON.parse(gate.stdout)).toMatchObject({ verdict: 'fail' })

    const csv = await runCli(['export', 'csv', '--db', db])
    expect(csv.exitCode, csv.stderr).toBe(0)
    expect(csv.stdout).toContain('unit::m::b')

    const list = await runCli(['quarantine', 'list', '--db', db, '--json'])
    expect(list.exitCode, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual({ quarantined: [], rules: [] })

    // The writer was never disturbed: it still commits.
    writer.exec('COMMIT')
    expect(writer.prepare(`SELECT branch FROM runs WHERE run_id = 'run-1'`).pluck().get()).toBe('uncommitted')
  }, 60_000)
})
