import { parseReport } from '../ingest/parse-report.js'
import { sourceFromBuffer } from '../ingest/source.js'
import type { RunStatus } from '../model.js'
import {
  caseKey,
  HEALED_ANNOTATION,
  type CaseAnnotation,
  type RecordedCase,
  type RecordedReport,
} from './build-cases.js'

/** Playwright's per-attempt statuses (`TestResult.status`). */
export type PlaywrightAttemptStatus = 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted'

export interface PlaywrightError {
  message?: string
  stack?: string
}

/** One attempt (`TestResult`) of a Playwright test, as plain data. */
export interface PlaywrightAttempt {
  retry: number
  status: PlaywrightAttemptStatus
  duration: number
  /** When the attempt started: orders the tests of a file, which the report lists as they ended. */
  startTime?: Date
  error?: PlaywrightError
  errors: PlaywrightError[]
  annotations: CaseAnnotation[]
}

/** One Playwright test (`TestCase`) in one project, with every attempt the reporter saw. */
export interface PlaywrightTestRecord {
  project: string
  /** The spec file relative to the config's `rootDir`, with `/` separators, as Playwright's JSON report has it. */
  file: string
  /** Describe titles, outermost first; an anonymous describe is an empty title, as in the JSON report. */
  describes: string[]
  title: string
  expectedStatus: PlaywrightAttemptStatus
  outcome: 'skipped' | 'expected' | 'unexpected' | 'flaky'
  tags: string[]
  annotations: CaseAnnotation[]
  attempts: PlaywrightAttempt[]
}

export interface PlaywrightRunInfo {
  startTime: Date
  durationMs: number
  status: RunStatus
  /** `config.metadata`: string values are run properties (revision, branch…) as in the JSON report. */
  metadata?: Record<string, unknown>
}

/** The name the reporter's report goes by, in parse errors and as the batch's provenance. */
export const PLAYWRIGHT_SOURCE = 'flakewatch/playwright/reporter'

/**
 * The subset of Playwright's JSON report that `flakewatch ingest` reads, built from what the reporter saw. Each
 * test gets its own chain of suites so that the parser's output keeps the records' order.
 * @example toPlaywrightJson([record], { startTime, durationMs: 1200, status: 'complete' })
 */
export function toPlaywrightJson(records: PlaywrightTestRecord[], run: PlaywrightRunInfo): unknown {
  const suites = records.map((r) => {
    const spec = {
      title: r.title,
      file: r.file,
      tests: [
        {
          projectName: r.project,
          expectedStatus: r.expectedStatus,
          status: r.outcome,
          results: r.attempts.map((a) => ({
            retry: a.retry,
            status: a.status,
            duration: a.duration,
            ...(a.startTime ? { startTime: a.startTime.toISOString() } : {}),
            error: a.error ? plainError(a.error) : undefined,
            errors: a.errors.map(plainError),
          })),
        },
      ],
    }
    let specs: unknown[] = [spec]
    let below: unknown[] | undefined
    for (let i = r.describes.length - 1; i >= 0; i--) {
      below = [{ title: r.describes[i]!, file: r.file, specs, suites: below }]
      specs = []
    }
    return { title: r.file, file: r.file, specs, suites: below }
  })
  return {
    config: { metadata: run.metadata ?? {} },
    suites,
    stats: { startTime: run.startTime.toISOString(), duration: run.durationMs },
  }
}

const plainError = (e: PlaywrightError): PlaywrightError => ({ message: e.message, stack: e.stack })

/**
 * Turns Playwright tests into cases through the Playwright JSON parser itself, so that statuses, `test.fail()`
 * expectations, timeouts, attempt numbering, flakiness and merged repeats follow the one rule `flakewatch ingest`
 * applies to the same run's JSON report. Then adds what the JSON parser does not keep: the healing annotation,
 * tags and annotations.
 * @example const report = await playwrightReport(records, { startTime, durationMs, status: 'complete' })
 */
export async function playwrightReport(
  records: PlaywrightTestRecord[],
  run: PlaywrightRunInfo,
): Promise<RecordedReport> {
  const json = JSON.stringify(toPlaywrightJson(records, run))
  const parsed = await parseReport(sourceFromBuffer(PLAYWRIGHT_SOURCE, json), { format: 'playwright-json' })
  const extras = new Map<string, { healed: boolean; tags: Set<string>; annotations: Map<string, CaseAnnotation> }>()
  for (const r of records) {
    const key = caseKey(r.file, [...r.describes, r.title].join(' › '), r.project || undefined)
    let extra = extras.get(key)
    if (!extra) extras.set(key, (extra = { healed: false, tags: new Set(), annotations: new Map() }))
    for (const t of r.tags) extra.tags.add(t.replace(/^@/, ''))
    for (const a of [...r.annotations, ...r.attempts.flatMap((x) => x.annotations)]) {
      if (a.type === HEALED_ANNOTATION) extra.healed = true
      const kept = { type: a.type, ...(a.description ? { description: a.description } : {}) }
      extra.annotations.set(`${a.type}\u0000${a.description ?? ''}`, kept)
    }
  }
  const cases: RecordedCase[] = parsed.cases.map((c) => {
    const extra = extras.get(caseKey(c.module, c.name, c.env?.project))
    return {
      ...c,
      healingOccurred: c.healingOccurred || (extra?.healed ?? false),
      tags: extra ? [...extra.tags] : [],
      annotations: extra ? [...extra.annotations.values()] : [],
    }
  })
  return { ...parsed, cases, meta: { ...parsed.meta, status: run.status } }
}
