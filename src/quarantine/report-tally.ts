import { foldAttempts } from '../fold-attempts.js'
import { isFailure, type Result } from '../model.js'
import type { GateTotals, RunScope } from './gate.js'

/**
 * Per test, one byte while nothing about it can matter to the gate (no failure anywhere in its executions).
 * A test that passed a million times in a report costs this byte and its key, not a million result objects.
 */
const OWN_SKIPPED = 1 // its first execution's own status is skipped (else passed)
const RAN = 2 // some attempt of its executions so far passed
const REPEATED = 4 // executed more than once in the run: its status is the folded one
const KEPT = 8 // its executions are kept whole (`kept`), from the first one that could matter

/** An execution the gate may have to show: a failure, a pass on retry, or an attempt that failed. */
function couldMatter(r: Result): boolean {
  return isFailure(r.status) || r.flakyOnRetry || r.attempts.some((a) => isFailure(a.status))
}

/** `array`, or a copy of it twice as long (or more) when `index` is past its end; of the same element type. */
function grow<T extends Uint8Array<ArrayBuffer> | Uint32Array<ArrayBuffer>>(array: T, index: number): T {
  if (index < array.length) return array
  let size = array.length * 2
  while (size <= index) size *= 2
  const grown = new (array.constructor as new (length: number) => T)(size)
  grown.set(array)
  return grown
}

interface Kept {
  group: number
  executions: Result[]
}

/**
 * One report of a CI job, as the gate reads it: each test of each run once, repeats of a test in the same run
 * folded by the ingest rule (`foldAttempts`, as the store folds them), in compact form. Only the tests whose
 * executions hold a failure (or everything, with `keepAll`) are kept as results.
 */
export class ReportTally {
  /**
   * Run id → module → name → test number. Nested maps rather than test ids as keys: a test id is a concatenation,
   * which V8 keeps as a tree of pieces (about 200 bytes a test at a million tests, against 55 here).
   */
  private readonly groups = new Map<string, { index: number; modules: Map<string, Map<string, number>> }>()
  private flags = new Uint8Array(1024)
  /** The interned file of each test's first execution that had one (0: none yet), for a folded test's `file`. */
  private files = new Uint32Array(1024)
  private readonly fileIds = new Map<string, number>()
  private readonly fileNames: string[] = []
  private readonly kept = new Map<number, Kept>()
  /** Per case in document order, its test (only when `occurrences`). */
  private occurrence: Uint32Array<ArrayBuffer> | null
  private cases = 0
  private tests = 0
  private final: Map<number, Result> | null = null

  constructor(
    private readonly keepAll: boolean,
    occurrences: boolean,
  ) {
    this.occurrence = occurrences ? new Uint32Array(1024) : null
  }

  /**
   * One execution of a test, as the report lists it: `runId` is the run it belongs to, `index` its place among the
   * report's cases in document order.
   */
  add(r: Result, runId: string, index: number): void {
    let group = this.groups.get(runId)
    if (!group) this.groups.set(runId, (group = { index: this.groups.size, modules: new Map() }))
    let names = group.modules.get(r.test.module)
    if (!names) group.modules.set(r.test.module, (names = new Map<string, number>()))
    let id = names.get(r.test.name)
    if (id === undefined) {
      id = this.tests++
      names.set(r.test.name, id)
      this.flags = grow(this.flags, id)
      this.files = grow(this.files, id)
      this.flags[id] = r.status === 'skipped' ? OWN_SKIPPED : 0
    } else this.flags[id]! |= REPEATED
    if (this.occurrence) {
      this.occurrence = grow(this.occurrence, index)
      this.occurrence[index] = id
    }
    this.cases = Math.max(this.cases, index + 1)
    const flags = this.flags[id]!
    if (flags & KEPT) this.kept.get(id)!.executions.push(r)
    else if (this.keepAll || couldMatter(r)) {
      // What came before was passes and skips only: one passing execution stands for them if any passed (the
      // folded status, pass on retry and message come out the same), and their file is remembered.
      const before: Result[] = []
      if (flags & REPEATED) {
        const status = flags & RAN ? 'passed' : 'skipped'
        before.push({
          ...r,
          status,
          flakyOnRetry: false,
          durationMs: null,
          message: null,
          healingOccurred: false,
          attempts: [],
        })
      }
      this.kept.set(id, { group: group.index, executions: [...before, r] })
      this.flags[id] = flags | KEPT
    } else if (r.attempts.length > 0 ? r.attempts.some((a) => a.status === 'passed') : r.status === 'passed') {
      // As `attemptsOf` reads it: no attempts stands for one, the result's own.
      this.flags[id] = flags | RAN
    }
    if (this.files[id] === 0 && r.test.file !== null) {
      let file = this.fileIds.get(r.test.file)
      if (file === undefined) {
        this.fileNames.push(r.test.file)
        this.fileIds.set(r.test.file, (file = this.fileNames.length))
      }
      this.files[id] = file
    }
  }

