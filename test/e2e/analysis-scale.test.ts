import { readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { buildScaleStore, scaleTestId } from '../helpers/scale-store.js'

// 150,000 tests, and separately 150,000 runs: past the sizes where spreading arrays into arguments overflowed the
// call stack (about 120,000) and where analyses were held twice over. The million-test figures are in
// bench/analysis-scale.mjs.
const SCALE = 150_000
const dir = testdir({}, 'scale-')
const manyTests = join(dir, 'tests.db')
const manyRuns = join(dir, 'runs.db')

beforeAll(async () => {
  for (const [file, shape] of [
    [manyTests, { tests: SCALE, runs: 2 }],
    [manyRuns, { tests: 2, runs: SCALE }],
  ] as const) {
    const store = await openSqliteStore(file)
    await buildScaleStore(store, shape)
    await store.close()
  }
}, 180_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const cli = (args: string[]) => runCli(args, { cwd: dir })
const lines = (file: string) => readFileSync(join(dir, file), 'utf8').split('\n')

describe(`${SCALE} tests × 2 runs`, () => {
  it('analyze prints the whole leaderboard, most harmful first', async () => {
    const r = await cli(['analyze', '--db', manyTests, '-o', 'table.txt'])
    expect(r.exitCode, r.stderr).toBe(0)
    // Header, rule, one row per test.
    expect(lines('table.txt').filter(Boolean)).toHaveLength(SCALE + 2)
    expect(r.stderr).toMatch(new RegExp(`${SCALE} tests: `))
    // Two runs are too few for a verdict; the tests that failed one of them score highest, ties by id.
    const table = lines('table.txt')
    expect(table[2]).toMatch(/^scale::src\/m0\.test\.ts::case 0 +2 +50\.0% .* too few runs /)
    expect(table[SCALE + 1]).toMatch(/ 2 +100\.0% .* too few runs /)
  }, 120_000)

  it('analyze --json writes every test as parseable JSON', async () => {
    const r = await cli(['analyze', '--db', manyTests, '--json', '-o', 'all.json'])
    expect(r.exitCode, r.stderr).toBe(0)
    const all = JSON.parse(readFileSync(join(dir, 'all.json'), 'utf8')) as { test_id: string; runs: number }[]
    expect(all).toHaveLength(SCALE)
    expect(new Set(all.map((a) => a.test_id)).size).toBe(SCALE)
    expect(all.every((a) => a.runs === 2)).toBe(true)
  }, 120_000)

  it('export csv writes one row per test in test-id order', async () => {
    const r = await cli(['export', 'csv', '--db', manyTests, '-o', 'all.csv'])
    expect(r.exitCode, r.stderr).toBe(0)
    const rows = lines('all.csv').filter(Boolean)
    expect(rows).toHaveLength(SCALE + 1)
    const ids = rows.slice(1).map((l) => l.slice(0, l.indexOf(',')))
    expect(ids).toEqual([...ids].sort())
  }, 120_000)
})

describe(`${SCALE} runs × 2 tests`, () => {
  it('analyze --format markdown lists both tests with every run', async () => {
    const r = await cli(['analyze', '--db', manyRuns, '--format', 'markdown', '-o', 'table.md'])
    expect(r.exitCode, r.stderr).toBe(0)
    const rows = lines('table.md').filter((l) => l.startsWith('| scale::'))
    expect(rows).toHaveLength(2)
    // The lookback window holds the last 30 days of hourly runs.
    for (const row of rows) expect(row).toMatch(/^\| scale::src\/m[01]\.test\.ts::case [01] \| 720 \|/)
  }, 120_000)

  it('show explains one test', async () => {
    const r = await cli(['show', scaleTestId(0), '--db', manyRuns])
    expect(r.exitCode, r.stderr).toBe(0)
    // Test 0 fails from the second run on.
    expect(r.stdout).toContain(scaleTestId(0))
    expect(r.stdout).toMatch(/^verdict: broken/m)
    expect(r.stdout).toMatch(/^720 runs: 0 passed; 720 failed$/m)
    expect(r.stdout).toMatch(/^measures: pass rate 0\.0%/m)
  }, 120_000)

  it('export stats writes both tests’ success rates', async () => {
    const r = await cli(['export', 'stats', '--db', manyRuns, '-o', 'stats.json'])
    expect(r.exitCode, r.stderr).toBe(0)
    const stats = JSON.parse(readFileSync(join(dir, 'stats.json'), 'utf8')) as Record<string, number>
    expect(Object.keys(stats).sort()).toEqual([scaleTestId(0), scaleTestId(1)])
    expect(statSync(join(dir, 'stats.json')).size).toBeGreaterThan(0)
  }, 120_000)
})
