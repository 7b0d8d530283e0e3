import { z } from 'zod'
import type { ResultStatus } from '../model.js'
import { checkedName } from './bounded-text.js'
import { featureFile, ScenarioNames, scenarioStatus, stepStatus, worse, type StepStatus } from './cucumber.js'
import { splitFailure } from './failure-text.js'
import { readJson } from './read-json.js'
import { stripAnsi } from './strip-ansi.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ReportRunMeta, ReportSource } from './types.js'

/*
 * Cucumber's JSON (cucumber-js `--format json:…`, Cucumber-JVM `--plugin json:…`, cucumber-ruby): an array of
 * features { uri, name, elements: [{ type: 'scenario' | 'background', name, line, keyword, steps: [{ keyword, name,
 * hidden, result: { status, duration (ns), error_message } }], before/after: [hook] }] }. Read whole (≤256 MB).
 * Cucumber-JVM writes a feature's Background as an element of its own before each scenario; its steps belong to
 * that scenario. cucumber-js writes hooks as hidden steps, Cucumber-JVM as `before`/`after` lists.
 * The JSON keeps one attempt per scenario: cucumber-js leaves out every attempt that `willBeRetried`, so a scenario
 * that passed on `--retry` reads as a plain pass here. Its `--format message` stream keeps them (cucumber-messages).
 */
const result = z
  .object({
    status: z.string().nullish(),
    duration: z.number().nullish().catch(null),
    error_message: z.string().nullish().catch(null),
  })
  .nullish()
  .catch(null)
const hook = z.object({ result })
const step = z.object({
  keyword: z.string().nullish(),
  name: z.string().nullish(),
  hidden: z.boolean().nullish(),
  result,
  before: z.array(hook).nullish(),
  after: z.array(hook).nullish(),
})
const element = z.object({
  type: z.string().nullish(),
  name: z.string().nullish(),
  line: z.number().int().nullish().catch(null),
  start_timestamp: z.string().nullish().catch(null),
  steps: z.array(step).nullish(),
  before: z.array(hook).nullish(),
  after: z.array(hook).nullish(),
})
const schema = z.array(
  z.object({
    uri: z.string().nullish(),
    name: z.string().nullish(),
    elements: z.array(element).nullish(),
  }),
)

type Element = z.infer<typeof element>
type Step = z.infer<typeof step>
type Hook = z.infer<typeof hook>

/** What one scenario's steps and hooks add up to. */
interface Outcome {
  worst: StepStatus
  durationNs: number
  timed: boolean
  /** The text of the step that decided a failure, with the step named. */
  failure: string | null
}

/**
 * Parses Cucumber JSON. Module = the feature file (`features/cart.feature`; Cucumber-JVM's `file:` dropped), name =
 * the scenario's name as Cucumber ran it (an outline row's `<placeholders>` filled in); scenarios of one file that
 * share a name are told apart by their line (see {@link ScenarioNames}), as the message stream of the same run names
 * them. The scenario's outcome is its worst step or hook.
 * @example const report = await parseCucumberJson(sourceFromFile('cucumber.json'))
 */