  /**
   * The report's end: every test's final status is counted into `totals`, and the kept tests are folded and
   * appended to `results` (run by run, in first-execution order: as ingest orders them), each with its scope.
   */
  end(scopeOf: (runId: string) => RunScope, totals: GateTotals, results: Result[], scopes: Map<Result, RunScope>) {
    const count = (status: Result['status']) => {
      if (status === 'passed') totals.passed++
      else if (status === 'skipped') totals.skipped++
      else totals.failed++
    }
    const runIds: string[] = []
    for (const [runId, g] of this.groups) runIds[g.index] = runId
    // Run by run, then by first execution: group and test numbers packed in one sortable number.
    const order = new Float64Array(this.kept.size)
    let n = 0
    for (const [id, k] of this.kept) order[n++] = k.group * 2 ** 32 + id
    order.sort()
    this.final = new Map()
    for (const key of order) {
      const id = key % 2 ** 32
      const { group, executions } = this.kept.get(id)!
      const r = executions.length === 1 ? executions[0]! : this.fold(id, executions)
      count(r.status)
      if (!this.keepAll && !isFailure(r.status) && !r.flakyOnRetry) continue
      this.final.set(id, r)
      results.push(r)
      scopes.set(r, scopeOf(runIds[group]!))
    }
    totals.tests += this.tests
    for (let id = 0; id < this.tests; id++) {
      const flags = this.flags[id]!
      if (flags & KEPT) continue
      if (flags & REPEATED) count(flags & RAN ? 'passed' : 'skipped')
      else count(flags & OWN_SKIPPED ? 'skipped' : 'passed')
    }
    // What a later `resultAt` needs stays (the case order and the kept results); the per-test state goes.
    this.kept.clear()
    this.groups.clear()
    this.fileIds.clear()
    this.fileNames.length = 0
    this.flags = new Uint8Array(0)
    this.files = new Uint32Array(0)
  }

  private fold(id: number, executions: Result[]): Result {
    const first = executions[0]!
    const file = this.files[id] ? this.fileNames[this.files[id] - 1]! : null
    const folded = foldAttempts(executions)
    return {
      test: { ...first.test, file },
      status: folded.status,
      flakyOnRetry: folded.flakyOnRetry,
      durationMs: folded.durationMs,
      errorType: folded.errorType,
      message: folded.message,
      healingOccurred: folded.healingOccurred,
      attempts: folded.attempts,
      position: first.position,
    }
  }

  /** `<testcase>` elements read, for the gated JUnit copy. */
  get caseCount(): number {
    return this.cases
  }

  /** The kept result of the case at `index` (document order), once the report has ended. */
  resultAt(index: number): Result | undefined {
    if (!this.occurrence || !this.final || index >= this.cases) return undefined
    return this.final.get(this.occurrence[index]!)
  }
}
