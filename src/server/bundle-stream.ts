import { existsSync } from 'node:fs'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ResolvedConfig } from '../config/load.js'
import { StoreError } from '../errors.js'
import { bundleChunks, type BundleExportOptions } from '../export/write-bundle.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { Store } from '../store/store.js'

/** What the bundle worker is started with: plain data, so the code owners are looked up again over there. */
export interface BundleWorkerData {
  db: string
  options: Omit<BundleExportOptions, 'owners'>
  owners: { config: Pick<ResolvedConfig, 'codeowners' | 'file'>; cwd: string }
}

/** To the worker: send the next chunk, or stop (the client went away). */
export type BundlePull = 'pull' | 'stop'
/** From the worker: one chunk (its bytes transferred, not copied), the end, or what went wrong. */
export type BundleChunk = { bytes: Uint8Array } | { done: true } | { error: string }

const WORKER_URL = new URL('./bundle-worker.js', import.meta.url)

/** Where bundles are written for a store at `db`: a worker thread needs a location to open and the compiled worker. */
export function bundleStreamKind(db: string | undefined): 'worker' | 'in-process' {
  return db && db !== ':memory:' && existsSync(fileURLToPath(WORKER_URL)) ? 'worker' : 'in-process'
}

export interface BundleStreamOptions {
  /** The store, for the in-process fallback (a `:memory:` store, or running from TypeScript sources). */
  scanStore: Store
  /** The store's location: with it, the bundle is written in a worker thread on a read-only connection. */
  db?: string
  options: Omit<BundleExportOptions, 'owners'>
  owners: OwnerLookup
  ownersConfig: BundleWorkerData['owners']
}

/**
 * The bundle as a byte stream. Writing it reads every stored result, which on SQLite's synchronous driver would
 * hold the HTTP thread for each page it reads; so a worker thread writes it, one chunk per pull. A chunk is
 * asked for only when the response has room for it, so a slow client slows the worker down instead of piling
 * chunks up in memory; a client that goes away stops the worker.
 * @example reply.send(bundleStream({ scanStore, db, options, owners, ownersConfig }))
 */
export function bundleStream(opts: BundleStreamOptions): Readable {
  const db = opts.db
  if (!db || bundleStreamKind(db) === 'in-process') {
    return Readable.from(bundleChunks(opts.scanStore, { ...opts.options, owners: opts.owners }), { objectMode: false })
  }
  const data: BundleWorkerData = { db, options: opts.options, owners: opts.ownersConfig }
  let worker: Worker | null = null
  let ended = false
  const stream = new Readable({
    read() {
      if (!worker) {
        worker = new Worker(WORKER_URL, { workerData: data })
        // A worker must never keep a process alive that is otherwise done.
        worker.unref()
        worker.on('message', (reply: BundleChunk) => {
          if ('bytes' in reply) stream.push(reply.bytes)
          else if ('done' in reply) finish(null)
          else finish(new StoreError(`bundle export failed: ${reply.error}`))
        })
        worker.on('error', (error) => finish(error))
        worker.on('exit', (code) =>
          finish(ended ? null : new StoreError(`the bundle worker stopped (exit code ${code})`)),
        )
      }
      worker.postMessage('pull' satisfies BundlePull)
    },
    destroy(error, callback) {
      ended = true
      // The client went away (or the bundle failed): the worker closes its connection and exits.
      worker?.postMessage('stop' satisfies BundlePull)
      callback(error)
    },
  })
  function finish(error: Error | null): void {
    if (ended) return
    ended = true
    if (error) stream.destroy(error)
    else stream.push(null)
  }
  return stream
}
