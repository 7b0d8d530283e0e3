import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ResolvedAnalysisConfig } from '../analysis/index.js'
import { InputError, NotFoundError, StoreError } from '../errors.js'
import { lookForChanges, type LookReport, type LookRequest } from '../notify/look.js'
import { refreshAnalyses, type RefreshOptions } from '../pipeline/persisted-analyses.js'
import type { Store } from '../store/store.js'
import type { Selection } from './selection.js'
import { buildSnapshot, snapshotDelta, type DeltaBase, type Snapshot, type SnapshotDelta } from './snapshot.js'

/** Builds analysis snapshots, in a worker thread or in this one. */
export interface SnapshotBuilder {
  readonly kind: 'worker' | 'in-process'
  /** `now` ends the analysis windows; undefined ends them at the newest selected run. */
  build(selection: Selection, now: number | undefined): Promise<Snapshot>
  /** What writes to `changedRuns` changed in a snapshot (see `snapshotDelta`); null: build in full instead. */
  delta(selection: Selection, base: DeltaBase, changedRuns: string[]): Promise<SnapshotDelta | null>
  /**
   * One look for notification state changes (`lookForChanges`): a whole-store analysis, so it runs where builds
   * run, off the thread that answers requests whenever a worker is possible.
   */
  look(request: LookRequest): Promise<LookReport>
  /**
   * Re-analyses persisted analyses (`refreshAnalyses`): one chunk of the background sweep, likewise reading
   * histories, so likewise off the thread that answers requests (on a connection that may write).
   */
  refresh(chunk: RefreshAsk): Promise<RefreshOutcome>
  close(): Promise<void>
}

/** What the worker is started with. */
export interface SnapshotWorkerData {
  db: string
  cfg: ResolvedAnalysisConfig
}

/** What one refresh re-analyses (see `RefreshOptions`). */
export type RefreshAsk = Pick<RefreshOptions, 'runIds' | 'maxRows' | 'otherConfig' | 'clock'>
export interface RefreshOutcome {
  claimed: number
  written: number
}

type SnapshotAsk =
  | { selection: Selection; now: number | undefined }
  | { selection: Selection; base: DeltaBase; changedRuns: string[] }
  | { look: LookRequest }
  | { refresh: RefreshAsk }
export type SnapshotRequest = SnapshotAsk & { id: number }
export type SnapshotReply =
  | { id: number; snapshot: Snapshot }
  | { id: number; delta: SnapshotDelta | null }
  | { id: number; look: LookReport }
  | { id: number; refreshed: RefreshOutcome }
  | { id: number; error: { code: string | null; message: string } }

const WORKER_URL = new URL('./snapshot-worker.js', import.meta.url)

/** Errors keep their meaning across the thread boundary: a bad revision range is still a 400. */
function revive(error: { code: string | null; message: string }): Error {
  switch (error.code) {
    case 'FW_INPUT':
      return new InputError(error.message)
    case 'FW_NOT_FOUND':
      return new NotFoundError(error.message)
    case 'FW_STORE':
      return new StoreError(error.message)
    default:
      return new Error(error.message)
  }
}

/** A build or look cut short because the builder was closed (the server is stopping): not a failure to report. */
export class AnalysisStoppedError extends Error {
  constructor() {
    super('the analysis was stopped: the server is closing')
    this.name = 'AnalysisStoppedError'
  }
}

/**
 * Builds in a worker thread with its own store connection. A build scans every result synchronously (the SQLite
 * driver is synchronous), so on the main thread it would stall every other request for the length of each
 * page; in a worker, the main thread only pays for receiving the finished snapshot.
 */
class WorkerBuilder implements SnapshotBuilder {
  readonly kind = 'worker' as const
  private worker: Worker | null = null
  private readonly pending = new Map<number, { resolve: (reply: SnapshotReply) => void; reject: (e: Error) => void }>()
  private seq = 0
  private closed = false

