import type { EnvFacets, HistoryEntry, ResultStatus, RunInfo, TestHistory } from '../../src/model.js'

export const HOUR = 3_600_000
export const DAY = 24 * HOUR
export const T0 = Date.UTC(2025, 0, 1)

export interface EntryOptions {
  runId?: string
  at?: number
  revision?: string | null
  runner?: string | null
  env?: EnvFacets
  branch?: string | null
  jobStatus?: string | null
  pipelineStatus?: string | null
  message?: string | null
  errorType?: string | null
  durationMs?: number | null
  attempts?: number
  failedAttempts?: number
  failedAttemptsMs?: number
  flakyOnRetry?: boolean
  healingOccurred?: boolean
}

/**
 * Builds one test's history, oldest first: `history().pass().fail({ revision: 'a' }).seq('..F.').build()`.
 * Runs are 6 hours apart from 2025-01-01 and each gets its own revision unless told otherwise.
 */
export function history(testId = 'unit::mod.test.ts::t', stepMs = 6 * HOUR) {
  const entries: HistoryEntry[] = []
  let i = 0
  const add = (status: ResultStatus, o: EntryOptions = {}) => {
    const failed = status === 'failed' || status === 'error'
    const run: RunInfo = {
      runId: o.runId ?? `r${i}`,
      suite: 'unit',
      at: o.at ?? T0 + i * stepMs,
      branch: o.branch === undefined ? 'main' : o.branch,
      revision: o.revision === undefined ? `rev${i}` : o.revision,
      pipelineId: null,
      jobStatus: o.jobStatus ?? null,
      pipelineStatus: o.pipelineStatus ?? null,
      runnerId: o.runner === undefined ? 'ci-1' : o.runner,
      env: o.env ?? {},
      status: 'complete',
      pipelineUrl: null,
      artifactsUrl: null,
    }
    const failedAttempts = o.failedAttempts ?? (failed ? 1 : 0)
    entries.push({
      run,
      status,
      flakyOnRetry: o.flakyOnRetry ?? (!failed && failedAttempts > 0),
      durationMs: o.durationMs === undefined ? 100 : o.durationMs,
      attempts: o.attempts ?? Math.max(1, failedAttempts + (failed ? 0 : 1)),
      failedAttempts,
      failedAttemptsMs: o.failedAttemptsMs ?? failedAttempts * 100,
      errorType: o.errorType === undefined ? (failed ? 'AssertionError' : null) : o.errorType,
      message: o.message === undefined ? (failed ? 'expected 1 to equal 2' : null) : o.message,
      healingOccurred: o.healingOccurred ?? false,
    })
    i++
    return builder
  }
  const builder = {
    pass: (o?: EntryOptions) => add('passed', o),
    fail: (o?: EntryOptions) => add('failed', o),
    error: (o?: EntryOptions) => add('error', o),
    skip: (o?: EntryOptions) => add('skipped', o),
    /** A pass after `failed` failed attempts in the same run. */
    retryPass: (failed = 1, o?: EntryOptions) => add('passed', { failedAttempts: failed, ...o }),
    /** `.` pass, `F` fail, `E` error, `S` skip, `R` pass on retry; the same options for each. */
    seq: (pattern: string, o?: EntryOptions) => {
      for (const ch of pattern) {
        if (ch === '.') add('passed', o)
        else if (ch === 'F') add('failed', o)
        else if (ch === 'E') add('error', o)
        else if (ch === 'S') add('skipped', o)
        else if (ch === 'R') add('passed', { failedAttempts: 1, ...o })
      }
      return builder
    },
    /** One hour after the newest run: a natural `ctx.now`. */
    get now() {
      return entries.length === 0 ? T0 : entries[entries.length - 1]!.run.at + HOUR
    },
    build: (): TestHistory => ({
      test: { testId, suite: 'unit', module: 'mod.test.ts', name: testId.split('::').pop()!, file: null },
      entries,
    }),
  }
  return builder
}

/**
 * Hourly runs from T0 for `hours` hours: the test fails in the UTC hours [from, from + width), wrapping past
 * midnight, on alternate days (the even ones, or the odd ones with `oddDays`), and passes otherwise.
 */
export function windowFlake(testId: string, hours: number, from: number, width: number, oddDays = false) {
  const h = history(testId, HOUR)
  for (let i = 0; i < hours; i++) {
    const inWindow = ((i % 24) - from + 24) % 24 < width
    if (inWindow && Math.floor(i / 24) % 2 === (oddDays ? 1 : 0)) h.fail()
    else h.pass()
  }
  return h
}
