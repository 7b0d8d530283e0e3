import { expect } from 'vitest'
import { ReportLimitError, ReportParseError } from '../../src/errors.js'
import { parseReport, sourceFromBuffer, type Format } from '../../src/ingest/index.js'
import type { ParsedCase, ParsedReport, ReportSource } from '../../src/ingest/types.js'
import type { ResultStatus } from '../../src/model.js'

/** Cases per final status, only the statuses that occur. */
export function countByStatus(cases: ParsedCase[]): Partial<Record<ResultStatus, number>> {
  const counts: Partial<Record<ResultStatus, number>> = {}
  for (const c of cases) counts[c.status] = (counts[c.status] ?? 0) + 1
  return counts
}

/** The one case with this name (and module, when given); fails loudly when there is not exactly one. */
export function caseNamed(report: ParsedReport, name: string, module?: string): ParsedCase {
  const found = report.cases.filter((c) => c.name === name && (module === undefined || c.module === module))
  if (found.length !== 1) throw new Error(`expected one case "${name}", found ${found.length}`)
  return found[0]!
}

/** A compact, stable view of a report for snapshots: counts, meta and a one-line digest per case. */
export function summarize(report: ParsedReport, maxCases = 12): unknown {
  return {
    format: report.format,
    cases: report.cases.length,
    attempts: report.cases.reduce((n, c) => n + c.attempts.length, 0),
    statuses: countByStatus(report.cases),
    flakyOnRetry: report.cases.filter((c) => c.flakyOnRetry).length,
    meta: report.meta,
    first: report.cases.slice(0, maxCases).map((c) => {
      const env = c.env
        ? ` {${Object.entries(c.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(',')}}`
        : ''
      const attempts = c.attempts.map((a) => a.status[0]).join('')
      const message = c.message ? ` "${c.message.split('\n')[0]!.slice(0, 80)}"` : ''
      return `${c.status}${c.flakyOnRetry ? '(flaky)' : ''} [${attempts}] ${c.module} :: ${c.name}${env}${message}`
    }),
  }
}

/** A source that hands out the text in chunks of a fixed size, to test chunk boundaries. */
export function chunkedSource(name: string, text: string, size: number): ReportSource {
  return {
    name,
    async *chunks() {
      for (let i = 0; i < text.length; i += size) yield await Promise.resolve(text.slice(i, i + size))
    },
    text: () => Promise.resolve(text),
  }
}

/**
 * The error parsing `content` as a report named `name` gives: a parse or limit error that names the file first.
 * Any other outcome (success, another error) fails the test.
 * @example expect(await refused('deep.json', deep)).toMatchObject({ line: 2 })
 */
export async function refused(
  name: string,
  content: string | Buffer,
  format?: Format,
): Promise<ReportParseError | ReportLimitError> {
  const error: unknown = await parseReport(sourceFromBuffer(name, content), { format }).then(
    () => new Error(`${name} parsed without error`),
    (e: unknown) => e,
  )
  if (!(error instanceof ReportParseError) && !(error instanceof ReportLimitError)) throw error
  expect(error.file).toBe(name)
  expect(error.message.startsWith(name)).toBe(true)
  return error
}