  constructor(private readonly data: SnapshotWorkerData) {}

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL, { workerData: this.data })
    // A worker must never keep a process alive that is otherwise done (a test that forgot to close the app).
    worker.unref()
    worker.on('message', (reply: SnapshotReply) => {
      const waiting = this.pending.get(reply.id)
      if (!waiting) return
      this.pending.delete(reply.id)
      if ('error' in reply) waiting.reject(revive(reply.error))
      else waiting.resolve(reply)
    })
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null
      for (const waiting of this.pending.values()) waiting.reject(error)
      this.pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) =>
      fail(
        this.closed ? new AnalysisStoppedError() : new StoreError(`the analysis worker stopped (exit code ${code})`),
      ),
    )
    return worker
  }

  private ask(request: SnapshotAsk): Promise<SnapshotReply> {
    // A worker spawned after close would never be terminated (a sweep chunk or an upload's refresh that asks late).
    if (this.closed) return Promise.reject(new AnalysisStoppedError())
    this.worker ??= this.spawn()
    const id = ++this.seq
    const worker = this.worker
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ id, ...request } satisfies SnapshotRequest)
    })
  }

  async build(selection: Selection, now: number | undefined): Promise<Snapshot> {
    const reply = (await this.ask({ selection, now })) as { snapshot: Snapshot }
    return { ...reply.snapshot, memo: new Map() }
  }

  async delta(selection: Selection, base: DeltaBase, changedRuns: string[]): Promise<SnapshotDelta | null> {
    return ((await this.ask({ selection, base, changedRuns })) as { delta: SnapshotDelta | null }).delta
  }

  async look(request: LookRequest): Promise<LookReport> {
    return ((await this.ask({ look: request })) as { look: LookReport }).look
  }

  async refresh(chunk: RefreshAsk): Promise<RefreshOutcome> {
    return ((await this.ask({ refresh: chunk })) as { refreshed: RefreshOutcome }).refreshed
  }

  async close(): Promise<void> {
    this.closed = true
    const worker = this.worker
    this.worker = null
    if (worker) await worker.terminate()
  }
}

export interface SnapshotBuilderOptions {
  store: Store
  scanStore?: Store
  cfg: ResolvedAnalysisConfig
  /** The store's location (SQLite file or postgres:// URL): with it, builds run in a worker thread. */
  db?: string
  /** Set false to build in this thread even when a worker is possible. */
  worker?: boolean
}

/**
 * A worker-thread builder when the store can be opened a second time (a file or a URL, not `:memory:`) and the
 * compiled worker is present (running from TypeScript sources, it is not); otherwise an in-process one.
 * @example const builder = createSnapshotBuilder({ store, cfg, db: '.flakewatch.db' })
 */
export function createSnapshotBuilder(opts: SnapshotBuilderOptions): SnapshotBuilder {
  const db = opts.db
  const builder: SnapshotBuilder =
    opts.worker !== false && db && db !== ':memory:' && existsSync(fileURLToPath(WORKER_URL))
      ? new WorkerBuilder({ db, cfg: opts.cfg })
      : {
          kind: 'in-process',
          build: (selection, now) =>
            buildSnapshot(opts.store, selection, { cfg: opts.cfg, now, scanStore: opts.scanStore }),
          delta: (selection, base, changedRuns) => snapshotDelta(opts.store, selection, base, changedRuns, opts.cfg),
          look: (request) => lookForChanges(opts.store, opts.scanStore ?? opts.store, request),
          refresh: (chunk) => refreshAnalyses(opts.store, opts.cfg, chunk),
          close: () => Promise.resolve(),
        }
  // Refreshes one at a time (the sweep's chunks, reads' and uploads'): two at once would each skip or redo the rows
  // the other leased.
  return {
    kind: builder.kind,
    build: (selection, now) => builder.build(selection, now),
    delta: (selection, base, changedRuns) => builder.delta(selection, base, changedRuns),
    look: (request) => builder.look(request),
    // An upload's refresh (its 201 waits for it) goes before the sweep's chunks and reads' refreshes waiting.
    refresh: oneAtATime(
      (chunk: RefreshAsk) => builder.refresh(chunk),
      (chunk) => chunk.runIds !== undefined,
    ),
    close: () => builder.close(),
  }
}

/**
 * `fn`, called again only once its previous call settled. Calls wait their turn in the order they were made, but
 * those for which `first` holds go before every waiting call for which it does not.
 */
export function oneAtATime<A, R>(
  fn: (arg: A) => Promise<R>,
  first: (arg: A) => boolean = () => false,
): (arg: A) => Promise<R> {
  const waiting: { first: boolean; start: () => void }[] = []
  let running = false
  const next = () => {
    const turn = waiting.shift()
    running = turn !== undefined
    turn?.start()
  }
  return (arg) =>
    new Promise<R>((resolve, reject) => {
      // A call that throws at once still hands the turn on.
      const start = () =>
        void Promise.resolve()
          .then(() => fn(arg))
          .then(resolve, reject)
          .finally(next)
      const ahead = first(arg)
      if (!running) {
        running = true
        start()
        return
      }
      const at = ahead ? waiting.findIndex((w) => !w.first) : -1
      waiting.splice(at < 0 ? waiting.length : at, 0, { first: ahead, start })
    })
}
