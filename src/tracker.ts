import { randomUUID } from 'node:crypto'
import { makeTestId, TEST_ID_SEPARATOR, type EnvFacets, type ResultStatus, type TestRef } from './model.js'
import { DEFAULT_SUITE } from './pipeline/build-batch.js'
import { IdentityReconciler } from './pipeline/reconcile-ids.js'
import { toRunMeta } from './pipeline/run-context.js'
import { openStore, type OpenStoreOptions } from './store/open.js'
import type { Store } from './store/store.js'

export interface RecordRunOptions {
  durationMs?: number | null
  healingOccurred?: boolean
  errorType?: string | null
  message?: string | null
  /** Environment facets of this execution. */
  environment?: EnvFacets
  /** Group several records into one run; default: a new run per call. */
  runId?: string
  branch?: string | null
  revision?: string | null
  /** When it ran (default: now). */
  at?: Date
}

/** One stored execution, as `getRuns` returns it. */
export interface TrackedRun {
  runId: string
  status: ResultStatus
  at: string
  durationMs: number | null
  healingOccurred: boolean
  errorType: string | null
  environment: EnvFacets
  flakyOnRetry: boolean
}

/** Splits `suite::module::name`; a plain name lands in the default suite. */
export function parseTestId(testId: string): TestRef {
  const parts = testId.split(TEST_ID_SEPARATOR)
  if (parts.length >= 3) {
    const [suite, module, ...rest] = parts
    return { testId, suite: suite!, module: module!, name: rest.join(TEST_ID_SEPARATOR), file: null }
  }
  const ref = { suite: DEFAULT_SUITE, module: parts.length === 2 ? parts[0]! : '', name: parts.at(-1)! }
  return { ...ref, testId: makeTestId(ref.suite, ref.module, ref.name), file: null }
}

/**
 * The TestTracker of the Breadcrumb design: record one test execution at a time, read a test's runs back.
 * For whole reports use `ingestFiles`; this is for custom harnesses and scripts.
 * @example
 * const tracker = await TestTracker.open({ db: '.flakewatch.db' })
 * await tracker.recordRun('unit::cart::adds item', 'failed', { durationMs: 120, environment: { os: 'linux' } })
 * const runs = await tracker.getRuns('unit::cart::adds item')
 */
export class TestTracker {
  /**
   * Matches a name to the test the store knows (as ingest does), so that a name under another reporter's
   * convention records into, and reads, that test's history. What the store knows of a suite is read on its first
   * use and kept up to date with the tests this tracker adds.
   */
  private readonly ids: IdentityReconciler

  private constructor(readonly store: Store) {
    this.ids = new IdentityReconciler(store)
  }

  static async open(opts: OpenStoreOptions = {}): Promise<TestTracker> {
    return new TestTracker(await openStore(opts))
  }

  static fromStore(store: Store): TestTracker {
    return new TestTracker(store)
  }

  async recordRun(testId: string, status: ResultStatus, opts: RecordRunOptions = {}): Promise<void> {
    const { refs, remember } = await this.ids.resolveTests([
      { ref: parseTestId(testId), project: opts.environment?.project },
    ])
    const test = refs[0]!
    const at = (opts.at ?? new Date()).toISOString()
    const runId = opts.runId ?? `tracker-${randomUUID()}`
    await this.store.ingestReport({
      file: 'TestTracker.recordRun',
      contentHash: `${runId}:${test.testId}`,
      runs: [
        {
          run: toRunMeta(runId, test.suite, {
            branch: opts.branch,
            revision: opts.revision,
            env: opts.environment,
            startedAt: at,
          }),
          results: [
            {
              test,
              status,
              flakyOnRetry: false,
              durationMs: opts.durationMs ?? null,
              errorType: opts.errorType ?? null,
              message: opts.message ?? null,
              healingOccurred: opts.healingOccurred ?? false,
              attempts: [],
            },
          ],
        },
      ],
    })
    await remember()
  }

  /** A test's runs, newest first; `testId` may be any name the test was recorded or reported under. */
  async getRuns(testId: string, limit = 100): Promise<TrackedRun[]> {
    const { refs } = await this.ids.resolveTests([{ ref: parseTestId(testId) }])
    const history = await this.store.getTestHistory(refs[0]!.testId, { limit })
    if (!history) return []
    return history.entries
      .map((e) => ({
        runId: e.run.runId,
        status: e.status,
        at: new Date(e.run.at).toISOString(),
        durationMs: e.durationMs,
        healingOccurred: e.healingOccurred,
        errorType: e.errorType,
        environment: e.run.env,
        flakyOnRetry: e.flakyOnRetry,
      }))
      .reverse()
  }

  async getAllTestIds(): Promise<string[]> {
    return (await this.store.listTests()).map((t) => t.testId)
  }

  close(): Promise<void> {
    return this.store.close()
  }
}
