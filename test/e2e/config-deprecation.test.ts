import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

describe('a config that still sets removed keys', () => {
  it('loads, and the command says once which key to remove and what replaced it', async () => {
    const dir = testdir()
    writeFileSync(
      join(dir, 'flakewatch.config.json'),
      JSON.stringify({ analysis: { verdict: { fixedMaxRuns: 40 }, hints: { timeOfDayBucketHours: 6 } } }),
    )
    const report = join(ROOT, 'test/fixtures/reports/junit/vitest-junit.xml')
    const ingested = await runCli(['ingest', report, '--db', 'fw.db'], { cwd: dir })
    expect(ingested.exitCode, ingested.stderr).toBe(0)
    const r = await runCli(['analyze', '--json'], { cwd: dir, env: { FLAKEWATCH_DB: join(dir, 'fw.db') } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toBeTruthy()
    const warned = r.stderr.split('\n').filter((l) => l.startsWith('warning: '))
    expect(warned).toHaveLength(2)
    expect(warned[0]).toMatch(/analysis\.verdict\.fixedMaxRuns is no longer used and is ignored: .*fixedAlpha/)
    expect(warned[1]).toMatch(/analysis\.hints\.timeOfDayBucketHours is no longer used and is ignored/)
  })
})
