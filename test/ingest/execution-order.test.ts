import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rankByKey } from '../../src/ingest/execution-order.js'
import { parseReport } from '../../src/ingest/parse-report.js'
import { sourceFromBuffer, sourceFromFile } from '../../src/ingest/source.js'
import type { ParsedCase } from '../../src/ingest/types.js'
import { buildReportBatch } from '../../src/pipeline/build-batch.js'

const PUBLIC = join(import.meta.dirname, '..', 'fixtures', 'public')

/** The cases' names in the order their positions give. */
function byPosition(cases: ParsedCase[]): string[] {
  return cases
    .map((c) => [c.position!, `${c.module} :: ${c.name}`] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, n]) => n)
}

/** The same names sorted by the start times the test reads from the file itself, report order on ties. */
function byStart(cases: ParsedCase[], starts: number[]): string[] {
  return cases
    .map((c, i) => [starts[i]!, i, `${c.module} :: ${c.name}`] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, , n]) => n)
}

describe('rankByKey', () => {
  it('ranks by key with report order breaking ties, and gives up on a missing or broken key', () => {
    expect(rankByKey([30, 10, 20, 10])).toEqual([3, 0, 2, 1])
    expect(rankByKey([])).toEqual([])
    expect(rankByKey([1, null, 2])).toBeNull()
    expect(rankByKey([1, NaN])).toBeNull()
    expect(rankByKey([1, Infinity])).toBeNull()
  })
})

describe('execution positions from the reports’ start times', () => {
  it('Playwright JSON: the first try’s startTime', async () => {
    const file = join(PUBLIC, 'playwright-json', 'aerchain-results.json')
    const report = await parseReport(sourceFromFile(file))
    // Every try has a startTime; the last one in the file is the run's (`stats`).
    const starts = [...readFileSync(file, 'utf8').matchAll(/"startTime": "([^"]+)"/g)]
      .slice(0, -1)
      .map((m) => Date.parse(m[1]!))
    expect(report.cases).toHaveLength(starts.length)
    expect(report.cases.map((c) => c.position).sort()).toEqual([0, 1])
    expect(byPosition(report.cases)).toEqual(byStart(report.cases, starts))
  })

  it('TRX: each UnitTestResult’s startTime, seven decimals and an offset included', async () => {
    const file = join(PUBLIC, 'dotnet-trx', 'xunit-dotnet.trx')
    const report = await parseReport(sourceFromFile(file))
    const starts = [...readFileSync(file, 'utf8').matchAll(/<UnitTestResult [^>]*startTime="([^"]+)"/g)].map((m) =>
      Date.parse(m[1]!),
    )
    expect(starts.every(Number.isFinite)).toBe(true)
    expect(report.cases).toHaveLength(starts.length)
    expect(new Set(report.cases.map((c) => c.position)).size).toBe(report.cases.length)
    expect(byPosition(report.cases)).toEqual(byStart(report.cases, starts))
    expect(report.cases.map((c) => c.position)).not.toEqual(report.cases.map((_, i) => i))
  })

  it('CTRF: a test’s start, or flakewatch’s own sequence where every test has one', async () => {
    const ctrf = (tests: object[]) => JSON.stringify({ results: { tool: { name: 'vitest' }, tests } })
    const t = (name: string, extra: object) => ({ name, status: 'passed', duration: 1, suite: 'f.test.ts', ...extra })
    const started = await parseReport(
      sourceFromBuffer('ctrf.json', ctrf([t('a', { start: 300 }), t('b', { start: 100 }), t('c', { start: 200 })])),
    )
    expect(started.cases.map((c) => c.position)).toEqual([2, 0, 1])
    // Start times tie for quick tests; the reporter's sequence does not.
    const sequenced = await parseReport(
      sourceFromBuffer(
        'ctrf.json',
        ctrf([
          t('a', { start: 100, extra: { position: 2 } }),
          t('b', { start: 100, extra: { position: 0 } }),
          t('c', { start: 100, extra: { position: 1 } }),
        ]),
      ),
    )
    expect(sequenced.cases.map((c) => c.position)).toEqual([2, 0, 1])
    // A hostile value is ranked like any other: what is stored stays a small integer.
    const hostile = await parseReport(
      sourceFromBuffer(
        'ctrf.json',
        ctrf([t('a', { extra: { position: 1e308 } }), t('b', { extra: { position: -5 } })]),
      ),
    )
    expect(hostile.cases.map((c) => c.position)).toEqual([1, 0])
    // Incomplete start times say nothing; the report's order is taken when the batch is built.
    const partial = await parseReport(sourceFromBuffer('ctrf.json', ctrf([t('a', { start: 5 }), t('b', {})])))
    expect(partial.cases.map((c) => c.position)).toEqual([undefined, undefined])
  })

  it('JUnit and others without start times: the order the report lists its tests in', async () => {
    const xml = `<testsuites><testsuite name="s"><testcase classname="m" name="z"/><testcase classname="m" name="a"/>
      <testcase classname="n" name="b"/></testsuite></testsuites>`
    const parsed = await parseReport(sourceFromBuffer('junit.xml', xml))
    const batch = buildReportBatch({ parsed, file: 'junit.xml', contentHash: 'h', context: { runId: 'r1' } })
    expect(batch.runs[0]!.results.map((r) => [r.test.name, r.position])).toEqual([
      ['z', 0],
      ['a', 1],
      ['b', 2],
    ])
  })
})
