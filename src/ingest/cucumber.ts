import { posix } from 'node:path'
import type { ResultStatus } from '../model.js'
import { repoRelativePath } from './ci-path.js'

/*
 * What Cucumber's two machine formats share: a scenario's outcome is the worst of its steps' and hooks', and a
 * scenario is named by its feature file and its name, the example row's line added where names collide.
 */

/** A step or hook result, lower-cased as Cucumber JSON writes it (the messages write it upper-cased). */
export type StepStatus = 'passed' | 'failed' | 'ambiguous' | 'undefined' | 'pending' | 'skipped' | 'unknown'

/**
 * Worst first. A failed step (or hook) fails the scenario; an ambiguous or undefined step means it could not run as
 * written (an error, not a test failure); a pending or skipped step leaves it skipped.
 */
const RANK: Record<StepStatus, number> = {
  failed: 6,
  ambiguous: 5,
  undefined: 4,
  pending: 3,
  skipped: 2,
  passed: 1,
  unknown: 0,
}

const OUTCOME: Record<StepStatus, ResultStatus> = {
  failed: 'failed',
  ambiguous: 'error',
  undefined: 'error',
  pending: 'skipped',
  skipped: 'skipped',
  passed: 'passed',
  // A scenario with no step result at all (an empty scenario) ran nothing that failed.
  unknown: 'passed',
}

/** A step status as either format spells it; anything else is `unknown`. */
export function stepStatus(value: unknown): StepStatus {
  const s = typeof value === 'string' ? value.toLowerCase() : ''
  return s in RANK ? (s as StepStatus) : 'unknown'
}

/** The worse of two step statuses. */
export function worse(a: StepStatus, b: StepStatus): StepStatus {
  return RANK[b] > RANK[a] ? b : a
}

/** The scenario's result from its worst step. */
export function scenarioStatus(worst: StepStatus): ResultStatus {
  return OUTCOME[worst]
}

/**
 * A feature file as the module: Cucumber-JVM writes `file:` URIs (`file:src/test/resources/cart.feature`), absolute
 * ones from CI checkouts are made repository-relative, and `./` is dropped. `classpath:` URIs are kept as written.
 * @example featureFile('file:src/test/resources/features/cart.feature') // 'src/test/resources/features/cart.feature'
 */
export function featureFile(uri: string): string {
  let path = uri
  if (path.startsWith('file://')) path = decodePath(path.slice('file://'.length))
  else if (path.startsWith('file:')) path = decodePath(path.slice('file:'.length))
  // Cucumber-JVM resolves a relative features path against the working directory: `…/runner/../../features/x`.
  if (/(?:^|\/)\.\.?\//.test(path) && path.startsWith('/')) path = posix.normalize(path)
  return repoRelativePath(path).replace(/^(?:\.\/)+/, '')
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/**
 * Tells apart scenarios of one feature file that share a name: the rows of a scenario outline whose name has no
 * `<placeholder>`, or two scenarios titled alike. Those get their line in the feature file (the example row's line
 * for an outline row), `same name rows (line 32)`; a name that is unique in its file stays as it is. A scenario run
 * several times (retries) has one line, so its runs stay one test.
 * @example const names = new ScenarioNames(); names.see('a.feature', 'x', 3); names.name('a.feature', 'x', 3) // 'x'
 */
export class ScenarioNames {
  /** file → name → the first line seen, or -1 once a second line was seen. */
  private readonly lines = new Map<string, Map<string, number>>()

  see(file: string, name: string, line: number | null): void {
    let byName = this.lines.get(file)
    if (!byName) this.lines.set(file, (byName = new Map<string, number>()))
    const first = byName.get(name)
    const at = line ?? 0
    if (first === undefined) byName.set(name, at)
    else if (first !== at) byName.set(name, -1)
  }

  name(file: string, name: string, line: number | null): string {
    const collides = this.lines.get(file)?.get(name) === -1
    if (!collides || line === null) return name
    return name === '' ? `(line ${line})` : `${name} (line ${line})`
  }
}
