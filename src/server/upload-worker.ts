import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'
import { SERVER_CACHE_MB } from './memory-settings.js'
import { ingestUpload } from './upload-job.js'
import type { UploadReply, UploadRequest } from './upload-pool.js'

/**
 * An upload worker process (see `UploadPool`): its own store connection, one upload at a time, parsed and stored
 * here, answered by message. It exits when the server lets go of it, or is gone.
 */
let db: string | null = null
let store: Store | null = null
let opening: Promise<Store> | null = null
let busy: Promise<unknown> = Promise.resolve()

/** Opened on first use, and again after a failure (a database that was down when the server started). */
function connection(): Promise<Store> {
  if (store) return Promise.resolve(store)
  opening ??= openStore({ db: db!, env: {}, cacheMb: SERVER_CACHE_MB.upload }).then(
    (s) => (store = s),
    (error: unknown) => {
      opening = null
      throw error
    },
  )
  return opening
}

async function handle(request: {
  id: number
  job: Extract<UploadRequest, { job: unknown }>['job']
}): Promise<UploadReply> {
  try {
    return { id: request.id, summary: await ingestUpload(await connection(), request.job) }
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.message : String(error) }
  }
}

process.on('message', (request: UploadRequest) => {
  if ('db' in request) {
    db = request.db
    return
  }
  busy = handle(request).then((reply) => process.connected && process.send!(reply))
})

// The server closed the channel (closing, or gone): finish the upload in hand, close the store, exit.
process.on('disconnect', () => {
  void busy.then(async () => {
    await store?.close()
    process.exit(0)
  })
})
