import { parentPort, workerData } from 'node:worker_threads'
import { bundleChunks } from '../export/write-bundle.js'
import { ownerLookupFromConfig } from '../owners/read-codeowners.js'
import { openStore } from '../store/open.js'
import type { BundleChunk, BundlePull, BundleWorkerData } from './bundle-stream.js'
import { lowerThreadPriority } from './worker-priority.js'

/** A bundle download: its own read-only connection, one chunk per pull from the HTTP thread, then exit. */
const { db, options, owners } = workerData as BundleWorkerData
const port = parentPort!
const encoder = new TextEncoder()
// Below the HTTP thread: a download may take longer, a read must not.
lowerThreadPriority()

const store = await openStore({ db, env: {}, readOnly: true })
const chunks = bundleChunks(store, { ...options, owners: ownerLookupFromConfig(owners.config, owners.cwd) })
let stopped = false
// Pulls are answered in order: each waits for the chunk before it.
let turn: Promise<void> = Promise.resolve()

async function stop(): Promise<void> {
  if (stopped) return
  stopped = true
  await chunks.return(undefined).catch(() => undefined)
  await store.close()
  port.close()
}

async function next(): Promise<void> {
  if (stopped) return
  try {
    const step = await chunks.next()
    if (step.done) {
      port.postMessage({ done: true } satisfies BundleChunk)
      return stop()
    }
    const bytes = encoder.encode(step.value)
    port.postMessage({ bytes } satisfies BundleChunk, [bytes.buffer])
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies BundleChunk)
    return stop()
  }
}

port.on('message', (message: BundlePull) => {
  turn = turn.then(message === 'stop' ? stop : next)
})
