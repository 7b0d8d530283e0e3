import { describe, expect, it } from 'vitest'
import { analyzeTest } from '../../src/analysis/analyze-test.js'
import { resolveAnalysisConfig } from '../../src/analysis/resolve-analysis-config.js'
import { ANALYSIS_CSV_COLUMNS, analysesToCsv, csvCell, toCsv } from '../../src/export/analysis-csv.js'
import type { RunInfo, TestHistory } from '../../src/model.js'

/** A minimal RFC 4180 reader, so that the tests check what a spreadsheet would see, not our own string layout. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  const endCell = () => {
    row.push(cell)
    cell = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') endCell()
    else if (c === '\r' && text[i + 1] === '\n') {
      endCell()
      rows.push(row)
      row = []
      i++
    } else cell += c
  }
  return rows
}

describe('csvCell', () => {
  it('quotes commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvCell('plain')).toBe('plain')
    expect(csvCell('a,b')).toBe('"a,b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('two\nlines')).toBe('"two\nlines"')
    expect(csvCell(' padded ')).toBe('" padded "')
    expect(csvCell(null)).toBe('')
    expect(csvCell(0.25)).toBe('0.25')
    expect(csvCell(true)).toBe('true')
  })

  it('defuses formula injection: text starting with = + - @ (or tab/CR) gets a leading quote', () => {
    expect(csvCell('=1+1')).toBe("'=1+1")
    expect(csvCell('+SUM(A1)')).toBe("'+SUM(A1)")
    expect(csvCell('-2+3')).toBe("'-2+3")
    expect(csvCell('@cmd')).toBe("'@cmd")
    expect(csvCell('\t=x')).toBe("'\t=x")
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`)
    // Only text: a number is data.
    expect(csvCell(-1)).toBe('-1')
    expect(csvCell('a=b')).toBe('a=b')
  })

  it('toCsv round-trips through an RFC 4180 reader', () => {
    const rows = [
      ['id', 'note'],
      ['x', 'a,"b"\nc'],
      ['y', null],
    ]
    expect(parseCsv(toCsv(rows))).toEqual([
      ['id', 'note'],
      ['x', 'a,"b"\nc'],
      ['y', ''],
    ])
  })
})

describe('analysesToCsv', () => {
  const run = (i: number): RunInfo => ({
    runId: `r${i}`,
    suite: 'unit',
    at: Date.UTC(2026, 0, 1) + i * 86_400_000,
    branch: 'main',
    revision: null,
    pipelineId: null,
    jobStatus: null,
    pipelineStatus: null,
    runnerId: null,
    env: {},
    status: 'complete',
    pipelineUrl: null,
    artifactsUrl: null,
  })
  const history = (name: string, statuses: ('passed' | 'failed')[]): TestHistory => ({
    test: { testId: `unit::mod.ts::${name}`, suite: 'unit', module: 'mod.ts', name, file: null },
    entries: statuses.map((status, i) => ({
      run: run(i),
      status,
      flakyOnRetry: false,
      durationMs: 10,
      attempts: 1,
      failedAttempts: status === 'failed' ? 1 : 0,
      failedAttemptsMs: status === 'failed' ? 10 : 0,
      errorType: null,
      message: null,
      healingOccurred: false,
    })),
  })

  it('writes a header and one row per test, in test-id order, with every metric', () => {
    const cfg = resolveAnalysisConfig()
    const now = Date.UTC(2026, 0, 12)
    const analyses = [
      analyzeTest(history('=cmd|calc', ['passed', 'failed', 'passed', 'failed', 'passed', 'passed']), cfg, { now }),
      analyzeTest(history('adds, "quoted"', ['passed', 'passed', 'passed', 'passed', 'passed', 'passed']), cfg, {
        now,
      }),
    ]
    const rows = parseCsv(analysesToCsv(analyses))
    expect(rows[0]).toEqual(Object.keys(ANALYSIS_CSV_COLUMNS))
    expect(rows[0]!.slice(0, 15)).toEqual([
      'test_id',
      'suite',
      'module',
      'name',
      'runs',
      'passes',
      'fails',
      'skipped',
      'excluded_runs',
      'pass_rate',
      'flip_rate',
      'ewma',
      'score',
      'confidence',
      'flip_rate_class',
    ])
    expect(rows).toHaveLength(3)
    const col = (name: string) => rows[0]!.indexOf(name)
    // '=' sorts before 'a': the injected name comes first.
    const [injected, plain] = [rows[1]!, rows[2]!]
    expect(injected[col('test_id')]).toBe('unit::mod.ts::=cmd|calc')
    expect(injected[col('name')]).toBe("'=cmd|calc")
    expect(plain[col('name')]).toBe('adds, "quoted"')
    expect(injected.slice(col('runs'), col('fails') + 1)).toEqual(['6', '4', '2'])
    expect(injected[col('pass_rate')]).toBe('0.6667')
    expect(injected[col('verdict')]).toBe(analyses[0]!.verdict)
    expect(plain[col('verdict')]).toBe(analyses[1]!.verdict)
    expect(injected[col('last_run_at')]).toBe('2026-01-06T00:00:00.000Z')
  })
})
