import { ReportLimitError } from '../errors.js'
import { DEFAULT_MAX_ATTEMPTS_PER_RESULT } from '../limits.js'
import type { RunMeta } from '../model.js'

/** What a report has done with one test of one run so far. */
export const Seen = {
  No: 0,
  /** Written by this report: a repeat is folded into it. */
  Written: 1,
  /** Another report of the run had it first: this report's repeats are skipped too. */
  Skipped: 2,
} as const
export type Seen = (typeof Seen)[keyof typeof Seen]

/**
 * Per test key, what this report did with it, in one byte per key: the only per-test state a streamed report
 * keeps, so that a report of a million tests costs a megabyte here, not a map of strings.
 */
export class SeenTests {
  private bytes = new Uint8Array(1024)

  get(key: number): Seen {
    return key < this.bytes.length ? (this.bytes[key] as Seen) : Seen.No
  }

  set(key: number, seen: Seen): void {
    if (key >= this.bytes.length) {
      let size = this.bytes.length * 2
      while (size <= key) size *= 2
      const grown = new Uint8Array(size)
      grown.set(this.bytes)
      this.bytes = grown
    }
    this.bytes[key] = seen
  }
}

/** One run of a streamed report, as a store's writer tracks it. */
export interface RunState {
  runId: string
  /** The run's integer key. */
  key: number
  /** The `at` its results carry. */
  at: number
  created: boolean
  replacing: boolean
  duplicate: boolean
  /** The metadata the run was created or claimed with. */
  claimedWith: RunMeta
  seen: SeenTests
  tests: number
  results: number
  attempts: number
}

/** The attempt limit a writer applies, from the ingest options. */
export function attemptLimit(opts: { maxAttemptsPerResult?: number }): number {
  return opts.maxAttemptsPerResult ?? DEFAULT_MAX_ATTEMPTS_PER_RESULT
}

/** Refuses a result whose attempts (after folding repeats) pass the limit. */
export function checkAttempts(file: string, testId: string, attempts: number, max: number): void {
  if (attempts > max) {
    const shown = testId.length > 120 ? `${testId.slice(0, 120)}…` : testId
    throw new ReportLimitError(file, `attempts of "${shown}"`, max, attempts, ' (raise it with --max-attempts)')
  }
}
