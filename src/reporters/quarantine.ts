import type { Result } from '../model.js'
import { idsAsIdentitySource, resolveTests, type IdentitySource } from '../pipeline/reconcile-ids.js'
import { readQuarantineFile, type QuarantineSet } from '../quarantine/file.js'
import { createForgiver, gate, type QuarantinedEntry, type RunScope } from '../quarantine/gate.js'
import { openStore } from '../store/open.js'
import type { QuarantineRecord, QuarantineRule, RunBatch } from '../store/store.js'
import { errorMessage } from './writer.js'

/** The quarantines in force for a run, and the run's results with the ids they know the tests by. */
export interface LoadedQuarantines extends QuarantineSet {
  /** Copies of the recorded results whose tests' ids are reconciled (see {@link withKnownIds}). */
  results: Result[]
  runOf: (r: Result) => RunScope
}

/**
 * The quarantines in force for a run: from the reviewable file when one is named, else from the store. Never
 * throws: when they cannot be read, nothing is forgiven. The run's results come back with the ids the source
 * knows their tests by, so that a quarantine set on a test reported under another convention (jest-junit's
 * defaults, a Playwright project prefix) still applies.
 * @example await loadQuarantines({ file: null }, '.flakewatch.db', process.env, recording.batch.runs)
 */
export async function loadQuarantines(
  source: { file: string | null },
  db: string,
  env: Record<string, string | undefined>,
  runs: RunBatch[],
): Promise<LoadedQuarantines | { error: string }> {
  try {
    if (source.file) {
      const set = readQuarantineFile(source.file)
      const ids = idsAsIdentitySource(set.records.map((r) => r.testId))
      return { ...set, ...(await withKnownIds(ids, runs)) }
    }
    const store = await openStore({ db, env })
    try {
      const records = await store.listQuarantines()
      const rules = await store.listQuarantineRules()
      const known = records.length > 0 || rules.length > 0 ? await withKnownIds(store, runs) : resultsWithScopes(runs)
      return { records, rules, ...known }
    } finally {
      await store.close().catch(() => undefined)
    }
  } catch (error) {
    return { error: errorMessage(error) }
  }
}

/**
 * The runs' results, each a copy whose test has the id `source` knows it by (the recording itself is left as the
 * reporter wrote it), with the run of each.
 */
export async function withKnownIds(
  source: IdentitySource,
  runs: RunBatch[],
): Promise<{ results: Result[]; runOf: (r: Result) => RunScope }> {
  const plain = resultsWithScopes(runs)
  const project = (r: Result) => plain.runOf(r).env.project
  const { refs } = await resolveTests(
    source,
    plain.results.map((r) => ({ ref: r.test, project: project(r) })),
  )
  const scopes = new Map<Result, RunScope>()
  plain.results.forEach((r, i) => {
    const ref = refs[i]!
    scopes.set(ref.testId === r.test.testId ? r : { ...r, test: ref }, plain.runOf(r))
  })
  return { results: [...scopes.keys()], runOf: (r) => scopes.get(r) ?? { branch: null, env: {} } }
}

export interface QuarantineInput {
  /** The runner's own verdict on the run. */
  status: 'passed' | 'failed' | 'timedout' | 'interrupted'
  /** Why the run may not be forgiven whatever the tests did (a global error, maxFailures reached), if any. */
  incomplete: string | null
  results: Result[]
  quarantines: QuarantineRecord[]
  /** Quarantine rules; they forgive like a quarantine of each test they match. */
  rules?: QuarantineRule[]
  /** The run of each result, for rules on branch and facets. */
  runOf?: (result: Result) => RunScope
  /** The runner fails runs with flaky tests (`failOnFlakyTests`): those need a quarantine too. */
  failOnFlaky: boolean
  now: number
}

export interface QuarantineDecision {
  /** True: report the run as passed. */
  pass: boolean
  /** The failures the quarantine forgave (or would have). */
  forgiven: QuarantinedEntry[]
  /** Why the outcome stays as it is, when it does and that is worth saying. */
  note: string | null
}

/**
 * Decides whether quarantine turns a failed run into a passed one: only when the runner failed it for its tests
 * alone and every one of those failures is quarantined ({@link gate}). A crash, an interruption, a timed-out run
 * or a run cut short keeps its status: quarantine forgives tests, not broken runs.
 * @example decideQuarantine({ status: 'failed', incomplete: null, results, quarantines, failOnFlaky: false, now })
 */
