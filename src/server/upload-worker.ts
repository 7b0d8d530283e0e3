import { parentPort, workerData } from 'node:worker_threads'
import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'
import { ingestUpload } from './upload-job.js'
import type { UploadReply, UploadRequest, UploadWorkerData } from './upload-pool.js'

/** An upload worker: its own store connection, one upload at a time, parsed and stored here, answered by message. */
const { db } = workerData as UploadWorkerData
const port = parentPort!
let store: Store | null = null
let opening: Promise<Store> | null = null

/** Opened on first use, and again after a failure (a database that was down when the server started). */
function connection(): Promise<Store> {
  if (store) return Promise.resolve(store)
  opening ??= openStore({ db, env: {} }).then(
    (s) => (store = s),
    (error: unknown) => {
      opening = null
      throw error
    },
  )
  return opening
}

async function handle(request: UploadRequest): Promise<UploadReply> {
  try {
    return { id: request.id, summary: await ingestUpload(await connection(), request.job) }
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.message : String(error) }
  }
}

port.on('message', (request: UploadRequest) => {
  void handle(request).then((reply) => port.postMessage(reply))
})
