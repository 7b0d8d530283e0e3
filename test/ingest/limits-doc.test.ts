import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as limits from '../../src/limits.js'

/** The limits table in docs/ingest.md states the values src/limits.ts enforces. */
describe('docs/ingest.md limits table', () => {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'ingest.md'), 'utf8')
  const table = doc.slice(doc.indexOf('## Limits'), doc.indexOf('## Times'))
  const n = (x: number) => x.toLocaleString('en-US')

  it.each([
    ['attempts per result', limits.DEFAULT_MAX_ATTEMPTS_PER_RESULT],
    ['test cases per report', limits.MAX_CASES_PER_REPORT],
    ['runs per report', limits.MAX_RUNS_PER_REPORT],
    ['env facets per run', limits.MAX_FACETS],
    ['facet key or value', limits.MAX_FACET_TEXT],
    ['report files per command', limits.MAX_FILES_PER_COMMAND],
    ['test name, class or file', limits.MAX_NAME],
    ['XML nesting depth', limits.MAX_XML_DEPTH],
    ['JSON nesting depth', limits.MAX_JSON_DEPTH],
    ['JSON report size', limits.MAX_JSON_REPORT_BYTES],
    ['while parsing', limits.MAX_TEXT],
    ['stored of one message', limits.MAX_STORED_TEXT],
    ['one line of a line format', limits.MAX_LINE_CHARS],
    ['TAP subtest nesting', limits.MAX_TAP_DEPTH],
    ['tests open at once', limits.MAX_OPEN_TESTS],
    ['output held for running tests', limits.MAX_OPEN_OUTPUT],
  ])('%s: %d', (row, value) => {
    const line = table.split('\n').find((l) => l.includes(row))
    expect(line, row).toBeDefined()
    expect(line).toContain(n(value))
  })

  it('names the attempt ceiling', () => {
    expect(table).toContain(n(limits.MAX_ATTEMPTS_CEILING))
  })
})