export async function parseCucumberJson(source: ReportSource): Promise<ParsedReport> {
  const features = await readJson(source, schema, 'Cucumber JSON')
  const names = new ScenarioNames()
  const found: { file: string; name: string; line: number | null; outcome: Outcome }[] = []
  let started: number | null = null
  features.forEach((feature, i) => {
    const file = featureFile(checkedName(source.name, undefined, `[${i}].uri`, feature.uri ?? feature.name))
    let background: Outcome | null = null
    feature.elements?.forEach((e, j) => {
      const outcome = outcomeOf(e)
      if (e.type === 'background') {
        background = outcome
        return
      }
      const name = checkedName(source.name, undefined, `[${i}].elements[${j}].name`, e.name)
      const line = typeof e.line === 'number' ? e.line : null
      names.see(file, name, line)
      found.push({ file, name, line, outcome: background ? combine(background, outcome) : outcome })
      background = null
      const at = e.start_timestamp ? Date.parse(e.start_timestamp) : NaN
      if (Number.isFinite(at) && (started === null || at < started)) started = at
    })
  })
  // The JSON holds one attempt per scenario, so a name and line seen twice are two rows: cucumber-js 7 wrote the
  // outline's own line for each of its rows. Those are numbered in report order.
  const seen = new Map<string, number>()
  const cases = found.map((f) => {
    const name = names.name(f.file, f.name, f.line)
    const key = `${f.file}\n${name}`
    const n = (seen.get(key) ?? 0) + 1
    seen.set(key, n)
    return toCase(f.file, n === 1 ? name : `${name} #${n}`, f.outcome)
  })
  const meta: ReportRunMeta = {}
  if (started !== null) meta.startedAt = parseTimestamp(started)
  return { format: 'cucumber-json', cases, meta }
}

function outcomeOf(e: Element): Outcome {
  const outcome: Outcome = { worst: 'unknown', durationNs: 0, timed: false, failure: null }
  const add = (r: Hook['result'], what: string) => {
    if (!r) return
    const status = stepStatus(r.status)
    if (typeof r.duration === 'number' && Number.isFinite(r.duration) && r.duration >= 0) {
      outcome.durationNs += r.duration
      outcome.timed = true
    }
    // The first step of the worst status says why: the steps after a failure are skipped, not to blame.
    if (worse(outcome.worst, status) !== outcome.worst) {
      outcome.worst = status
      outcome.failure = failureOf(status, what, r.error_message)
    }
  }
  for (const h of e.before ?? []) add(h.result, 'Before hook')
  for (const s of e.steps ?? []) {
    for (const h of s.before ?? []) add(h.result, 'BeforeStep hook')
    add(s.result, stepTitle(s))
    for (const h of s.after ?? []) add(h.result, 'AfterStep hook')
  }
  for (const h of e.after ?? []) add(h.result, 'After hook')
  return outcome
}

function stepTitle(s: Step): string {
  if (s.hidden || !s.name) return `${(s.keyword ?? 'Hook').trim()} hook`
  return `${s.keyword ?? ''}${s.name}`.trim()
}

/** Why a step made the scenario fail or not run; null for steps that do not decide that. */
function failureOf(status: StepStatus, what: string, message: string | null | undefined): string | null {
  if (status === 'failed') return message ? stripAnsi(message) : `${what} failed`
  if (status === 'undefined') return `Undefined step: ${what}`
  if (status === 'ambiguous') return message ? stripAnsi(message) : `Ambiguous step: ${what}`
  if (status === 'pending') return message ? stripAnsi(message) : `Pending step: ${what}`
  return null
}

/** A Cucumber-JVM background's steps ran first, as part of the scenario after it. */
function combine(a: Outcome, b: Outcome): Outcome {
  const worst = worse(a.worst, b.worst)
  return {
    worst,
    durationNs: a.durationNs + b.durationNs,
    timed: a.timed || b.timed,
    failure: worst === a.worst && a.failure !== null ? a.failure : (b.failure ?? a.failure),
  }
}

function toCase(file: string, name: string, o: Outcome): ParsedCase {
  const status: ResultStatus = scenarioStatus(o.worst)
  const split = status === 'passed' ? { message: null, stack: null } : splitFailure(o.failure)
  return {
    module: file,
    name,
    file,
    status,
    flakyOnRetry: false,
    durationMs: o.timed ? Math.round(o.durationNs / 1e3) / 1e3 : null,
    errorType: o.worst === 'undefined' || o.worst === 'ambiguous' ? o.worst : null,
    message: split.message,
    stack: status === 'failed' || status === 'error' ? split.stack : null,
    healingOccurred: false,
    attempts: [],
  }
}
