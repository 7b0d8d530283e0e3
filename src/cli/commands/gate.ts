import { appendFileSync, writeFileSync } from 'node:fs'
import type { Format } from '../../ingest/formats.js'
import { parseReport } from '../../ingest/parse-report.js'
import { sourceFromFile } from '../../ingest/source.js'
import type { Result } from '../../model.js'
import { buildReportBatch } from '../../pipeline/build-batch.js'
import { expandInputs, hashFile } from '../../pipeline/ingest-files.js'
import { gate, type GateResult } from '../../quarantine/gate.js'
import { formatJunit } from '../../quarantine/junit-out.js'
import type { QuarantineRecord } from '../../store/store.js'
import { InputError } from '../../errors.js'
import { emitJson, renderMarkdownTable, sanitizeCell, type Io } from '../output.js'
import { runContextFromFlags, type RunFlags } from './ingest.js'

export interface GateCommandOptions extends RunFlags {
  db?: string
  format?: Format
  quarantineFile?: string
  failOnFlaky?: boolean
  junitOut?: string
  ingest?: boolean
  json?: boolean
  output?: string
}

/** Reads the job's reports into results with the same test ids the store uses. Bad input throws (exit 2). */
export async function readJobResults(inputs: string[], opts: GateCommandOptions, io: Io): Promise<Result[]> {
  const { files, missing } = await expandInputs(inputs)
  if (missing.length) throw new InputError(`no report matches ${missing.map((m) => `"${m}"`).join(', ')}`)
  const context = runContextFromFlags(opts, io.env)
  const results: Result[] = []
  for (const file of files) {
    const parsed = await parseReport(sourceFromFile(file), { format: opts.format })
    const hash = await hashFile(file)
    for (const run of buildReportBatch({ parsed, file, contentHash: hash, context }).runs) results.push(...run.results)
  }
  return results
}

async function loadQuarantines(opts: GateCommandOptions, io: Io): Promise<Map<string, QuarantineRecord>> {
  let records: QuarantineRecord[]
  if (opts.quarantineFile) {
    const { readQuarantineFile } = await import('../../quarantine/file.js')
    records = readQuarantineFile(opts.quarantineFile)
  } else {
    const { openStore } = await import('../../store/open.js')
    const store = await openStore({ db: opts.db, env: io.env, readOnly: true })
    try {
      records = await store.listQuarantines()
    } finally {
      await store.close()
    }
  }
  return new Map(records.map((r) => [r.testId, r]))
}

export interface GateOutcome {
  result: GateResult
  results: Result[]
}

/** Reads reports and quarantines, and decides. The exit code is the caller's: 0 pass, 1 fail. */
export async function runGate(inputs: string[], opts: GateCommandOptions, io: Io): Promise<GateOutcome> {
  const results = await readJobResults(inputs, opts, io)
  const quarantines = await loadQuarantines(opts, io)
  const result = gate(results, quarantines, { failOnFlaky: opts.failOnFlaky })
  if (opts.junitOut) writeFileSync(opts.junitOut, formatJunit(results, quarantines))
  if (opts.ingest) {
    const { ingest, printIngest } = await import('./ingest.js')
    const summary = await ingest(inputs, { ...opts, json: false, output: undefined }, io)
    printIngest(summary, { json: false }, { ...io, stdout: io.stderr })
  }
  if (io.env.GITHUB_STEP_SUMMARY) appendFileSync(io.env.GITHUB_STEP_SUMMARY, gateMarkdown(result))
  return { result, results }
}

const line = (e: { test_id: string; message: string | null }) =>
  `  ${sanitizeCell(e.test_id)}${e.message ? `\n      ${sanitizeCell(e.message.split('\n')[0] ?? '').slice(0, 200)}` : ''}`

export function printGate(result: GateResult, opts: GateCommandOptions, io: Io): void {
  if (opts.json) {
    const { verdict, blocking, quarantined, flaky } = result
    return emitJson(io, { verdict, blocking, quarantined, flaky, totals: result.totals }, opts.output)
  }
  const out: string[] = []
  const t = result.totals
  out.push(
    `flakewatch gate: ${result.verdict.toUpperCase()} (${t.tests} tests: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped)`,
  )
  if (result.blocking.length) out.push(`\nBlocking failures (${result.blocking.length}):`, ...result.blocking.map(line))
  if (result.quarantined.length) {
    out.push(`\nQuarantined failures, not blocking (${result.quarantined.length}):`)
    for (const q of result.quarantined) {
      out.push(
        `  ${sanitizeCell(q.test_id)}\n      reason: ${sanitizeCell(q.reason)}; owner: ${sanitizeCell(q.owner ?? '–')}${q.expires_at ? `; expires ${q.expires_at.slice(0, 10)}` : ''}`,
      )
    }
  }
  if (result.flaky.length) out.push(`\nPassed on retry (${result.flaky.length}):`, ...result.flaky.map(line))
  io.stdout.write(`${out.join('\n')}\n`)
}

/** The GitHub step summary. Test names are untrusted: pipes and HTML are escaped. */
export function gateMarkdown(result: GateResult): string {
  const esc = (s: string) => s.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!)
  const parts = [`## flakewatch gate: ${result.verdict === 'pass' ? '✅ pass' : '❌ fail'}\n`]
  parts.push(
    `${result.totals.tests} tests, ${result.totals.failed} failed, ${result.quarantined.length} quarantined, ${result.flaky.length} passed on retry\n`,
  )
  if (result.blocking.length) {
    parts.push(
      '### Blocking failures\n',
      renderMarkdownTable(
        ['test', 'message'],
        result.blocking.map((b) => [esc(b.test_id), esc((b.message ?? '').split('\n')[0]!.slice(0, 200))]),
      ),
      '',
    )
  }
  if (result.quarantined.length) {
    parts.push(
      '### Quarantined failures\n',
      renderMarkdownTable(
        ['test', 'reason', 'owner', 'expires'],
        result.quarantined.map((q) => [
          esc(q.test_id),
          esc(q.reason),
          esc(q.owner ?? ''),
          q.expires_at?.slice(0, 10) ?? '',
        ]),
      ),
      '',
    )
  }
  if (result.flaky.length) parts.push('### Passed on retry\n', ...result.flaky.map((f) => `- ${esc(f.test_id)}`), '')
  return `${parts.join('\n')}\n`
}
