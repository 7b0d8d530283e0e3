import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import type { Format } from '../../ingest/formats.js'
import { streamReport } from '../../ingest/parse-report.js'
import type { ParsedStream } from '../../ingest/types.js'
import { isFailure, type Result } from '../../model.js'
import { buildReportStream } from '../../pipeline/build-batch.js'
import { IdentityReconciler, idsAsIdentitySource } from '../../pipeline/reconcile-ids.js'
import { expandInputs, openReportFile } from '../../pipeline/ingest-files.js'
import type { QuarantineSet } from '../../quarantine/file.js'
import {
  createForgiver,
  gate,
  type Forgiver,
  type GateResult,
  type GateTotals,
  type RunScope,
} from '../../quarantine/gate.js'
import { formatJunit, skipMessage } from '../../quarantine/junit-out.js'
import { rewriteJunit } from '../../quarantine/junit-rewrite.js'
import { ReportTally } from '../../quarantine/report-tally.js'
import { suiteHints } from '../../quarantine/suite-hints.js'
import { InputError } from '../../errors.js'
import { emitJson, renderMarkdownTable, sanitizeCell, useColor, type Io } from '../output.js'
import { createPainter } from '../color.js'
import { projectStoreFlags, type StoreFlags } from '../project-option.js'
import { repoRootFromFlags, runContextFromFlags, type RunFlags } from './ingest.js'
import { appendAll } from '../../extent.js'

export interface GateCommandOptions extends RunFlags, StoreFlags {
  format?: Format
  quarantineFile?: string
  failOnFlaky?: boolean
  junitOut?: string
  ingest?: boolean
  /** Also post the pull-request comment; a posting problem is a warning, never the gate's verdict. */
  comment?: boolean
  /** A job with no test at all passes instead of failing with exit 2. */
  allowEmpty?: boolean
  json?: boolean
  output?: string
}

/** The job's results, each with the run it came from (for rules on branch and facets). */
export interface JobResults {
  /** Every result of the job, counted (repeats of a test in one run folded, as ingest folds them). */
  totals: GateTotals
  /** The results that can matter to the gate (failed, errored, passed on retry), or all of them with `all`. */
  results: Result[]
  scopes: Map<Result, RunScope>
  /** The suites of the job's results. */
  suites: Set<string>
  /** The JUnit reports, read case by case, or null when a report is not JUnit. */
  junit: { file: string; tally: ReportTally }[] | null
}

/**
 * Reads the job's reports into results with the same test ids the store uses. Reports stream: a passing test
 * costs a few bytes (see `ReportTally`), so that a job of a million tests gates in bounded memory; `all` keeps
 * every result instead (for `list`). Bad input throws (exit 2).
 */
export async function readJobResults(
  inputs: string[],
  opts: GateCommandOptions,
  io: Io,
  { all = false }: { all?: boolean } = {},
): Promise<JobResults> {
  const { files, missing } = await expandInputs(inputs)
  if (missing.length) throw new InputError(`no report matches ${missing.map((m) => `"${m}"`).join(', ')}`)
  const context = runContextFromFlags(opts, io.env)
  const root = repoRootFromFlags(opts, io.env)
  const job: JobResults = {
    totals: { tests: 0, passed: 0, failed: 0, skipped: 0 },
    results: [],
    scopes: new Map(),
    suites: new Set(),
    junit: [],
  }
  for (const file of files) {
    const { source, hash } = await openReportFile(file)
    const parsed = await streamReport(source, { format: opts.format })
    const junit = parsed.format === 'junit'
    const { stream } = buildReportStream({ parsed: inDocumentOrder(parsed), file, contentHash: hash, context, root })
    const tally = new ReportTally(all, junit && job.junit !== null)
    for await (const batch of stream.chunks) {
      for (const { run, results } of batch) {
        if (results.length > 0) job.suites.add(run.suite)
        for (const r of results) tally.add(r, run.runId, r.position!)
      }
    }
    const scopes = new Map(stream.runs().map((run) => [run.runId, { branch: run.branch, env: run.env }]))
    tally.end((runId) => scopes.get(runId)!, job.totals, job.results, job.scopes)
    if (junit && job.junit) job.junit.push({ file, tally })
    else job.junit = null
  }
  return job
}

