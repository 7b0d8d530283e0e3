import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { ReportSource } from './types.js'

/** Bytes read per chunk when streaming a file. */
const CHUNK_BYTES = 64 * 1024

/**
 * Picks the decoder from the byte-order mark. Some .NET tools write UTF-16 reports; everything else is UTF-8,
 * with or without a BOM. The decoder consumes the BOM itself (`ignoreBOM: false`), so parsers never see it.
 */
function decoderFor(head: Uint8Array): TextDecoder {
  if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder('utf-16le')
  if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder('utf-16be')
  return new TextDecoder('utf-8')
}

async function* decodeChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncIterable<string> {
  let decoder: TextDecoder | undefined
  for await (const bytes of chunks) {
    if (bytes.length === 0) continue
    decoder ??= decoderFor(bytes)
    const text = decoder.decode(bytes, { stream: true })
    if (text) yield text
  }
  const rest = decoder?.decode()
  if (rest) yield rest
}

/**
 * A report read from disk: streamed in 64 KB chunks, decoded as UTF-8 (UTF-16 when the BOM says so), BOM removed.
 * `chunks()` can be called more than once; each call reopens the file. `name` (the path by default) is what
 * error messages call it, e.g. an upload's name when the file is its temporary copy.
 * @example const report = await parseReport(sourceFromFile('build/test-results/junit.xml'))
 */
export function sourceFromFile(path: string, name = path): ReportSource {
  return {
    name,
    chunks: () => decodeChunks(createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>),
    text: async () => decodeAll(await readFile(path)),
  }
}

/**
 * A report already in memory (an HTTP upload, a test). Decoded like {@link sourceFromFile}.
 * @example const report = await parseReport(sourceFromBuffer('upload.xml', body))
 */
export function sourceFromBuffer(name: string, buf: Uint8Array | string): ReportSource {
  const bytes = typeof buf === 'string' ? Buffer.from(buf, 'utf8') : buf
  return {
    name,
    chunks: () => decodeChunks(slices(bytes)),
    text: () => Promise.resolve(decodeAll(bytes)),
  }
}

function* slices(bytes: Uint8Array): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) yield bytes.subarray(i, i + CHUNK_BYTES)
}

function decodeAll(bytes: Uint8Array): string {
  return bytes.length === 0 ? '' : decoderFor(bytes).decode(bytes)
}
