import { ReportLimitError } from '../errors.js'
import { MAX_OPEN_TESTS } from '../limits.js'
import { checkedName, ownString, truncateText } from './bounded-text.js'
import { collectReport, streamSteps, type CaseSteps } from './collect.js'
import { featureFile, ScenarioNames, scenarioStatus, stepStatus, worse, type StepStatus } from './cucumber.js'
import { splitFailure } from './failure-text.js'
import { parseJsonLine, sourceLines } from './line-stream.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedReport, ParsedStream, ParseOptions, ReportSource } from './types.js'

/*
 * Cucumber's message stream (cucumber-js `--format message:…`, Cucumber-JVM `--plugin message:…`): one envelope
 * per line. Pickles (scenarios, one per outline row) come first, then testCase (a pickle's planned steps), and per
 * attempt testCaseStarted { attempt }, testStepFinished { testStepResult } and testCaseFinished { willBeRetried }.
 * Every attempt of a retried scenario (cucumber-js `--retry`) is here, unlike in Cucumber JSON: each becomes one
 * case, and ingest folds the attempts of one scenario, so a failure and then a pass is flaky on retry.
 */
interface Timestamp {
  seconds?: number
  nanos?: number
}

interface GherkinNode {
  id?: string
  location?: { line?: number }
  examples?: { tableBody?: GherkinNode[] }[]
  children?: { scenario?: GherkinNode; rule?: GherkinNode }[]
}

interface Envelope {
  meta?: { ci?: { git?: { revision?: string; branch?: string } } }
  gherkinDocument?: { feature?: GherkinNode }
  pickle?: { id?: string; uri?: string; name?: string; astNodeIds?: string[]; location?: { line?: number } }
  testCase?: { id?: string; pickleId?: string }
  testCaseStarted?: { id?: string; testCaseId?: string; attempt?: number; timestamp?: Timestamp }
  testStepFinished?: {
    testCaseStartedId?: string
    testStepResult?: {
      status?: string
      message?: string
      exception?: { type?: string; message?: string; stackTrace?: string }
    }
  }
  testCaseFinished?: { testCaseStartedId?: string; timestamp?: Timestamp; willBeRetried?: boolean }
  testRunStarted?: { timestamp?: Timestamp }
  testRunFinished?: { timestamp?: Timestamp }
}

interface Pickle {
  id: string
  file: string
  name: string
  line: number | null
}

interface Attempt {
  pickle: Pickle
  pickleId: string
  testCaseId: string
  startedMs: number | null
  worst: StepStatus
  failure: string | null
  errorType: string | null
}

/**
 * Parses a Cucumber message stream whole.
 * @example const report = await parseCucumberMessages(sourceFromFile('cucumber.ndjson'))
 */
export function parseCucumberMessages(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamCucumberMessages(source, opts))
}

/**
 * Streams a Cucumber message stream line by line. Scenarios are named as in Cucumber JSON (feature file, scenario
 * name, the line where names collide; see `cucumber-json.ts`), so both reports of one run give one id per scenario.
 * Held while streaming: the pickles not yet finished and the attempts under way.
 * @example for await (const chunk of streamCucumberMessages(sourceFromFile('cucumber.ndjson')).cases) use(chunk)
 */
export const streamCucumberMessages: (source: ReportSource, opts?: ParseOptions) => ParsedStream = streamSteps(
  'cucumber-messages',
  messageSteps,
)

