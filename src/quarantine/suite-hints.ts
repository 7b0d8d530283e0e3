import { TEST_ID_SEPARATOR } from '../model.js'
import type { GateEntry } from './gate.js'

/** How to fix a suite mismatch: said in every hint, so that nobody has to look it up. */
export const SUITE_FIX = '--suite <name> (or FLAKEWATCH_SUITE, or the reporter’s `suite` option)'

/** At most this many failing tests are named in one hint: the point is made by the first few. */
const MAX_NAMED = 5

const suiteOf = (testId: string) => testId.slice(0, Math.max(0, testId.indexOf(TEST_ID_SEPARATOR)))
const withoutSuite = (testId: string) => testId.slice(testId.indexOf(TEST_ID_SEPARATOR))

export interface SuiteHintInput {
  /** Suites of this job's results. */
  reportSuites: ReadonlySet<string>
  /** Suites the store or the quarantine file knows (null: unknown, say nothing about overlap). */
  knownSuites: ReadonlySet<string> | null
  /** Where `knownSuites` came from, for the message: "the store", "the quarantine file". */
  knownFrom: string
  /** Ids quarantined one by one. */
  quarantinedIds: Iterable<string>
  /** The failures nothing forgave. */
  blocking: readonly GateEntry[]
}

/**
 * Plain-language warnings when a report and the quarantines disagree only by suite, which otherwise shows as a
 * gate failing "for no reason": ids ingested as `unit::…` are gated as `default::…` when `--suite` is forgotten.
 * Pure.
 * @example suiteHints({ reportSuites: new Set(['default']), knownSuites: new Set(['unit']), knownFrom: 'the store', quarantinedIds: [], blocking: [] })
 */
export function suiteHints(input: SuiteHintInput): string[] {
  const hints: string[] = []
  const report = [...input.reportSuites].sort()
  const known = input.knownSuites ? [...input.knownSuites].sort() : []
  if (report.length > 0 && known.length > 0 && !report.some((s) => input.knownSuites!.has(s))) {
    hints.push(
      `this report's tests are in suite ${report.map((s) => `"${s}"`).join(', ')}, but ${input.knownFrom} knows only ` +
        `${known.map((s) => `"${s}"`).join(', ')}: no quarantine can match. Name the suite with ${SUITE_FIX}.`,
    )
  }
  const byRest = new Map<string, string[]>()
  for (const id of input.quarantinedIds) {
    const rest = withoutSuite(id)
    const list = byRest.get(rest) ?? []
    list.push(id)
    byRest.set(rest, list)
  }
  const near: string[] = []
  for (const b of input.blocking) {
    const other = byRest.get(withoutSuite(b.test_id))?.find((id) => id !== b.test_id)
    if (other) near.push(`${b.test_id} is not quarantined, but ${other} is (suite "${suiteOf(other)}")`)
  }
  if (near.length > 0) {
    const more = near.length > MAX_NAMED ? `; and ${near.length - MAX_NAMED} more` : ''
    hints.push(
      `${near.slice(0, MAX_NAMED).join('; ')}${more}. The ids differ only by suite: name it with ${SUITE_FIX}.`,
    )
  }
  return hints
}
