import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'
import { runCli, testdir } from '../helpers/run-cli.js'

const junit = (cases: string) =>
  `<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">${cases}</testsuite>`

function sql(db: string, text: string, ...params: unknown[]): unknown[] {
  const d = new Database(db)
  try {
    const stmt = d.prepare(text)
    return stmt.reader ? stmt.all(...params) : [stmt.run(...params).changes]
  } finally {
    d.close()
  }
}

/** `analyze --json` as a full scan: `--since` before any stored run selects everything, and no row answers it. */
const SCAN = ['--since', '0000-01-01']

describe('flakewatch analyze --json reads the persisted analyses', () => {
  // Nine CLI processes over every public fixture: slow on a loaded machine.
  it('prints what the full scan prints, from the rows the writers keep', { timeout: 120_000 }, async () => {
    const dir = testdir({
      'a.xml': junit('<testcase classname="m" name="x"/><testcase classname="m" name="y"><failure/></testcase>'),
    })
    const db = join(dir, 'fw.db')
    const ingest = await runCli(['ingest', PUBLIC_FIXTURES, join(dir, 'a.xml'), '--db', db, '--json'])
    expect(ingest.exitCode, ingest.stderr).toBe(0)
    // The writer analysed every test it stored, at the clock the command ended at.
    const { tests, exact } = (
      sql(
        db,
        `SELECT (SELECT count(*) FROM tests) AS tests, count(*) AS exact FROM analyses
       WHERE valid_until > (SELECT max(at) + 1 FROM runs) AND valid_from <= (SELECT max(at) + 1 FROM runs)`,
      ) as { tests: number; exact: number }[]
    )[0]!
    expect(exact).toBe(tests)

    const read = await runCli(['analyze', '--json', '--db', db])
    const scan = await runCli(['analyze', '--json', '--db', db, ...SCAN])
    expect(read.exitCode, read.stderr).toBe(0)
    expect(scan.exitCode, scan.stderr).toBe(0)
    expect(JSON.parse(read.stdout).length).toBeGreaterThan(1000)
    expect(read.stdout).toBe(scan.stdout)

    // Proof that the rows are what is read: a row edited by hand shows in the default reading, not in the scan.
    const rows = sql(db, "SELECT test_id FROM tests WHERE module = 'm' AND name = 'y'") as { test_id: string }[]
    const id = rows[0]!.test_id
    expect(
      sql(
        db,
        `UPDATE analyses SET analysis = json_set(analysis, '$.reason', 'from the row')
      WHERE test = (SELECT id FROM tests WHERE test_id = ?)`,
        id,
      ),
    ).toEqual([1])
    const edited = JSON.parse((await runCli(['analyze', '--json', '--db', db])).stdout) as {
      test_id: string
      reason: string
    }[]
    expect(edited.find((a) => a.test_id === id)?.reason).toBe('from the row')
    const scanned = JSON.parse((await runCli(['analyze', '--json', '--db', db, ...SCAN])).stdout) as typeof edited
    expect(scanned.find((a) => a.test_id === id)?.reason).not.toBe('from the row')

    // A later report of that test marks its row stale, and its writer analyses it again: the two agree again.
    const later = join(dir, 'b.xml')
    await import('node:fs').then((fs) =>
      fs.writeFileSync(later, junit('<testcase classname="m" name="y"/>').replace('2026-03-01', '2026-03-02')),
    )
    expect((await runCli(['ingest', later, '--db', db])).exitCode).toBe(0)
    const again = await runCli(['analyze', '--json', '--db', db])
    expect(again.stdout).toBe((await runCli(['analyze', '--json', '--db', db, ...SCAN])).stdout)
    expect((JSON.parse(again.stdout) as typeof edited).find((a) => a.test_id === id)?.reason).not.toBe('from the row')
  })
})
