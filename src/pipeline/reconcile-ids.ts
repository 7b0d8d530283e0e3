import { SuiteIdentities, type KnownName, type Reconciled } from '../ingest/test-identity.js'
import { TEST_ID_SEPARATOR, type Result, type TestRef } from '../model.js'
import { isPacked, packedRef, unpackRunBatch, type AnyRunBatch } from '../store/packed-results.js'
import type { ReportStream, TestFilter } from '../store/store.js'
import type { TestName, TestNameFilter } from '../store/test-names.js'

/**
 * What reconciling reads (and, for ingest, writes): a suite's tests and the names recorded for them. A store is one;
 * a quarantine file's ids are another (see {@link idsAsIdentitySource}).
 */
export interface IdentitySource {
  listTests(filter: TestFilter & { suite: string }): Promise<TestRef[]>
  testNames(): {
    listNames(filter: TestNameFilter): Promise<KnownName[]>
    recordNames(names: TestName[]): Promise<void>
  }
}

/** A test to resolve outside a report stream, with the Playwright project of its run (if any). */
export interface NamedTest {
  ref: TestRef
  project?: string | undefined
}

/** Names listed in the one warning about names that fit several known tests. */
const MAX_LISTED = 3

/**
 * Gives each test of a report the id the store already knows it by, when a reporter names it differently (see
 * `ingest/test-identity.ts`). One per command: what the store knows of a suite is read once, on its first report,
 * and kept up to date with the tests each report adds.
 * @example const ids = new IdentityReconciler(store); await store.ingestStream(ids.reconcile(stream).stream)
 */
export class IdentityReconciler {
  private readonly suites = new Map<string, Promise<SuiteIdentities>>()

  constructor(private readonly store: IdentitySource) {}

  private suite(name: string): Promise<SuiteIdentities> {
    let s = this.suites.get(name)
    if (!s) {
      const names = this.store.testNames()
      s = Promise.all([this.store.listTests({ suite: name }), names.listNames({ suite: name })]).then(
        ([tests, known]) => new SuiteIdentities(tests, known),
      )
      this.suites.set(name, s)
    }
    return s
  }

  /** Reads what the source knows of these suites now, so that resolving their tests later needs no source. */
  async load(suites: Iterable<string>): Promise<void> {
    for (const s of suites) await this.suite(s)
  }

  /** See the function {@link resolveTests}. */
  async resolveTests(tests: readonly NamedTest[]): Promise<{ refs: TestRef[]; remember: () => Promise<void> }> {
    const begun = new Map<SuiteIdentities, string>()
    const refs: TestRef[] = []
    for (const { ref, project } of tests) {
      const ids = await this.suite(ref.suite)
      if (!begun.has(ids)) {
        ids.beginReport()
        begun.set(ids, ref.suite)
      }
      refs.push(ids.resolve(ref, project).ref)
    }
    return { refs, remember: () => this.remember(begun) }
  }

  /** Records the names the reports of `begun` matched, for the next command and for `show`. */
  private async remember(begun: Map<SuiteIdentities, string>): Promise<void> {
    const at = new Date().toISOString()
    const names: TestName[] = []
    for (const [ids, suite] of begun) {
      for (const n of ids.takeNewNames()) names.push({ ...n, suite, source: 'ingest', at })
    }
    await this.store.testNames().recordNames(names)
  }

