import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HealthResponse, UploadResponse } from '../../src/server/api-types.js'
import type { createApp as CreateApp } from '../../src/server/app.js'
import { createApp as createAppFromSource } from '../../src/server/app.js'
import { UPLOAD_WORKER_V8_FLAGS, uploadWorkerEnv } from '../../src/server/memory-settings.js'
import { BACKGROUND_NICE } from '../../src/server/worker-priority.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config, tempDir, WRITE_TOKEN } from './helpers.js'

const DIST_APP = join(import.meta.dirname, '..', '..', 'dist', 'server', 'app.js')

function junit(cases: number, prefix = 'case'): string {
  const lines = ['<testsuite name="load">']
  for (let i = 0; i < cases; i++) lines.push(`<testcase classname="m${i % 40}" name="${prefix} ${i}"/>`)
  lines.push('</testsuite>')
  return lines.join('\n')
}

/** Sends an upload's head and the first part of its body, and keeps the rest until `finish()`. */
function partialUpload(port: number, path: string, body: string): { socket: Socket; finish: () => Promise<string> } {
  const bytes = Buffer.from(body)
  const head =
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${WRITE_TOKEN}\r\n` +
    `Content-Type: application/xml\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`
  const socket = connect(port, '127.0.0.1')
  let data = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (data += chunk))
  const ended = new Promise<string>((resolve, reject) => {
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
  socket.write(head + bytes.subarray(0, 10).toString('latin1'))
  return {
    socket,
    finish: () => {
      socket.write(bytes.subarray(10))
      return ended
    },
  }
}

interface Listening {
  app: Awaited<ReturnType<typeof createAppFromSource>>
  store: Awaited<ReturnType<typeof openSqliteStore>>
  port: number
  /** Uploads accepted and not yet answered, as /healthz reports them. */
  accepted: () => Promise<number>
  close: () => Promise<void>
}

/** A fresh SQLite store and an app from sources on it, listening on a free port. */
async function listening(server: Parameters<typeof config>[0] = {}): Promise<Listening> {
  const tmp = tempDir()
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  const app = await createAppFromSource({ store, config: config(server), webRoot: null })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const accepted = async () =>
    ((await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as HealthResponse).uploads.accepted
  const close = async () => {
    await app.close()
    await store.close()
    tmp.cleanup()
  }
  return { app, store, port, accepted, close }
}

describe('the upload queue', () => {
  it('answers 503 with Retry-After when full, and still stores the upload it accepted', async () => {
    const { store, port, accepted, close } = await listening({ uploadQueue: 1 })
    const base = `http://127.0.0.1:${port}`
    const headers = { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/xml' }
    try {
      // The first upload takes the only slot as soon as its head is read, and holds it while its body comes.
      const first = partialUpload(port, '/api/v1/reports?suite=unit&run_id=first', junit(5, 'first'))
      await expect.poll(accepted).toBe(1)

      const refused = await fetch(`${base}/api/v1/reports?suite=unit&run_id=second`, {
        method: 'POST',
        headers,
        body: junit(5, 'second'),
      })
      expect(refused.status).toBe(503)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(refused.headers.get('content-security-policy')).toContain("default-src 'self'")
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await refused.json()).toEqual({ error: { code: 'FW_BUSY', message: expect.stringMatching(/retry in/) } })

      const answer = await first.finish()
      expect(answer).toMatch(/^HTTP\/1\.1 201/)
      expect(await store.getRun('first')).not.toBeNull()
      expect(await store.getRun('second')).toBeNull()

      // The slot is free again once the accepted upload is stored.
      const third = await fetch(`${base}/api/v1/reports?suite=unit&run_id=third`, {
        method: 'POST',
        headers,
        body: junit(5, 'third'),
      })
      expect(third.status).toBe(201)
      expect(((await third.json()) as UploadResponse).ingested.map((i) => i.run_id)).toEqual(['third'])
      const health = (await (await fetch(`${base}/healthz`)).json()) as HealthResponse
      expect(health.uploads).toMatchObject({ accepted: 0, running: 0, capacity: 1 })
    } finally {
      await close()
    }
  })

  it('gives the slot back when an upload is refused for its content or its client goes away', async () => {
    const { app, store, port, accepted: health, close } = await listening({ uploadQueue: 1 })
    const headers = { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/xml' }
    try {
      const bad = await app.inject({ method: 'POST', url: '/api/v1/reports?run_status=nope', headers, payload: '<x/>' })
      expect(bad.statusCode).toBe(400)
      const unparsable = await app.inject({ method: 'POST', url: '/api/v1/reports', headers, payload: '<nope' })
      expect(unparsable.statusCode).toBe(422)
      expect(await health()).toBe(0)
      const gone = partialUpload(port, '/api/v1/reports?run_id=gone', junit(5))
      await expect.poll(health).toBe(1)
      gone.socket.destroy()
      await expect.poll(health).toBe(0)
      expect(await store.getRun('gone')).toBeNull()
    } finally {
      await close()
    }
  })

  it('stores an upload it accepted even when the server is closing meanwhile', async () => {
    const { app, store, port, accepted, close } = await listening()
    try {
      const upload = partialUpload(port, '/api/v1/reports?run_id=closing', junit(2000))
      await expect.poll(accepted).toBe(1)
      const closing = app.close()
      const answer = await upload.finish()
      expect(answer).toMatch(/^HTTP\/1\.1 201/)
      await closing
      expect((await store.getRun('closing'))?.runId).toBe('closing')
    } finally {
      await close()
    }
  })
})

