import { fork, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { StoreError } from '../errors.js'
import type { IngestSummary } from '../pipeline/ingest-files.js'
import type { Store } from '../store/store.js'
import { UPLOAD_WORKER_V8_FLAGS, uploadWorkerEnv } from './memory-settings.js'
import { REFRESH_BEFORE_ANSWER_ROWS, refreshWarning } from '../pipeline/persisted-analyses.js'
import { ingestUpload, warnAll, type UploadJob, type UploadRefresh } from './upload-job.js'
import { lowerProcessPriority } from './worker-priority.js'

/** To an upload worker: first the store to open, then one upload at a time. */
export type UploadRequest = { db: string } | { id: number; job: UploadJob }
export type UploadReply = { id: number; summary: IngestSummary } | { id: number; error: string }

/** A place in the queue, taken before the body is read and given back once the upload is stored (or refused). */
export interface UploadSlot {
  state: 'reserved' | 'running' | 'done'
}

export interface UploadPoolStats {
  /** Uploads accepted and not yet answered: receiving their body, waiting for a worker, or being stored. */
  accepted: number
  /** Being parsed and stored right now. */
  running: number
  capacity: number
  workers: number
}

/** A worker that died mid-upload (out of memory, a native crash) gets the upload again, this many times in all. */
const MAX_ATTEMPTS = 3

const WORKER_URL = new URL('./upload-worker.js', import.meta.url)

/** Most stored uploads whose tests one refresh re-analyses together. */
const MAX_REFRESH_BATCH = 16

interface Queued {
  job: UploadJob
  /** Whether its tests are re-analysed by the pool (`UploadPoolOptions.refresh`) once it is stored. */
  refresh: boolean
  attempts: number
  resolve: (summary: IngestSummary) => void
  reject: (error: Error) => void
}

interface Thread {
  worker: ChildProcess
  busy: Queued | null
}

export interface UploadPoolOptions {
  store: Store
  /** The store's location: with it (and a compiled worker), uploads are parsed and stored in worker processes. */
  db?: string
  /** Uploads accepted at once; one more is refused (503). */
  capacity: number
  /**
   * Worker processes; default 1 on SQLite (one writer at a time anyway), and on PostgreSQL one per core beyond
   * the one the HTTP thread needs, 1 to 4.
   */
  workers?: number | null
  /** Set false to parse and store on this thread even when workers are possible. */
  worker?: boolean
  /**
   * Where stored uploads have their tests re-analysed, several at once (the analysis thread, when there is one; see
   * `UploadPool`). Without it, the process that stored an upload re-analyses its tests itself.
   */
  refresh?: UploadRefresh
}

/**
 * Uploads are parsed and stored off the HTTP thread, in worker processes at a lower OS priority with store
 * connections of their own, fed by a bounded FIFO queue. Processes, not threads: a thread cannot be reniced
 * portably, and a busy worker thread at the server's priority takes as much CPU as the HTTP thread. A request takes a slot before its body is read, so a full queue is refused at once (503)
 * instead of buffering bodies it cannot store soon; an accepted upload is always stored, even when its client went
 * away, and `close()` waits for every accepted one. Without a file or URL to open a second connection (`:memory:`)
 * or a compiled worker (running from TypeScript sources), uploads run on this thread, one at a time.
 *
 * An upload is answered once its tests' analyses are re-analysed too (`refresh`), by a refresh that began after
 * its commit. Uploads are stored first and re-analysed together: when nothing is being stored and no upload waits
 * (or {@link MAX_REFRESH_BATCH} wait for their refresh), one refresh takes the runs of every upload stored since
 * the last, and no upload is stored while it runs. Uploads of one suite touch the same files, so ten stored at
 * once cost one refresh of their tests, not ten; and a refresh never races a commit that would mark its rows stale
 * again (the refresh would then write none of them).
 */
export class UploadPool {
  readonly kind: 'worker' | 'in-process'
  private readonly threads: Thread[] = []
  private readonly waiting: Queued[] = []
  private accepted = 0
  private running = 0
  private readonly size: number
  private closed = false
  private drained: (() => void) | null = null
  /** Recent upload durations, to tell a refused client when to come back. */
  private meanMs = 1000
  private seq = 0
  /** Stored uploads waiting for their refresh. */
  private readonly stored: { summary: IngestSummary; resolve: (summary: IngestSummary) => void }[] = []
  private refreshing = false

  constructor(private readonly opts: UploadPoolOptions) {
    const db = opts.db
    const canWork = opts.worker !== false && db !== undefined && db !== ':memory:'
    this.kind = canWork && existsSync(fileURLToPath(WORKER_URL)) ? 'worker' : 'in-process'
    this.size = this.kind === 'in-process' ? 1 : (opts.workers ?? defaultWorkers(opts.store.kind))
  }

  stats(): UploadPoolStats {
    return { accepted: this.accepted, running: this.running, capacity: this.opts.capacity, workers: this.size }
  }

  /** A slot for one more upload, or null when the queue is full (or the server is closing). */
  reserve(): UploadSlot | null {
    if (this.closed || this.accepted >= this.opts.capacity) return null
    this.accepted++
    return { state: 'reserved' }
  }

  /** Gives back a slot whose request ended before its upload was queued (a bad request, an aborted body). */
  release(slot: UploadSlot): void {
    if (slot.state !== 'reserved') return
    slot.state = 'done'
    this.finish()
  }

  /** Seconds a refused client should wait: the queue ahead of it, at the recent pace, over the workers. */
  retryAfterSeconds(): number {
    const seconds = Math.ceil((this.accepted * this.meanMs) / this.size / 1000)
    return Math.min(60, Math.max(1, seconds))
  }

  /**
   * Parses and stores an upload that holds `slot`; resolves once it is committed (or refused by its content) and,
   * when the job carries the analysis configuration, once its tests are re-analysed (see {@link UploadPool}).
   */
  run(slot: UploadSlot, job: UploadJob): Promise<IngestSummary> {
    if (slot.state !== 'reserved') return Promise.reject(new Error('upload slot already used'))
    slot.state = 'running'
    const started = performance.now()
    // The worker stores it; its refresh is the pool's, with the uploads stored beside it.
    const refresh = job.analysis !== undefined && this.opts.refresh !== undefined
    const stored = refresh ? { ...job, analysis: undefined } : job
    return new Promise<IngestSummary>((resolve, reject) => {
      this.waiting.push({ job: stored, refresh, attempts: 0, resolve, reject })
      this.pump()
    }).finally(() => {
      this.meanMs = this.meanMs * 0.8 + (performance.now() - started) * 0.2
      slot.state = 'done'
      this.finish()
    })
  }

  /** Refuses new uploads, waits for every accepted one to be stored, then stops the workers. */
  async close(): Promise<void> {
    this.closed = true
    if (this.accepted > 0) await new Promise<void>((resolve) => (this.drained = resolve))
    await Promise.all(this.threads.map((t) => stopWorker(t.worker)))
    this.threads.length = 0
  }

  private finish(): void {
    this.accepted--
    if (this.accepted === 0) this.drained?.()
  }

  private pump(): void {
    if (this.refreshing) return
    const batchFull = this.stored.length >= MAX_REFRESH_BATCH
    if (this.stored.length > 0 && this.running === 0 && (this.waiting.length === 0 || batchFull)) {
      void this.refreshStored()
      return
    }
    while (this.waiting.length > 0 && this.running < this.size && !batchFull) {
      const next = this.waiting.shift()!
      this.running++
      if (this.kind === 'in-process') void this.runHere(next)
      else this.dispatch(next)
    }
  }

  private async runHere(q: Queued): Promise<void> {
    try {
      this.storedOne(q, await ingestUpload(this.opts.store, q.job))
    } catch (error) {
      q.reject(error as Error)
    } finally {
      this.running--
      this.pump()
    }
  }

  /** An upload is stored: answered now, or once the refresh of the uploads stored with it is done. */
  private storedOne(q: Queued, summary: IngestSummary): void {
    if (q.refresh && summary.ingested.length > 0) this.stored.push({ summary, resolve: q.resolve })
    else q.resolve(summary)
  }

  /** Re-analyses the tests of every stored upload in one refresh, then answers them (a failure is a warning). */
  private async refreshStored(): Promise<void> {
    this.refreshing = true
    const batch = this.stored.splice(0, MAX_REFRESH_BATCH)
    const runIds = [...new Set(batch.flatMap((b) => b.summary.ingested.map((i) => i.run_id)))]
    // Each upload's bound, summed: together they re-analyse no more than one by one.
    const warning = await this.opts.refresh!(runIds, REFRESH_BEFORE_ANSWER_ROWS * batch.length).then(
      () => null,
      refreshWarning,
    )
    for (const b of batch) {
      warnAll(b.summary, warning)
      b.resolve(b.summary)
    }
    this.refreshing = false
    this.pump()
  }

  private dispatch(q: Queued): void {
    const thread = this.threads.find((t) => t.busy === null) ?? this.spawn()
    thread.busy = q
    q.attempts++
    // Copied, not transferred: if the worker dies mid-upload, the bytes are still here to give to another one.
    thread.worker.send({ id: ++this.seq, job: q.job } satisfies UploadRequest)
  }

  private spawn(): Thread {
    // Advanced serialization: an upload held in memory crosses as bytes, not as a JSON array of numbers.
    const worker = fork(fileURLToPath(WORKER_URL), [], {
      serialization: 'advanced',
      stdio: 'inherit',
      execArgv: [...process.execArgv, ...UPLOAD_WORKER_V8_FLAGS],
      env: uploadWorkerEnv(process.env),
    })
    lowerProcessPriority(worker.pid)
    worker.send({ db: this.opts.db! } satisfies UploadRequest)
    // A worker must never keep a process alive that is otherwise done (a test that forgot to close the app).
    worker.unref()
    worker.channel?.unref()
    const thread: Thread = { worker, busy: null }
    this.threads.push(thread)
    const done = () => {
      thread.busy = null
      this.running--
      this.pump()
    }
    worker.on('message', (reply: UploadReply) => {
      const q = thread.busy
      if (!q) return
      // Kept for its refresh before the pool looks for what to do next.
      if ('error' in reply) q.reject(new StoreError(reply.error))
      else this.storedOne(q, reply.summary)
      done()
    })
    worker.on('error', () => undefined)
    worker.on('exit', (code, signal) => {
      const at = this.threads.indexOf(thread)
      if (at >= 0) this.threads.splice(at, 1)
      const q = thread.busy
      if (!q) return
      // The worker's transaction died with it, so the report is not half stored: give it to another worker.
      done()
      if (q.attempts >= MAX_ATTEMPTS || this.closed) {
        const how = signal ? `signal ${signal}` : `exit code ${code}`
        q.reject(new StoreError(`the upload worker stopped (${how}) ${q.attempts} times on this upload`))
      } else {
        this.waiting.unshift(q)
        this.pump()
      }
    })
    return thread
  }
}

function defaultWorkers(kind: Store['kind']): number {
  if (kind !== 'postgres') return 1
  return Math.min(4, Math.max(1, availableParallelism() - 1))
}

/** Ends an idle worker: it closes its store and exits once its channel is gone. */
function stopWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    worker.once('exit', () => resolve())
    worker.disconnect()
  })
}