/**
 * The cases with their document order as their position: the gated JUnit copy finds each `<testcase>` again by
 * it. (The analysis's execution order, which some formats take from start times, plays no part in a gate.)
 */
function inDocumentOrder(parsed: ParsedStream): ParsedStream {
  async function* cases() {
    for await (const chunk of parsed.cases) {
      for (const c of chunk) c.position = null
      yield chunk
    }
  }
  return { format: parsed.format, meta: parsed.meta, cases: cases() }
}

/**
 * The gated JUnit copy: JUnit reports are copied with only the quarantined failures changed; reports in other
 * formats are written from their results (read again whole: the streamed read kept only the failures).
 */
async function writeJunitOut(
  file: string,
  job: JobResults,
  forgiverFor: (scopes: ReadonlyMap<Result, RunScope>) => (r: Result) => Forgiver | undefined,
  readAll: () => Promise<JobResults>,
) {
  if (!job.junit || job.junit.length === 0) {
    const whole = await readAll()
    writeFileSync(file, formatJunit(whole.results, forgiverFor(whole.scopes)))
    return
  }
  const forgiverOf = forgiverFor(job.scopes)
  const notes = new Map<Result, string>()
  for (const r of job.results) {
    const q = isFailure(r.status) ? forgiverOf(r) : undefined
    if (q) notes.set(r, skipMessage(q))
  }
  const inputs = job.junit.map(({ file, tally }) => ({
    file,
    cases: tally.caseCount,
    noteOf: (index: number) => {
      const r = tally.resultAt(index)
      return r && notes.get(r)
    },
  }))
  await rewriteJunit(inputs, file)
}

interface LoadedQuarantines extends QuarantineSet {
  /** Suites the source knows, for the suite hints (null when it cannot say). */
  knownSuites: Set<string> | null
  knownFrom: string
  /** The ids the source knows the job's tests by, loaded for every suite of the job (null: nothing to match). */
  ids: IdentityReconciler | null
}

/**
 * Gives the job's results the ids their tests are known by where the quarantines come from, so that a test named
 * under another reporter's convention (jest-junit's defaults, a Playwright project prefix) meets its quarantine.
 * In place: the gate's scopes and the JUnit copy's notes are keyed by the result objects.
 */
async function reconcileJob(ids: IdentityReconciler | null, job: Pick<JobResults, 'results' | 'scopes'>) {
  if (!ids) return
  const named = job.results.map((r) => ({ ref: r.test, project: job.scopes.get(r)?.env.project }))
  const { refs } = await ids.resolveTests(named)
  job.results.forEach((r, i) => (r.test = refs[i]!))
}

const suiteOf = (testId: string) => testId.split('::', 1)[0]!