/** This process's children whose command line runs `script` (Linux: read from /proc). */
function childrenRunning(script: string): number[] {
  const pids: number[] = []
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const kids = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim()
    for (const kid of kids ? kids.split(' ').map(Number) : []) {
      if (readFileSync(`/proc/${kid}/cmdline`, 'utf8').includes(script)) pids.push(kid)
    }
  }
  return pids
}

// Worker processes run compiled JavaScript: this suite drives the build in dist/ (kept current by global-setup).
describe.skipIf(!existsSync(DIST_APP))('uploads in worker processes', () => {
  it('answers /healthz while a large upload is parsed and stored, and never stores on the HTTP thread', async () => {
    const RESULTS = 20_000
    const { createApp } = (await import(DIST_APP)) as { createApp: typeof CreateApp }
    const tmp = tempDir()
    const db = join(tmp.dir, 'w.db')
    const store = await openSqliteStore(db)
    let storedHere = 0
    const ingest = store.ingestStream.bind(store)
    store.ingestStream = (...args) => {
      storedHere++
      return ingest(...args)
    }
    const app = await createApp({ store, db, config: config(), webRoot: null })
    expect(app.flakewatchUploads).toBe('worker')
    await app.listen({ host: '127.0.0.1', port: 0 })
    const port = (app.server.address() as AddressInfo).port
    const events: string[] = []
    try {
      // Large enough that storing it outlasts a few polls, no larger: the worker is niced, and on a loaded machine
      // (2 busy cores besides) it took 105 s to store 120,000 results, past this test's timeout.
      const body = Buffer.from(junit(RESULTS))
      const uploaded = new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/reports?suite=unit&run_id=big',
            headers: { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/xml' },
          },
          (res) => {
            res.resume()
            res.on('end', () => {
              events.push('upload answered')
              resolve(res.statusCode ?? 0)
            })
          },
        )
        req.on('error', reject)
        req.end(body)
      })
      // Poll until a health check reports the upload being stored: it was answered while the upload ran. Paced:
      // back to back, the polls would take the CPU from the niced worker they wait for.
      for (let poll = 0; ; poll++) {
        if (poll > 0) await new Promise((r) => setTimeout(r, 20))
        const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as HealthResponse
        if (health.uploads.running === 1) {
          events.push('healthz answered while storing')
          break
        }
        if (events.includes('upload answered')) break
      }
      expect(await uploaded).toBe(201)
      expect(events).toEqual(['healthz answered while storing', 'upload answered'])
      expect(storedHere).toBe(0)
      expect((await store.stats()).results).toBe(RESULTS)
      // The upload was stored by a process of its own, niced below the server so that reads come first.
      if (process.platform === 'linux') {
        const workers = childrenRunning('upload-worker.js')
        expect(workers.length).toBeGreaterThan(0)
        for (const pid of workers) expect(getPriority(pid)).toBe(BACKGROUND_NICE)
      }
    } finally {
      await app.close()
      await store.close()
      tmp.cleanup()
    }
  }, 120_000)

  it.runIf(process.platform === 'linux')(
    'starts its worker with the memory settings; that worker stores a report and refuses a hostile one',
    async () => {
      const { createApp } = (await import(DIST_APP)) as { createApp: typeof CreateApp }
      const tmp = tempDir()
      const db = join(tmp.dir, 'm.db')
      const store = await openSqliteStore(db)
      const app = await createApp({ store, db, config: config(), webRoot: null })
      await app.listen({ host: '127.0.0.1', port: 0 })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/reports`
      const post = (query: string, type: string, body: string) =>
        fetch(`${base}?${query}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': type },
          body,
        })
      try {
        const stored = await post('suite=unit&run_id=ok', 'application/xml', junit(300))
        expect(stored.status).toBe(201)
        expect(((await stored.json()) as UploadResponse).ingested[0]?.results).toBe(300)
        const [worker, ...others] = childrenRunning('upload-worker.js')
        expect(others).toEqual([])
        const argv = readFileSync(`/proc/${worker}/cmdline`, 'utf8').split('\0')
        for (const flag of UPLOAD_WORKER_V8_FLAGS) expect(argv).toContain(flag)
        const env = readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')
        expect(env).toContain(`MALLOC_ARENA_MAX=${uploadWorkerEnv(process.env).MALLOC_ARENA_MAX}`)

        const ctrf = JSON.stringify({
          results: { tool: { name: 'x' }, tests: [{ name: 't', status: 'passed', duration: 1, retries: 1e9 }] },
        })
        const refused = await post('suite=unit&run_id=hostile&name=ctrf.json', 'application/json', ctrf)
        expect(refused.status).toBe(422)
        expect(((await refused.json()) as UploadResponse).failed[0]!.error).toMatch(/over the limit of 100/)
        expect(await store.getRun('hostile')).toBeNull()
        expect((await store.stats()).results).toBe(300)
        // Refused by its content, not by a crash: the same worker is still there.
        expect(childrenRunning('upload-worker.js')).toEqual([worker])
      } finally {
        await app.close()
        await store.close()
        tmp.cleanup()
      }
    },
    120_000,
  )
})
