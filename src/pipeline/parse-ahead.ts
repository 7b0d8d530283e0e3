import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { FlakewatchError, StoreError } from '../errors.js'
import type { RunMeta } from '../model.js'
import type { AnyRunBatch, PackedRunBatch } from '../store/packed-results.js'
import type { ReportStream } from '../store/store.js'
import type { ParseReportOptions } from './ingest-files.js'

/** What the parse worker is started with. */
export interface ParseAheadData {
  files: string[]
  opts: ParseReportOptions
  /** Messages the worker may have sent that the store has not taken yet: the bound on memory between threads. */
  window: number
}

/**
 * From the worker, per report in order: opened, its chunks, then end; or an error at any point instead; or, for a
 * report of at most one chunk, all of that in one message (`whole`).
 */
export type FromParser =
  | { kind: 'opened'; file: string; contentHash: string }
  | { kind: 'whole'; file: string; contentHash: string; batch: PackedRunBatch[]; runs: RunMeta[]; warnings: string[] }
  /** A file too big to parse in a second heap: the store's thread parses it itself. */
  | { kind: 'local'; file: string }
  | { kind: 'chunk'; file: string; batch: PackedRunBatch[] }
  | { kind: 'end'; file: string; runs: RunMeta[]; warnings: string[] }
  | { kind: 'error'; file: string; message: string; code: string | undefined }

const WORKER_URL = new URL('./parse-worker.js', import.meta.url)

/** A few chunks in flight: enough to keep both threads busy, few enough that memory stays a few chunks. */
const WINDOW = 6

/**
 * Credits go back to the worker this many at a time: each message wakes the worker's thread, and on a busy machine
 * every wake-up cost the storing thread its core for a while (measured: 0.3-0.7 s of a 5 s ingest).
 */
const CREDITS_PER_MESSAGE = WINDOW / 2

/** An error the parse worker raised on purpose, with its code and message as they were. */
class RelayedError extends FlakewatchError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

function relayed(m: Extract<FromParser, { kind: 'error' }>): Error {
  return m.code ? new RelayedError(m.code, m.message) : new Error(m.message)
}

/**
 * Parses the command's reports in a worker thread while this thread stores them: the store only binds and runs
 * its statements, and the next report is parsed while this one commits. Null for a single file (a worker costs tens
 * of ms to start) or where a worker cannot run (from the TypeScript sources): the caller parses in this thread.
 * @example const ahead = await parseAhead(files, opts); const { stream } = await ahead.next(files[0])
 */
export function parseAhead(files: string[], opts: ParseReportOptions): ParseAhead | null {
  if (files.length < 2 || !existsSync(fileURLToPath(WORKER_URL))) return null
  const { format, context, limits, root } = opts
  return new ParseAhead({ files, opts: { format, context, limits, root }, window: WINDOW })
}

export class ParseAhead {
  private readonly worker: Worker
  private readonly queue: FromParser[] = []
  private waiting: ((m: FromParser) => void) | null = null
  private failure: Error | null = null
  /** The report handed out last has not reached its end yet (the store stopped pulling it early). */
  private unfinished = false
  /** Messages taken whose credit has not gone back to the worker yet. */
  private owed = 0

  constructor(data: ParseAheadData) {
    this.worker = new Worker(WORKER_URL, { workerData: data })
    this.worker.on('message', (m: FromParser) => {
      if (this.waiting) {
        const deliver = this.waiting
        this.waiting = null
        deliver(m)
      } else this.queue.push(m)
    })
    const fail = (error: Error) => {
      this.failure ??= error
      const deliver = this.waiting
      this.waiting = null
      deliver?.({ kind: 'error', file: '', message: this.failure.message, code: undefined })
    }
    this.worker.on('error', (error) => fail(new StoreError(`the parse worker failed: ${error.message}`)))
    this.worker.on('exit', (code) => fail(new StoreError(`the parse worker stopped (exit code ${code})`)))
  }

  /** The next message; taking one gives the worker a credit for another. */
  private async take(): Promise<FromParser> {
    const m =
      this.queue.shift() ??
      (this.failure
        ? ({ kind: 'error', file: '', message: this.failure.message, code: undefined } as const)
        : await new Promise<FromParser>((resolve) => (this.waiting = resolve)))
    if (++this.owed === CREDITS_PER_MESSAGE && !this.failure) {
      this.worker.postMessage(this.owed)
      this.owed = 0
    }
    return m
  }

  /**
   * The stream of the next report, which must be `file` (reports come in the order given). Throws the report's
   * own error (the same message and code the single-thread path gives) when it cannot be opened or parsed. Null
   * for a file over 8 MB: the caller parses it in this thread (a second heap would double what it costs).
   */
  async next(file: string): Promise<{ stream: ReportStream; warnings: () => string[] } | null> {
    while (this.unfinished) {
      const m = await this.take()
      if (m.kind === 'end' || m.kind === 'error') this.unfinished = false
    }
    const first = await this.take()
    if (first.kind === 'error') throw relayed(first)
    if (first.kind === 'local' && first.file === file) return null
    if (first.kind === 'whole' && first.file === file) {
      const { batch, runs, warnings } = first
      // eslint-disable-next-line @typescript-eslint/require-await -- an async iterable of one chunk already in memory
      async function* chunks(): AsyncGenerator<AnyRunBatch[], void, undefined> {
        if (batch.length > 0) yield batch
      }
      return {
        stream: { file, contentHash: first.contentHash, chunks: chunks(), runs: () => runs },
        warnings: () => warnings,
      }
    }
    if (first.kind !== 'opened' || first.file !== file) {
      throw new StoreError(`the parse worker is out of step: ${first.kind} of ${first.file}, expected ${file}`)
    }
    this.unfinished = true
    let end: Extract<FromParser, { kind: 'end' }> | null = null
    const chunks = async function* (this: ParseAhead): AsyncGenerator<AnyRunBatch[], void, undefined> {
      for (;;) {
        const m = await this.take()
        if (m.kind === 'chunk') yield m.batch
        else {
          this.unfinished = false
          if (m.kind === 'end') return void (end = m)
          throw relayed(m as Extract<FromParser, { kind: 'error' }>)
        }
      }
    }.call(this)
    const stream: ReportStream = { file, contentHash: first.contentHash, chunks, runs: () => end?.runs ?? [] }
    return { stream, warnings: () => end?.warnings ?? [] }
  }

  async close(): Promise<void> {
    this.failure ??= new StoreError('the parse worker was closed')
    await this.worker.terminate()
  }
}