/** The stream's loop (see {@link CaseSteps}): one envelope per line. */
async function* messageSteps(...[source, meta, out, limits]: Parameters<CaseSteps>): AsyncGenerator<void> {
  const file = source.name
  const maxAttempts = limits.maxAttemptsPerResult
  const names = new ScenarioNames()
  // Lines of scenarios and example rows, for pickles written before `pickle.location` existed (messages < 18).
  const astLines = new Map<string, number>()
  const pickles = new Map<string, Pickle>()
  const testCases = new Map<string, Pickle>()
  const open = new Map<string, Attempt>()
  const held = (line: number) => {
    if (astLines.size + pickles.size + testCases.size + open.size >= MAX_OPEN_TESTS) {
      throw new ReportLimitError(file, `line ${line}: scenarios held at once`, MAX_OPEN_TESTS, undefined)
    }
  }
  const finish = (a: Attempt, status = scenarioStatus(a.worst), finishedMs: number | null = null) => {
    const split = status === 'passed' ? { message: null, stack: null } : splitFailure(a.failure)
    out.push({
      module: a.pickle.file,
      name: names.name(a.pickle.file, a.pickle.name, a.pickle.line),
      file: a.pickle.file,
      status,
      flakyOnRetry: false,
      durationMs:
        a.startedMs !== null && finishedMs !== null && finishedMs >= a.startedMs ? finishedMs - a.startedMs : null,
      errorType: a.errorType,
      message: split.message,
      stack: status === 'failed' || status === 'error' ? split.stack : null,
      healingOccurred: false,
      attempts: [],
    })
  }

  for await (const batch of sourceLines(source)) {
    for (const { text, number } of batch) {
      if (!text.startsWith('{')) continue
      const e = parseJsonLine(file, number, text) as Envelope
      if (typeof e !== 'object' || e === null) continue
      if (e.meta?.ci?.git) {
        const git = e.meta.ci.git
        if (typeof git.revision === 'string' && git.revision) meta.revision = ownString(git.revision)
        if (typeof git.branch === 'string' && git.branch) meta.branch = ownString(git.branch)
      } else if (e.gherkinDocument?.feature) {
        collectLines(e.gherkinDocument.feature, astLines, () => held(number))
      } else if (e.pickle) {
        const p = e.pickle
        if (typeof p.id !== 'string') continue
        held(number)
        const feature = featureFile(checkedName(file, number, 'feature file', p.uri))
        const name = checkedName(file, number, 'scenario name', p.name)
        const lastNode = p.astNodeIds?.at(-1)
        const line = p.location?.line ?? (lastNode !== undefined ? astLines.get(lastNode) : undefined) ?? null
        names.see(feature, name, line)
        const id = ownString(p.id)
        pickles.set(id, { id, file: feature, name, line })
      } else if (e.testCase) {
        const pickle = typeof e.testCase.pickleId === 'string' ? pickles.get(e.testCase.pickleId) : undefined
        if (!pickle || typeof e.testCase.id !== 'string') continue
        held(number)
        testCases.set(ownString(e.testCase.id), pickle)
      } else if (e.testCaseStarted) {
        const s = e.testCaseStarted
        const pickle = typeof s.testCaseId === 'string' ? testCases.get(s.testCaseId) : undefined
        if (!pickle || typeof s.id !== 'string') continue
        if (typeof s.attempt === 'number' && s.attempt + 1 > maxAttempts) {
          throw new ReportLimitError(file, `line ${number}: testCaseStarted.attempt + 1`, maxAttempts, s.attempt + 1)
        }
        held(number)
        open.set(ownString(s.id), {
          pickle,
          pickleId: pickle.id,
          testCaseId: s.testCaseId!,
          startedMs: millis(s.timestamp),
          worst: 'unknown',
          failure: null,
          errorType: null,
        })
      } else if (e.testStepFinished) {
        const f = e.testStepFinished
        const a = typeof f.testCaseStartedId === 'string' ? open.get(f.testCaseStartedId) : undefined
        const r = f.testStepResult
        if (!a || !r) continue
        const status = stepStatus(r.status)
        // The first step of the worst status says why; the steps skipped after it are not to blame.
        if (worse(a.worst, status) !== a.worst) {
          a.worst = status
          a.failure = failureText(status, r)
          const type = r.exception?.type
          a.errorType =
            status === 'failed' && typeof type === 'string'
              ? ownString(type)
              : status === 'ambiguous' || status === 'undefined'
                ? status
                : null
        }
      } else if (e.testCaseFinished) {
        const f = e.testCaseFinished
        const id = f.testCaseStartedId
        const a = typeof id === 'string' ? open.get(id) : undefined
        if (!a || typeof id !== 'string') continue
        open.delete(id)
        finish(a, undefined, millis(f.timestamp))
        // The last attempt of its scenario: what only later attempts would need goes, so memory follows the
        // scenarios under way, not the file. (The names of every scenario stay: a later one may collide.)
        if (f.willBeRetried !== true) {
          testCases.delete(a.testCaseId)
          pickles.delete(a.pickleId)
        }
      } else if (e.testRunStarted) {
        meta.startedAt = parseTimestamp(millis(e.testRunStarted.timestamp))
      } else if (e.testRunFinished) {
        meta.finishedAt = parseTimestamp(millis(e.testRunFinished.timestamp))
      }
    }
    yield
  }
  // Attempts that never finished: the stream was cut (a killed job). They are errors, not lost.
  for (const a of open.values()) finish(a, 'error')
  if (meta.startedAt && meta.finishedAt) meta.durationMs = Date.parse(meta.finishedAt) - Date.parse(meta.startedAt)
}

/** Scenario and example row ids → their line, walked without recursion (rules nest scenarios). */
function collectLines(feature: GherkinNode, lines: Map<string, number>, hold: () => void): void {
  const stack: GherkinNode[] = [feature]
  for (let node = stack.pop(); node; node = stack.pop()) {
    for (const child of node.children ?? []) {
      if (child.rule) stack.push(child.rule)
      const scenario = child.scenario
      if (!scenario) continue
      if (typeof scenario.id === 'string' && typeof scenario.location?.line === 'number') {
        hold()
        lines.set(ownString(scenario.id), scenario.location.line)
      }
      for (const examples of scenario.examples ?? []) {
        for (const row of examples.tableBody ?? []) {
          if (typeof row.id !== 'string' || typeof row.location?.line !== 'number') continue
          hold()
          lines.set(ownString(row.id), row.location.line)
        }
      }
    }
  }
}

function failureText(
  status: StepStatus,
  r: NonNullable<NonNullable<Envelope['testStepFinished']>['testStepResult']>,
): string | null {
  const text = r.message ?? r.exception?.stackTrace ?? r.exception?.message
  if (status === 'failed' || status === 'ambiguous') {
    if (typeof text === 'string' && text) return truncateText(stripAnsi(text))
    return status === 'failed' ? 'Step failed' : 'Ambiguous step'
  }
  if (status === 'undefined') return 'Undefined step'
  if (status === 'pending') return typeof r.message === 'string' && r.message ? truncateText(r.message) : 'Pending step'
  return null
}

function millis(t: Timestamp | undefined): number | null {
  if (!t || typeof t.seconds !== 'number' || !Number.isFinite(t.seconds)) return null
  const nanos = typeof t.nanos === 'number' && Number.isFinite(t.nanos) ? t.nanos : 0
  return t.seconds * 1000 + Math.floor(nanos / 1e6)
}
