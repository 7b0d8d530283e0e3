import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseGoJson } from '../../src/ingest/go-json.js'
import { sourceFromBuffer, sourceFromFile } from '../../src/ingest/source.js'

/**
 * Issue 29: `go test -json` gives each package's own time in its pass/fail/skip event (no `Test` field). Fixtures:
 * `go-packages.json` is `go test -json ./...` (go 1.19) of a module with a passing package, a failing one and one
 * without test files; `go-test.json` is one failing package.
 */
const DIR = join(import.meta.dirname, '../fixtures/reports/go-json')

describe('go test -json package timings', () => {
  it('keeps each package’s time and verdict as the run’s timings', async () => {
    const r = await parseGoJson(sourceFromFile(join(DIR, 'go-packages.json')))
    expect(r.meta.timings).toEqual([
      { name: 'example.com/shop/cart', durationMs: 5, status: 'passed' },
      { name: 'example.com/shop/docs', durationMs: 0, status: 'skipped' },
      { name: 'example.com/shop/price', durationMs: 36, status: 'failed' },
    ])
    // The package times are not tests.
    expect(r.cases.map((c) => c.name)).toEqual(['TestTotal', 'TestEmpty/nil', 'TestEmpty', 'TestRound'])
    const one = await parseGoJson(sourceFromFile(join(DIR, 'go-test.json')))
    expect(one.meta.timings).toEqual([{ name: 'example.com/calc/calc', durationMs: 134, status: 'failed' }])
  })

  it('adds up a package given again (gotestsum --rerun-fails appends the rerun), its last verdict standing', async () => {
    const first = readFileSync(join(DIR, 'go-packages.json'), 'utf8')
    // The rerun of the failed package, as gotestsum appends it: the same package passing this time.
    const rerun = first
      .split('\n')
      .filter((l) => l.includes('"example.com/shop/price"'))
      .map((l) => l.replace('"Action":"fail"', '"Action":"pass"'))
      .join('\n')
    const r = await parseGoJson(sourceFromBuffer('rerun.json', Buffer.from(`${first}${rerun}\n`)))
    expect(r.meta.timings).toContainEqual({ name: 'example.com/shop/price', durationMs: 72, status: 'passed' })
    expect(r.meta.timings).toHaveLength(3)
  })
})
