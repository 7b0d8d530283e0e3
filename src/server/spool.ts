import { createHash } from 'node:crypto'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sourceFromBuffer, sourceFromFile } from '../ingest/source.js'
import type { ReportSource } from '../ingest/types.js'
import { HttpError } from './http-error.js'

/**
 * Uploads up to this size stay in memory; larger ones go to a temporary file as they arrive, so that a 1 GB
 * upload costs the server disk, not a 1 GB buffer on top of the ingest.
 */
export const MEMORY_SPOOL_BYTES = 8 * 1024 * 1024

/** One uploaded report, received whole: its content hash (the duplicate key) is known before parsing starts. */
export interface SpooledUpload {
  hash: string
  bytes: number
  /** The temporary file that holds it, or null when it is held in `content`. */
  path: string | null
  content: Buffer | null
  /** The content, called `name` in error messages. */
  source(name: string): ReportSource
  /** Removes the temporary file, if there is one. */
  dispose(): Promise<void>
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, { code: 'FW_TOO_LARGE', message: `uploads are limited to ${limit} bytes` })
}

/**
 * Receives an upload stream, hashing it on the way, into memory or (past {@link MEMORY_SPOOL_BYTES}) into a
 * temporary file. More than `limit` bytes is refused with 413 as soon as the limit is passed. `declared` is the
 * size the request announced (its content-length), when it did.
 * @example const up = await spoolUpload(request.raw, 50 << 20)
 */
export async function spoolUpload(
  stream: AsyncIterable<Buffer | string> | Iterable<Buffer>,
  limit: number,
  declared?: number,
): Promise<SpooledUpload> {
  const hash = createHash('sha256')
  const held: Buffer[] = []
  let bytes = 0
  let dir: string | null = null
  let file: Awaited<ReturnType<typeof open>> | null = null
  const dispose = async () => {
    await file?.close().catch(() => undefined)
    file = null
    if (dir) await rm(dir, { recursive: true, force: true })
  }
  try {
    // A body announced as large goes to the file from its first byte: holding its first 8 MB in memory first
    // would only add them to the server's peak.
    if (declared !== undefined && declared > MEMORY_SPOOL_BYTES) {
      dir = await mkdtemp(join(tmpdir(), 'flakewatch-upload-'))
      file = await open(join(dir, 'report'), 'w')
    }
    for await (const piece of stream) {
      const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece
      bytes += chunk.length
      if (bytes > limit) throw tooLarge(limit)
      hash.update(chunk)
      if (file) {
        await file.write(chunk)
        continue
      }
      held.push(chunk)
      if (bytes > MEMORY_SPOOL_BYTES) {
        dir = await mkdtemp(join(tmpdir(), 'flakewatch-upload-'))
        file = await open(join(dir, 'report'), 'w')
        for (const h of held) await file.write(h)
        held.length = 0
      }
    }
    if (file) await file.close()
    file = null
  } catch (error) {
    await dispose()
    throw error
  }
  const path = dir ? join(dir, 'report') : null
  const content = path ? null : Buffer.concat(held)
  const source = (name: string) => (path ? sourceFromFile(path, name) : sourceFromBuffer(name, content!))
  return { hash: hash.digest('hex'), bytes, path, content, source, dispose }
}
