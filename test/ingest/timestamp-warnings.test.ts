import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReport } from '../../src/ingest/parse-report.js'
import { sourceFromBuffer } from '../../src/ingest/source.js'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

describe('every timestamp a parser ignores is a warning that names it (issue 33)', () => {
  it('names the placeholders gotestsum writes (0001-01-01), counted, in a streaming format', async () => {
    const text = readFileSync(join(FIXTURES, 'public', 'gotestsum', 'junitxml-report.xml'))
    const r = await parseReport(sourceFromBuffer('gotestsum.xml', text))
    expect(r.meta.startedAt).toBeUndefined()
    const suites = (text.toString().match(/timestamp="0001-01-01T00:00:00Z"/g) ?? []).length
    expect(r.warnings).toEqual([
      `${suites} timestamp(s) before 1980 ignored as placeholders (first: "0001-01-01T00:00:00Z"); the run's times come from the rest of the report, else the ingest time`,
    ])
  })

  it('names them in a format parsed whole, too, and keeps the dates it trusts', async () => {
    const doc = {
      results: {
        tool: { name: 'pw' },
        summary: { start: 0, stop: 1_700_000_005_000 },
        tests: [{ name: 'a', status: 'passed', duration: 1 }],
      },
    }
    const r = await parseReport(sourceFromBuffer('ctrf.json', JSON.stringify(doc)), { format: 'ctrf' })
    expect(r.meta.finishedAt).toBe('2023-11-14T22:13:25.000Z')
    expect(r.warnings?.join('\n')).toMatch(/1 timestamp\(s\) before 1980 ignored as placeholders \(first: "0"\)/)
  })

  it('says nothing when every timestamp is a date', async () => {
    const xml = '<testsuite name="s" timestamp="2026-03-01T10:00:00Z"><testcase classname="c" name="a"/></testsuite>'
    expect((await parseReport(sourceFromBuffer('ok.xml', xml))).warnings).toBeUndefined()
  })
})