async function loadQuarantines(
  opts: GateCommandOptions,
  io: Io,
  reportSuites: Set<string>,
): Promise<LoadedQuarantines> {
  if (opts.quarantineFile) {
    // A first job, before anyone exported quarantines, must not fail for want of the file: nothing is quarantined.
    if (!existsSync(opts.quarantineFile)) {
      io.stderr.write(`warning: ${opts.quarantineFile} does not exist: no test is quarantined\n`)
      return { records: [], rules: [], knownSuites: null, knownFrom: opts.quarantineFile, ids: null }
    }
    const { readQuarantineFile } = await import('../../quarantine/file.js')
    const set = readQuarantineFile(opts.quarantineFile)
    const known = new Set(set.records.map((r) => suiteOf(r.testId)))
    const ids = new IdentityReconciler(idsAsIdentitySource(set.records.map((r) => r.testId)))
    return { ...set, knownSuites: known, knownFrom: `the quarantine file ${opts.quarantineFile}`, ids }
  }
  const { openStore, resolveDbLocation, isPostgresUrl } = await import('../../store/open.js')
  const location = resolveDbLocation({ db: opts.db, env: io.env })
  // The gate only reads quarantines: it never creates a database, and a job without one has none quarantined.
  if (!isPostgresUrl(location) && location !== ':memory:' && !existsSync(location)) {
    io.stderr.write(`warning: no flakewatch database at ${location}: no test is quarantined\n`)
    return { records: [], rules: [], knownSuites: null, knownFrom: location, ids: null }
  }
  const store = await openStore({ db: location, env: io.env, readOnly: true })
  try {
    const records = await store.listQuarantines()
    const rules = await store.listQuarantineRules()
    // Only when none of the report's suites is stored is it worth naming the stored ones (from recent runs).
    let knownSuites: Set<string> | null = null
    let overlap = false
    for (const s of reportSuites) if ((await store.listTests({ suite: s, limit: 1 })).length > 0) overlap = true
    if (!overlap) {
      knownSuites = new Set((await store.listRuns({ limit: 200 })).map((r) => r.suite))
      for (const r of records) knownSuites.add(suiteOf(r.testId))
    }
    // Read now, while the store is open: the gated JUnit copy may resolve the job's tests again later.
    let ids: IdentityReconciler | null = null
    if (records.length > 0 || rules.length > 0) {
      ids = new IdentityReconciler(store)
      await ids.load(reportSuites)
    }
    return { records, rules, knownSuites, knownFrom: 'the store', ids }
  } finally {
    await store.close()
  }
}

export interface GateOutcome {
  result: GateResult
}

/**
 * Reads reports and quarantines, and decides. The exit code is the caller's: 0 pass, 1 fail. A job whose reports
 * hold no test at all is bad input (exit 2) unless `allowEmpty`: it is usually a broken test step.
 */
export async function runGate(inputs: string[], opts: GateCommandOptions, io: Io): Promise<GateOutcome> {
  opts = projectStoreFlags(opts, io.env)
  const job = await readJobResults(inputs, opts, io)
  if (job.totals.tests === 0 && !opts.allowEmpty) {
    throw new InputError(
      `${inputs.join(', ')}: the report holds no test (0 tests), which usually means the test step broke before ` +
        'running anything; pass --allow-empty if an empty run is expected',
    )
  }
  const { scopes } = job
  const loaded = await loadQuarantines(opts, io, job.suites)
  await reconcileJob(loaded.ids, job)
  const quarantines = new Map(loaded.records.map((r) => [r.testId, r]))
  const gateOpts = { failOnFlaky: opts.failOnFlaky, rules: loaded.rules, runOf: (r: Result) => scopes.get(r)! }
  const result = gate(job.results, quarantines, { ...gateOpts, totals: job.totals })
  result.hints.push(
    ...suiteHints({
      reportSuites: job.suites,
      knownSuites: loaded.knownSuites,
      knownFrom: loaded.knownFrom,
      quarantinedIds: quarantines.keys(),
      blocking: result.blocking,
    }),
  )
  if (opts.junitOut) {
    const forgiverFor = (of: ReadonlyMap<Result, RunScope>) =>
      createForgiver(quarantines, { ...gateOpts, runOf: (r: Result) => of.get(r)! })
    const readAll = async () => {
      const whole = await readJobResults(inputs, opts, io, { all: true })
      await reconcileJob(loaded.ids, whole)
      return whole
    }
    await writeJunitOut(opts.junitOut, job, forgiverFor, readAll)
  }
  if (opts.ingest) {
    const { ingest, printIngest } = await import('./ingest.js')
    const summary = await ingest(inputs, { ...opts, json: false, output: undefined }, io)
    printIngest(summary, { json: false }, { ...io, stdout: io.stderr })
  }
  if (io.env.GITHUB_STEP_SUMMARY) appendFileSync(io.env.GITHUB_STEP_SUMMARY, gateMarkdown(result))
  if (opts.comment) await postGateComment(job, opts, io)
  return { result }
}

