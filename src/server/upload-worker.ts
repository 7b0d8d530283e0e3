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

/** Uploads received and not yet answered. */
let inHand = 0

/** Exit code of a worker whose server died with an upload in hand (EX_TEMPFAIL: the client is to send it again). */
const ORPHANED_EXIT_CODE = 75

process.on('message', (request: UploadRequest) => {
  if ('db' in request) {
    db = request.db
    return
  }
  inHand++
  busy = handle(request).then((reply) => {
    inHand--
    if (process.connected) process.send!(reply)
  })
})

/**
 * The channel closed. A server that closes lets its workers go only once every accepted upload is stored, so a
 * channel that closes with an upload in hand means the server is gone (kill -9, a crash, the OOM killer). Nobody
 * would receive the answer, and a restarted server would compete with this process for the write lock: exit at
 * once, so the upload's transaction is rolled back, never committed. The client, which got no answer, sends it again.
 * The worker learns of its server's end at its next turn of the event loop: a report's chunks are written across
 * turns, so it is never more than one chunk away from seeing it.
 */
process.on('disconnect', () => {
  if (inHand > 0) process.exit(ORPHANED_EXIT_CODE)
  void busy.then(async () => {
    await store?.close()
    process.exit(0)
  })
})
