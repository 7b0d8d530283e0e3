import { parentPort, workerData } from 'node:worker_threads'
import { FlakewatchError } from '../errors.js'
import { openStore } from '../store/open.js'
import { buildSnapshot } from './snapshot.js'
import type { SnapshotReply, SnapshotRequest, SnapshotWorkerData } from './snapshot-builder.js'

/** The analysis worker: its own store connection, one build at a time, answers by message. */
const { db, cfg } = workerData as SnapshotWorkerData
const port = parentPort!
// Analysis only reads: it must never wait behind an upload's write lock.
const store = await openStore({ db, env: {}, readOnly: true })

port.on('message', (request: SnapshotRequest) => {
  buildSnapshot(store, request.selection, { cfg, now: request.now }).then(
    (snapshot) => port.postMessage({ id: request.id, snapshot } satisfies SnapshotReply),
    (error: unknown) => {
      const code = error instanceof FlakewatchError ? error.code : null
      const message = error instanceof Error ? error.message : String(error)
      port.postMessage({ id: request.id, error: { code, message } } satisfies SnapshotReply)
    },
  )
})