const line = (e: { test_id: string; message: string | null }) =>
  `  ${sanitizeCell(e.test_id)}${e.message ? `\n      ${sanitizeCell(e.message.split('\n')[0] ?? '').slice(0, 200)}` : ''}`

export function printGate(result: GateResult, opts: GateCommandOptions, io: Io): void {
  if (opts.json) {
    const { verdict, blocking, quarantined, flaky, rules, hints } = result
    return emitJson(io, { verdict, blocking, quarantined, flaky, totals: result.totals, rules, hints }, opts.output)
  }
  const out: string[] = []
  const t = result.totals
  const paint = createPainter(useColor(io))
  const word = paint(result.verdict === 'pass' ? 'green' : 'red', result.verdict.toUpperCase())
  out.push(`flakewatch gate: ${word} (${t.tests} tests: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped)`)
  if (result.blocking.length) {
    out.push(`\nBlocking failures (${result.blocking.length}):`)
    appendAll(out, result.blocking.map(line))
  }
  if (result.quarantined.length) {
    out.push(`\nQuarantined failures, not blocking (${result.quarantined.length}):`)
    for (const q of result.quarantined) {
      out.push(
        `  ${sanitizeCell(q.test_id)}\n      ${q.rule ? `rule ${sanitizeCell(q.rule)}: ` : ''}reason: ${sanitizeCell(q.reason)}; owner: ${sanitizeCell(q.owner ?? '–')}${q.expires_at ? `; expires ${q.expires_at.slice(0, 10)}` : ''}`,
      )
    }
  }
  if (result.rules.length) {
    out.push(`\nFailures each rule forgave:`)
    for (const r of result.rules) out.push(`  ${sanitizeCell(r.id)}: ${r.forgave}`)
  }
  if (result.flaky.length) {
    out.push(`\nPassed on retry (${result.flaky.length}):`)
    appendAll(out, result.flaky.map(line))
  }
  io.stdout.write(`${out.join('\n')}\n`)
  for (const hint of result.hints) io.stderr.write(`hint: ${hint}\n`)
}

/** The GitHub step summary. Test names are untrusted: pipes and HTML are escaped. */
export function gateMarkdown(result: GateResult): string {
  const esc = (s: string) => s.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!)
  const parts = [`## flakewatch gate: ${result.verdict === 'pass' ? '✅ pass' : '❌ fail'}\n`]
  parts.push(
    `${result.totals.tests} tests, ${result.totals.failed} failed, ${result.quarantined.length} quarantined, ${result.flaky.length} passed on retry\n`,
  )
  if (result.rules.length) {
    parts.push(`Failures each rule forgave: ${result.rules.map((r) => `${esc(r.id)} ${r.forgave}`).join(', ')}\n`)
  }
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
        ['test', 'rule', 'reason', 'owner', 'expires'],
        result.quarantined.map((q) => [
          esc(q.test_id),
          q.rule ? esc(q.rule) : '',
          esc(q.reason),
          esc(q.owner ?? ''),
          q.expires_at?.slice(0, 10) ?? '',
        ]),
      ),
      '',
    )
  }
  if (result.flaky.length) {
    parts.push('### Passed on retry\n')
    appendAll(
      parts,
      result.flaky.map((f) => `- ${esc(f.test_id)}`),
    )
    parts.push('')
  }
  if (result.hints.length) {
    parts.push('### Hints\n')
    appendAll(
      parts,
      result.hints.map((h) => `- ${esc(h)}`),
    )
    parts.push('')
  }
  return `${parts.join('\n')}\n`
}

async function postGateComment(job: JobResults, opts: GateCommandOptions, io: Io): Promise<void> {
  try {
    const { commentOnResults, printComment } = await import('./comment.js')
    printComment(await commentOnResults(job, opts, io), {}, io)
  } catch (error) {
    io.stderr.write(`flakewatch comment: not posted: ${(error as Error).message}\n`)
  }
}
