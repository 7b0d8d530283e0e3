import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'

// bench/pg-scale.mjs at a tiny size (10,000 results, 400 tests, 3 s of load, 100-test uploads), so that the scale bench keeps working
// between its runs: the SQL fill into the migrated schema, the sweep, real `serve` processes under load, the
// one-writer ingest and the prune. Its figures are not asserted (no wall clock in tests); what it stored and
// counted is.
const PG = process.env.FLAKEWATCH_TEST_PG
const ROOT = join(import.meta.dirname, '..', '..')
const CLI = join(ROOT, 'dist', 'cli', 'main.js')
const PREFIX = `fw_scale_test_${process.pid}`

interface Row {
  bench: string
  metric: string
  value: number | string
  [k: string]: unknown
}

describe.skipIf(!PG || !existsSync(CLI))('bench/pg-scale.mjs at 10^4 results', () => {
  afterAll(async () => {
    const c = new pg.Client({ connectionString: PG })
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS ${PREFIX}_10k CASCADE`)
    await c.end()
  })

  it('fills, serves under load, ingests and prunes, and says which targets it met', async () => {
    const args = ['--sizes', '1e4', '--tests', '400', '--seconds', '3', '--no-lock', '--prefix', PREFIX]
    args.push('--upload-tests', '100')
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bench', 'pg-scale.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, FLAKEWATCH_BENCH_PG: PG },
      maxBuffer: 16 << 20,
    })
    const rows = stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Row)
    const find = (part: string) => {
      const row = rows.find((r) => r.metric.includes(part))
      expect(row, `a row "${part}" in\n${stdout}`).toBeDefined()
      return row!
    }
    // 400 tests in 4 suites, each run one suite of 100: 100 runs over 60 days, every test swept.
    expect(find('fill to 10,000 results')).toMatchObject({ runs: 100, tests: 400, swept_rows: 400, days: 60 })
    expect(find('cold analysis')).toMatchObject({ results: 10_000 })
    expect(find('failed requests').value).toBe(0)
    expect(Number(find('ingest through POST').uploads)).toBeGreaterThan(0)
    expect(find('ingest by one writer')).toMatchObject({ reports: 10 })
    // Runs are spread evenly over 60 days from the first day's start: the oldest 30½ days hold 51 of 100 runs.
    const prune = find('prune of the oldest 30 days')
    expect(prune).toMatchObject({ runs_pruned: 51, results_pruned: 5_100 })
    const summary = find('targets met')
    expect(summary).toMatchObject({ size: 10_000, failed_requests: 0 })
    for (const k of ['first_answer_s', 'rss_peak_mb', 'read_p95_ms', 'healthz_p95_ms', 'visible_p95_ms', 'prune_s']) {
      expect(Number(summary[k]), k).toBeGreaterThan(0)
    }
    // The schema is dropped at the end (no --keep).
    const c = new pg.Client({ connectionString: PG })
    await c.connect()
    const { rows: left } = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [`${PREFIX}_10k`])
    await c.end()
    expect(left).toHaveLength(0)
  }, 90_000)
})
