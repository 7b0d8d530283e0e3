import { parentPort, workerData } from 'node:worker_threads'
import { FlakewatchError } from '../errors.js'
import { openReportStream, openSmallReportFileSync } from './ingest-files.js'
import { packRunBatch, TestSlots } from '../store/packed-results.js'
import type { FromParser, ParseAheadData } from './parse-ahead.js'
import type { RunBatch } from '../store/store.js'

/**
 * The parsing side of `parseAhead`: reads, parses and normalises the command's reports in order, one message per
 * step, and waits for a credit before each one, so that at most `window` messages are ever in flight.
 */
const { files, opts, window } = workerData as ParseAheadData
const port = parentPort!
let credits = window
// One numbering for the whole command: a test's slot stays the same from report to report.
const slots = new TestSlots()
let wake: (() => void) | null = null
port.on('message', (returned: number) => {
  credits += returned
  wake?.()
  wake = null
})

async function send(message: FromParser): Promise<void> {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve))
  credits--
  port.postMessage(message)
}

function relayed(file: string, error: unknown): FromParser {
  const message = error instanceof Error ? error.message : String(error)
  return { kind: 'error', file, message, code: error instanceof FlakewatchError ? error.code : undefined }
}

for (const file of files) {
  try {
    const opened = openSmallReportFileSync(file)
    // A big file is parsed by the store's thread: a second heap parsing it would double the memory it costs.
    if (!opened) {
      await send({ kind: 'local', file })
      continue
    }
    const { stream, warnings } = await openReportStream(opened.source, opened.hash, opts)
    const pack = (batch: RunBatch[]) => batch.map((b) => packRunBatch(b, slots))
    const chunks = stream.chunks[Symbol.asyncIterator]()
    const first = await chunks.next()
    const second = first.done ? first : await chunks.next()
    if (first.done || second.done) {
      // A report of one chunk (nearly every report) travels as one message: with 200,000 small reports, three
      // messages each, waking the store's thread was a good part of its time.
      const batch = first.done ? [] : pack(first.value)
      await send({
        kind: 'whole',
        file,
        contentHash: opened.hash,
        batch,
        runs: stream.runs(),
        warnings: warnings.list(),
      })
      continue
    }
    await send({ kind: 'opened', file, contentHash: opened.hash })
    await send({ kind: 'chunk', file, batch: pack(first.value) })
    for (let r: IteratorResult<RunBatch[]> = second; !r.done; r = await chunks.next())
      await send({ kind: 'chunk', file, batch: pack(r.value) })
    const runs = stream.runs()
    await send({ kind: 'end', file, runs, warnings: warnings.list() })
  } catch (error) {
    await send(relayed(file, error))
  }
}
