import { parentPort, workerData } from 'node:worker_threads'
import { FlakewatchError } from '../errors.js'
import { lookForChanges } from '../notify/look.js'
import { refreshAnalyses } from '../pipeline/persisted-analyses.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'
import { buildSnapshot, snapshotDelta } from './snapshot.js'
import { SERVER_CACHE_MB } from './memory-settings.js'
import { lowerThreadPriority } from './worker-priority.js'
import type { SnapshotReply, SnapshotRequest, SnapshotWorkerData } from './snapshot-builder.js'

/** The analysis worker: its own store connection, one build at a time, answers by message. */
const { db, cfg } = workerData as SnapshotWorkerData
const port = parentPort!
// Below the HTTP thread: an analysis update must never delay a read.
lowerThreadPriority()
// Analysis only reads: it must never wait behind an upload's write lock.
const store = await openStore({ db, env: {}, readOnly: true, cacheMb: SERVER_CACHE_MB.analysis })
/**
 * Notification looks write (states, the outbox, the delivery log), and so do refreshes of the persisted analyses
 * (claims, rows): a connection of their own, opened at the first.
 */
let writer: Promise<Store> | undefined

function writing(): Promise<Store> {
  writer ??= openStore({ db, env: {}, cacheMb: SERVER_CACHE_MB.serving }).catch((error: unknown) => {
    writer = undefined
    throw error
  })
  return writer
}

async function answer(request: SnapshotRequest): Promise<SnapshotReply> {
  if ('look' in request) return { id: request.id, look: await lookForChanges(await writing(), store, request.look) }
  if ('refresh' in request) {
    return { id: request.id, refreshed: await refreshAnalyses(await writing(), cfg, request.refresh) }
  }
  if ('base' in request) {
    return {
      id: request.id,
      delta: await snapshotDelta(store, request.selection, request.base, request.changedRuns, cfg),
    }
  }
  return { id: request.id, snapshot: await buildSnapshot(store, request.selection, { cfg, now: request.now }) }
}

port.on('message', (request: SnapshotRequest) => {
  answer(request).then(
    (reply) => port.postMessage(reply),
    (error: unknown) => {
      const code = error instanceof FlakewatchError ? error.code : null
      const message = error instanceof Error ? error.message : String(error)
      port.postMessage({ id: request.id, error: { code, message } } satisfies SnapshotReply)
    },
  )
})
