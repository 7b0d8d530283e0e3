import { SuiteIdentities, type Reconciled } from '../ingest/test-identity.js'
import type { Result, TestRef } from '../model.js'
import { isPacked, packedRef, unpackRunBatch, type AnyRunBatch } from '../store/packed-results.js'
import type { ReportStream, Store } from '../store/store.js'
import type { TestName } from '../store/test-names.js'

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

  constructor(private readonly store: Pick<Store, 'listTests' | 'testNames'>) {}

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
    const remember = async () => {
      const at = new Date().toISOString()
      const names: TestName[] = []
      for (const [ids, suite] of begun) {
        for (const n of ids.takeNewNames()) names.push({ ...n, suite, source: 'ingest', at })
      }
      await this.store.testNames().recordNames(names)
    }
    return { stream: { ...stream, chunks: chunks() }, warnings, remember }
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
