import { existsSync } from 'node:fs'
import { get, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleSchemaErrors } from '../../src/export/bundle-schema.js'
import type { createApp as CreateApp } from '../../src/server/app.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, tempDir } from './helpers.js'

// The bundle worker runs compiled JavaScript, so this suite drives the build in dist/ (kept current by
// global-setup); from TypeScript sources the bundle is written in process, which bundle.test.ts covers.
const DIST_APP = join(import.meta.dirname, '..', '..', 'dist', 'server', 'app.js')
const TESTS = 1500
const RUNS = 40
const NOW = Date.UTC(2026, 2, 20)

function request(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => get(url, resolve).on('error', reject))
}

async function text(res: IncomingMessage): Promise<string> {
  let body = ''
  for await (const chunk of res) body += String(chunk)
  return body
}

describe.skipIf(!existsSync(DIST_APP))('GET /api/v1/bundle from a worker thread', () => {
  let createApp: typeof CreateApp
  let store: SqliteStore
  let file: string
  let cleanup: () => void
  beforeAll(async () => {
    ;({ createApp } = (await import(DIST_APP)) as { createApp: typeof CreateApp })
    const tmp = tempDir()
    cleanup = tmp.cleanup
    file = join(tmp.dir, 'fw.db')
    store = await openSqliteStore(file)
    for (let r = 0; r < RUNS; r++) {
      const run = runMeta(`r${r}`, new Date(NOW - (RUNS - r) * 3_600_000).toISOString())
      const results = Array.from({ length: TESTS }, (_, i) =>
        result(`renders widget ${i} in every layout`, (i + r) % 13 ? 'passed' : 'failed'),
      )
      await store.ingestReport(batch(run, results))
    }
  }, 120_000)
  afterAll(async () => {
    await store.close()
    cleanup()
  })

  it('streams chunk by chunk while /healthz answers between the chunks, and ends with the whole bundle', async () => {
    const app = await createApp({ store, db: file, config: config(), now: () => NOW, webRoot: null })
    try {
      expect(app.flakewatchBundles).toBe('worker')
      await app.listen({ host: '127.0.0.1', port: 0 })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const bundle = await request(`${base}/api/v1/bundle`)
      expect(bundle.statusCode).toBe(200)

      // After each chunk the download waits while /healthz is asked: each answer comes back mid-download.
      const events: string[] = []
      const pieces: Buffer[] = []
      let ended = false
      for await (const chunk of bundle) {
        pieces.push(chunk as Buffer)
        events.push('chunk')
        if (pieces.length <= 5) {
          const health = await request(`${base}/healthz`)
          const body = JSON.parse(await text(health)) as { status: string }
          events.push(health.statusCode === 200 && body.status === 'ok' && !ended ? 'healthz' : 'healthz failed')
        }
      }
      ended = true
      events.push('end')
      expect(events.slice(0, 10)).toEqual(Array.from({ length: 5 }, () => ['chunk', 'healthz']).flat())
      expect(events.filter((e) => e === 'chunk').length).toBeGreaterThan(5)
      expect(events.at(-1)).toBe('end')

      const parsed = JSON.parse(Buffer.concat(pieces).toString('utf8')) as { runs: unknown[]; tests: unknown[] }
      expect(bundleSchemaErrors(parsed)).toEqual([])
      expect(parsed.runs).toHaveLength(RUNS)
      expect(parsed.tests).toHaveLength(TESTS)
    } finally {
      await app.close()
    }
  }, 120_000)

  it('refuses bad options before the worker starts, and survives a client that leaves mid-download', async () => {
    const app = await createApp({ store, db: file, config: config(), now: () => NOW, webRoot: null })
    try {
      await app.listen({ host: '127.0.0.1', port: 0 })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      const bad = await request(`${base}/api/v1/bundle?days=0`)
      expect(bad.statusCode).toBe(400)
      await text(bad)

      const gone = await request(`${base}/api/v1/bundle`)
      await new Promise<void>((resolve) => gone.once('data', () => resolve()))
      gone.destroy()
      // The next download is whole: the abandoned one left nothing behind that gets in its way.
      const next = await request(`${base}/api/v1/bundle`)
      const parsed = JSON.parse(await text(next)) as { tests: unknown[] }
      expect(parsed.tests).toHaveLength(TESTS)
    } finally {
      await app.close()
    }
  }, 120_000)
})
