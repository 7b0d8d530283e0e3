import type { TestAnalysis } from '../analysis/types.js'
import { compareText } from '../compare-text.js'

type Cell = string | number | boolean | null

const rate = (x: number | null): number | null => (x === null ? null : Math.round(x * 10_000) / 10_000)
const time = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** One column per metric, in output order. The header names are the CSV's contract: add columns at the end. */
export const ANALYSIS_CSV_COLUMNS = {
  test_id: (a) => a.testId,
  suite: (a) => a.test.suite,
  module: (a) => a.test.module,
  name: (a) => a.test.name,
  runs: (a) => a.runs,
  passes: (a) => a.passes,
  fails: (a) => a.failures,
  skipped: (a) => a.skipped,
  excluded_runs: (a) => a.excludedRuns,
  pass_rate: (a) => rate(a.passRate),
  flip_rate: (a) => rate(a.flipRate),
  ewma: (a) => rate(a.ewmaFlipRate),
  score: (a) => rate(a.score),
  confidence: (a) => rate(a.confidence),
  flip_rate_class: (a) => a.flipRateClass,
  pass_rate_class: (a) => a.passRateClass,
  verdict: (a) => a.verdict,
  reason: (a) => a.reason,
  recommendation: (a) => a.recommendation.action,
  priority: (a) => a.recommendation.priority,
  success_rate: (a) => rate(a.successRate),
  time_lost_ms: (a) => a.timeLostMs,
  last_status: (a) => a.lastStatus,
  first_run_at: (a) => time(a.firstRunAt),
  last_run_at: (a) => time(a.lastRunAt),
} satisfies Record<string, (a: TestAnalysis) => Cell>

// OWASP's list: a spreadsheet treats a cell starting with one of these as a formula (= + - @), or strips the
// tab/CR before doing so. A test name is attacker-chosen text, so it must never run as a formula.
const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break, with quotes doubled. Text that a
 * spreadsheet would run as a formula gets a leading `'`. Numbers are written as they are (a negative number is
 * data, not a formula); null is empty.
 * @example csvCell('=HYPERLINK("x")') // `"'=HYPERLINK(""x"")"`
 */
export function csvCell(value: Cell): string {
  if (value === null) return ''
  if (typeof value !== 'string') return String(value)
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * Rows to CSV text, CRLF line ends as RFC 4180 has them (every spreadsheet reads them).
 * @example toCsv([['a', 'b'], [1, null]]) // 'a,b\r\n1,\r\n'
 */
export function toCsv(rows: Iterable<readonly Cell[]>): string {
  let out = ''
  for (const row of rows) out += `${row.map(csvCell).join(',')}\r\n`
  return out
}

/** The CSV's header line, CRLF included. */
export function analysisCsvHeader(): string {
  return toCsv([Object.keys(ANALYSIS_CSV_COLUMNS)])
}

/** One test's CSV line, CRLF included. */
export function analysisCsvLine(a: TestAnalysis): string {
  return toCsv([COLUMNS.map((get) => get(a))])
}

const COLUMNS = Object.values(ANALYSIS_CSV_COLUMNS) as ((a: TestAnalysis) => Cell)[]

/**
 * One row per test with its metrics, in test-id order so that two exports diff cleanly.
 * @example writeFileSync('tests.csv', analysesToCsv(await analyzeStore(store)))
 */
export function analysesToCsv(analyses: readonly TestAnalysis[]): string {
  const sorted = [...analyses].sort((a, b) => compareText(a.testId, b.testId))
  let out = analysisCsvHeader()
  for (const a of sorted) out += analysisCsvLine(a)
  return out
}