  /**
   * The report with its tests' ids reconciled, and the warnings it gave: at most one, for the names that fit
   * several known tests and were kept apart.
   */
  reconcile<B extends AnyRunBatch>(
    stream: ReportStream<B>,
  ): { stream: ReportStream; warnings: () => string[]; remember: () => Promise<void> } {
    const ambiguous: string[] = []
    let ambiguousCount = 0
    const begun = new Map<SuiteIdentities, string>()
    const suite = (name: string) => this.suite(name)
    async function* chunks(): AsyncGenerator<AnyRunBatch[], void, undefined> {
      for await (const chunk of stream.chunks) {
        const out: AnyRunBatch[] = []
        for (const batch of chunk) {
          const ids = await suite(batch.run.suite)
          if (!begun.has(ids)) {
            ids.beginReport()
            begun.set(ids, batch.run.suite)
          }
          const note = (r: Reconciled) => {
            if (r.kind !== 'ambiguous') return
            if (ambiguous.length < MAX_LISTED) ambiguous.push(`"${r.ref.testId}" (like ${r.candidates.join(', ')})`)
            ambiguousCount++
          }
          out.push(reconcileBatch(batch, ids, batch.run.env.project, note))
        }
        yield out
      }
    }
    const warnings = () =>
      ambiguousCount === 0
        ? []
        : [
            `${ambiguousCount} test name(s) fit several known tests and were kept as tests of their own: ` +
              `${ambiguous.join('; ')}. \`flakewatch tests merge <from> <into>\` joins them if they are one test.`,
          ]
    // Once the report is stored: its matches hold for the next command, and `show` lists them.
    const remember = () => this.remember(begun)
    return { stream: { ...stream, chunks: chunks() }, warnings, remember }
  }
}

/**
 * The ids tests named outside a report stream are stored under, in order: the failures a gate or a reporter's
 * quarantine check reads, a bundle's tests, one tracked result. They are one report (a known test takes at most one
 * of their names). `remember` records the names matched, for a caller that stores the results; a reader never
 * calls it.
 * @example const { refs } = await resolveTests(store, results.map((r) => ({ ref: r.test })))
 */
export async function resolveTests(
  source: IdentitySource | IdentityReconciler,
  tests: readonly NamedTest[],
): Promise<{ refs: TestRef[]; remember: () => Promise<void> }> {
  const reconciler = source instanceof IdentityReconciler ? source : new IdentityReconciler(source)
  return reconciler.resolveTests(tests)
}

/**
 * The identities of the tests a list of ids names (a quarantine file's): each id read as `suite::module::name`,
 * with no recorded names. A name reported differently is matched to one of them by the same rules as at ingest.
 * @example await resolveTests(idsAsIdentitySource(records.map((r) => r.testId)), failures)
 */
export function idsAsIdentitySource(testIds: Iterable<string>): IdentitySource {
  const bySuite = new Map<string, TestRef[]>()
  for (const testId of testIds) {
    const parts = testId.split(TEST_ID_SEPARATOR)
    if (parts.length < 3) continue
    const [suite, module, ...name] = parts as [string, string, ...string[]]
    const ref: TestRef = { testId, suite, module, name: name.join(TEST_ID_SEPARATOR), file: null }
    const list = bySuite.get(suite)
    if (list) list.push(ref)
    else bySuite.set(suite, [ref])
  }
  return {
    listTests: (filter) => Promise.resolve(bySuite.get(filter.suite) ?? []),
    testNames: () => ({ listNames: () => Promise.resolve([]), recordNames: () => Promise.resolve() }),
  }
}

/** One run's results with reconciled ids; the batch itself when every id stays (a packed batch stays packed). */
function reconcileBatch(
  batch: AnyRunBatch,
  ids: SuiteIdentities,
  project: string | undefined,
  note: (r: Reconciled) => void,
): AnyRunBatch {
  const resolve = (ref: TestRef): TestRef => {
    const r = ids.resolve(ref, project)
    note(r)
    return r.ref
  }
  if (isPacked(batch)) {
    let changed = false
    const plain = batch.count - batch.whole.length
    for (let n = 0; n < plain; n++) {
      const ref = packedRef(batch, n)
      if (resolve(ref).testId !== ref.testId) changed = true
    }
    let wholeChanged = false
    for (const r of batch.whole) if (resolve(r.test).testId !== r.test.testId) wholeChanged = true
    if (!changed && !wholeChanged) return batch
    // Resolving again is a lookup now: every name above was either known or remembered.
    return reconcileBatch(unpackRunBatch(batch), ids, project, () => {})
  }
  let results: Result[] | null = null
  for (let i = 0; i < batch.results.length; i++) {
    const r = batch.results[i]!
    const ref = resolve(r.test)
    if (ref.testId === r.test.testId) continue
    results ??= batch.results.slice()
    results[i] = { ...r, test: ref }
  }
  return results ? { run: batch.run, results } : batch
}