export function decideQuarantine(input: QuarantineInput): QuarantineDecision {
  const map = new Map(input.quarantines.map((q) => [q.testId, q]))
  const opts = { failOnFlaky: input.failOnFlaky, now: input.now, rules: input.rules, runOf: input.runOf }
  const decision = gate(input.results, map, opts)
  const forgiverOf = createForgiver(map, opts)
  const flakyForgiven: QuarantinedEntry[] = []
  for (const r of input.failOnFlaky ? input.results : []) {
    if (r.status !== 'passed' || !r.flakyOnRetry) continue
    const f = forgiverOf(r)
    if (f) flakyForgiven.push({ test_id: r.test.testId, name: r.test.name, status: r.status, message: r.message, ...f })
  }
  const forgiven = [...decision.quarantined, ...flakyForgiven]
  if (input.status === 'passed') return { pass: false, forgiven: [], note: null }
  const broken =
    input.status === 'timedout'
      ? 'the run timed out'
      : input.status === 'interrupted'
        ? 'the run was interrupted'
        : input.incomplete
  if (broken) {
    return { pass: false, forgiven: [], note: forgiven.length > 0 ? `${broken}; quarantine does not apply` : null }
  }
  if (decision.verdict === 'fail') return { pass: false, forgiven, note: null }
  // A failed run without a failing test to forgive failed for another reason, and that reason stands.
  if (forgiven.length === 0) return { pass: false, forgiven: [], note: null }
  return { pass: true, forgiven, note: null }
}

/** The stderr lines that list what quarantine forgave. */
export function formatForgiven(forgiven: QuarantinedEntry[]): string[] {
  return forgiven.map((f) => {
    const owner = f.owner && `owner ${f.owner}`
    const details = [f.reason, owner, f.issue_url, f.expires_at && `until ${f.expires_at}`].filter(Boolean)
    return `  ${f.status} ${f.test_id} (quarantined${f.rule ? ` by rule ${f.rule}` : ''}: ${details.join('; ')})`
  })
}

/** Results with the run each came from, as a reporter's recording holds them. */
export function resultsWithScopes(runs: RunBatch[]): { results: Result[]; runOf: (r: Result) => RunScope } {
  const scopes = new Map<Result, RunScope>()
  for (const run of runs) for (const r of run.results) scopes.set(r, { branch: run.run.branch, env: run.run.env })
  return { results: [...scopes.keys()], runOf: (r) => scopes.get(r) ?? { branch: null, env: {} } }
}

/**
 * Reads the quarantines named in a reporter's options and decides on a recorded run, saying on stderr what it
 * forgave or why it could not. The one path the Playwright, Vitest and Jest reporters share.
 * @example if ((await enforceQuarantine({ ...input, runs: recording.batch.runs }, options, io)).pass) process.exitCode = 0
 */
export async function enforceQuarantine(
  input: Omit<QuarantineInput, 'results' | 'quarantines' | 'rules' | 'runOf'> & { runs: RunBatch[] },
  options: { quarantine: { file: string | null } | null; db: string },
  io: { stderr: { write(chunk: string): unknown }; env: Record<string, string | undefined> },
  describe: string,
): Promise<QuarantineDecision> {
  const none: QuarantineDecision = { pass: false, forgiven: [], note: null }
  if (!options.quarantine || input.status === 'passed') return none
  const say = (line: string) => void io.stderr.write(`flakewatch: ${line}\n`)
  const loaded = await loadQuarantines(options.quarantine, options.db, io.env, input.runs)
  if ('error' in loaded) {
    say(`could not read quarantines, so none apply: ${loaded.error}`)
    return none
  }
  const { results, runOf } = loaded
  const decision = decideQuarantine({ ...input, results, runOf, quarantines: loaded.records, rules: loaded.rules })
  if (decision.note) say(decision.note)
  if (decision.pass) {
    say(
      [
        `every failure among ${describe} is quarantined, so the run passes. Forgiven:`,
        ...formatForgiven(decision.forgiven),
      ].join('\n'),
    )
  }
  return decision
}
