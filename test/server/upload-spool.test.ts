import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { UploadResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { MEMORY_SPOOL_BYTES, spoolUpload } from '../../src/server/spool.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { auth, config, tempDir } from './helpers.js'

/** A JUnit report of `cases` passing cases, each with `pad` characters of captured output. */
function junit(cases: number, pad: number, tail = '</testsuite>\n'): string {
  const out = 'x'.repeat(pad)
  const lines = ['<testsuite name="big">']
  for (let i = 0; i < cases; i++) {
    lines.push(`<testcase classname="Big" name="case ${i}" time="0.01"><system-out>${out}</system-out></testcase>`)
  }
  return `${lines.join('\n')}\n${tail}`
}

/** Just over the in-memory bound, so the upload goes through a temporary file. */
const BIG_CASES = 2_200
const BIG = junit(BIG_CASES, 4_000)

let tmp: ReturnType<typeof tempDir>
let savedTmpdir: string | undefined
const cleanups: (() => Promise<void>)[] = []
beforeEach(() => {
  // Spool files go under TMPDIR: a folder of this test's own, to see that they are made and removed.
  tmp = tempDir('fw-spool-')
  savedTmpdir = process.env.TMPDIR
  process.env.TMPDIR = join(tmp.dir, 'spool')
  cleanups.push(() => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmpdir
    tmp.cleanup()
    return Promise.resolve()
  })
})
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function spoolDirs(): string[] {
  try {
    return readdirSync(process.env.TMPDIR!).filter((f) => f.startsWith('flakewatch-upload-'))
  } catch {
    return []
  }
}

async function app(bodyLimitMb = 50) {
  mkdirSync(process.env.TMPDIR!, { recursive: true })
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  const a = await createApp({ store, config: config({ bodyLimitMb }), now: () => Date.UTC(2026, 2, 21), webRoot: null })
  cleanups.push(async () => {
    await a.close()
    await store.close()
  })
  return { app: a, store }
}

const xml = { ...auth(), 'content-type': 'application/xml' }

describe('uploads are spooled, never buffered whole', { timeout: 120_000 }, () => {
  it('keeps a large upload in a temporary file while it is held, reads it back whole, then removes it', async () => {
    mkdirSync(process.env.TMPDIR!, { recursive: true })
    expect(BIG.length).toBeGreaterThan(MEMORY_SPOOL_BYTES)
    const pieces = Readable.from([Buffer.from(BIG.slice(0, 1000)), Buffer.from(BIG.slice(1000))])
    const up = await spoolUpload(pieces, 64 * 1024 * 1024)
    expect(up.bytes).toBe(Buffer.byteLength(BIG))
    expect(spoolDirs()).toHaveLength(1)
    let text = ''
    for await (const c of up.source('big.xml').chunks()) text += c
    expect(text).toBe(BIG)
    expect(up.source('big.xml').name).toBe('big.xml')
    await up.dispose()
    expect(spoolDirs()).toEqual([])
  })

  it('writes a body announced as large to its temporary file from the first byte', async () => {
    mkdirSync(process.env.TMPDIR!, { recursive: true })
    const body = Buffer.from(BIG)
    const seen: number[] = []
    // Each piece is pulled only after the one before was spooled: the folder count then is where it went.
    function* pieces() {
      for (let at = 0; at < body.length; at += 64 * 1024) {
        if (at > 0) seen.push(spoolDirs().length)
        yield body.subarray(at, at + 64 * 1024)
      }
    }
    const up = await spoolUpload(pieces(), 64 * 1024 * 1024, body.length)
    expect(seen[0]).toBe(1)
    expect(up.content).toBeNull()
    expect(await up.source('big.xml').text()).toBe(BIG)
    await up.dispose()
    expect(spoolDirs()).toEqual([])
  })

  it('keeps a small upload in memory (no temporary file)', async () => {
    mkdirSync(process.env.TMPDIR!, { recursive: true })
    const up = await spoolUpload(Readable.from([Buffer.from('<testsuite/>')]), 1024)
    expect(spoolDirs()).toEqual([])
    expect(await up.source('a.xml').text()).toBe('<testsuite/>')
    await up.dispose()
  })

  it('stores a raw upload larger than the in-memory bound, and leaves no temporary file', async () => {
    const { app: a, store } = await app()
    const res = await a.inject({
      method: 'POST',
      url: '/api/v1/reports?run_id=big-1&name=big.xml',
      headers: xml,
      payload: BIG,
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<UploadResponse>().ingested[0]).toMatchObject({
      file: 'big.xml',
      run_id: 'big-1',
      results: BIG_CASES,
    })
    expect((await store.stats()).results).toBe(BIG_CASES)
    expect(spoolDirs()).toEqual([])
    // The same bytes again are the same report: the hash taken while spooling is the duplicate key.
    const again = await a.inject({
      method: 'POST',
      url: '/api/v1/reports?run_id=big-1&name=big.xml',
      headers: xml,
      payload: BIG,
    })
    expect(again.json<UploadResponse>().duplicates).toEqual([{ file: 'big.xml', run_id: 'big-1' }])
  })

  it('names the upload, not its temporary file, when a large report is broken; stores nothing', async () => {
    const { app: a, store } = await app()
    const broken = junit(BIG_CASES, 4_000, '<testcase name="cut')
    const res = await a.inject({ method: 'POST', url: '/api/v1/reports?name=cut.xml', headers: xml, payload: broken })
    expect(res.statusCode).toBe(422)
    const body = res.json<UploadResponse & { error: { message: string } }>()
    expect(body.failed[0]!.file).toBe('cut.xml')
    expect(body.failed[0]!.error).toMatch(/^cut\.xml/)
    expect(body.error.message).not.toContain('flakewatch-upload-')
    expect((await store.stats()).results).toBe(0)
    expect(spoolDirs()).toEqual([])
  })

  it('refuses a stream that passes the limit with 413 as it passes it, and removes what it spooled', async () => {
    mkdirSync(process.env.TMPDIR!, { recursive: true })
    let pulled = 0
    // Chunked, without a content-length: only counting the bytes as they arrive can stop it.
    function* endless() {
      for (;;) {
        pulled++
        yield Buffer.alloc(1024 * 1024, 0x61)
      }
    }
    const refused = await spoolUpload(endless(), 9 * 1024 * 1024).catch((e: unknown) => e)
    expect(refused).toMatchObject({ statusCode: 413, code: 'FW_TOO_LARGE' })
    expect(pulled).toBe(10)
    expect(spoolDirs()).toEqual([])
  })

  it('spools a large multipart file the same way', async () => {
    const { app: a, store } = await app()
    const boundary = '----fw-spool'
    const payload =
      `--${boundary}\r\nContent-Disposition: form-data; name="report"; filename="big.xml"\r\n` +
      `Content-Type: application/xml\r\n\r\n${BIG}\r\n--${boundary}--\r\n`
    const res = await a.inject({
      method: 'POST',
      url: '/api/v1/reports?suite=unit',
      headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<UploadResponse>().ingested[0]).toMatchObject({ file: 'big.xml', results: BIG_CASES })
    expect((await store.stats()).results).toBe(BIG_CASES)
    expect(spoolDirs()).toEqual([])
  })
})
