import { mkdirSync, writeFileSync } from 'node:fs'
import { connect, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { tokenMatches } from '../../src/server/auth.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { auth, config, NOW, READ_TOKEN, seed, tempDir, WRITE_TOKEN } from './helpers.js'

const SECRET = 'TOP-SECRET-OUTSIDE-THE-WEB-ROOT'

let app: FastifyInstance
let store: SqliteStore
let port: number
let cleanup: () => void
beforeAll(async () => {
  const tmp = tempDir()
  cleanup = tmp.cleanup
  // A web root with a secret file beside it: nothing may reach the secret through the static server.
  const web = join(tmp.dir, 'www', 'dist', 'web')
  mkdirSync(join(web, 'assets'), { recursive: true })
  const index = '<!doctype html><title>fw</title><script type="module" src="/assets/app.js"></script>'
  writeFileSync(join(web, 'index.html'), index)
  writeFileSync(join(web, 'assets', 'app.js'), 'console.log(1)')
  writeFileSync(join(web, '.env'), SECRET)
  writeFileSync(join(tmp.dir, 'www', 'secret.txt'), SECRET)
  writeFileSync(join(tmp.dir, 'www', 'dist', 'secret.txt'), SECRET)
  store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  await seed(store)
  app = await createApp({ store, config: config(), now: () => NOW, webRoot: web })
  await app.listen({ host: '127.0.0.1', port: 0 })
  port = (app.server.address() as AddressInfo).port
})
afterAll(async () => {
  await app.close()
  await store.close()
  cleanup()
})

/**
 * A raw HTTP request, so that no client normalises `..` or percent-escapes away before the server sees them.
 * The socket stays open for writing: a half-closed one would cut streamed responses short.
 */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`
    const socket = connect(port, '127.0.0.1', () => socket.write(head))
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (data += chunk))
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), body: data }))
    socket.on('error', reject)
  })
}

describe('security headers', () => {
  it('sends a strict CSP and nosniff on every kind of response', async () => {
    const urls = [
      '/',
      '/heatmap',
      '/assets/app.js',
      '/api/v1/leaderboard',
      '/api/v1/nope',
      '/healthz',
      '/nope',
      '/api/v1/leaderboard?limit=0',
    ]
    for (const url of urls) {
      const res = await app.inject({ method: 'GET', url })
      const csp = res.headers['content-security-policy'] as string
      expect(csp, url).toContain("default-src 'self'")
      expect(csp).toContain("script-src 'self'")
      expect(csp).toContain("object-src 'none'")
      expect(csp).toContain("base-uri 'none'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).not.toContain('unsafe')
      expect(res.headers['x-content-type-options'], url).toBe('nosniff')
    }
    const headers = { 'content-type': 'application/xml' }
    const post = await app.inject({ method: 'POST', url: '/api/v1/reports', payload: 'x', headers })
    expect(post.statusCode).toBe(401)
    expect(post.headers['content-security-policy']).toContain("frame-ancestors 'none'")
  })

  it('serves index.html for the dashboard routes, uncached, and hashed assets for good', async () => {
    const pages = ['/', '/heatmap', '/kiosk', '/trends', '/quarantine', `/tests/${encodeURIComponent('unit::a/b::c')}`]
    for (const url of pages) {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(200)
      expect(res.body).toContain('<title>fw</title>')
      expect(res.headers['cache-control']).toBe('no-cache')
    }
    const asset = await app.inject({ method: 'GET', url: '/assets/app.js' })
    expect(asset.headers['cache-control']).toContain('immutable')
    expect(asset.headers['content-type']).toMatch(/javascript/)
    const unknown = await app.inject({ method: 'GET', url: '/unknown-page' })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toMatchObject({ error: { code: 'FW_NOT_FOUND' } })
    // A browser gets the dashboard, which draws its own "no such page", still with a 404 status.
    const page = await app.inject({ method: 'GET', url: '/unknown-page', headers: { accept: 'text/html,*/*;q=0.8' } })
    expect(page.statusCode).toBe(404)
    expect(page.body).toContain('<title>fw</title>')
    const api = await app.inject({ method: 'GET', url: '/api/v1/nope', headers: { accept: 'text/html' } })
    expect(api.statusCode).toBe(404)
    expect(api.headers['content-type']).toMatch(/json/)
    expect((await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })).headers['cache-control']).toBe('no-store')
  })
})

describe('static files cannot escape their folder', () => {
  const attempts = [
    '/../secret.txt',
    '/../../secret.txt',
    '/../../package.json',
    '/assets/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2e%2e/%2e%2e/secret.txt',
    '/%2E%2E%2Fsecret.txt',
    '/..%2fsecret.txt',
    '/assets/..%2f..%2fsecret.txt',
    '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/%252e%252e/secret.txt',
    '/..%5csecret.txt',
    '/..\\secret.txt',
    '/assets/..%5c..%5csecret.txt',
    '/%c0%ae%c0%ae/secret.txt',
    '//secret.txt',
    '/.env',
    '/%2eenv',
    '/assets/%2e%2e/.env',
    `/tests/..%2f..%2fsecret.txt`,
    '/heatmap/../../secret.txt',
  ]
  for (const path of attempts) {
    it(`refuses ${path}`, async () => {
      const res = await rawGet(path)
      expect(res.body).not.toContain(SECRET)
      expect(res.body).not.toContain('"name": "flakewatch"')
      // Either refused, or the dashboard's own index.html for a dashboard route.
      if (res.status === 200) expect(res.body).toContain('<title>fw</title>')
      else expect(res.status).toBeGreaterThanOrEqual(400)
    })
  }
})

describe('auth', () => {
  it('compares tokens in constant time and never matches a missing one', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true)
    expect(tokenMatches('abc', 'abd')).toBe(false)
    expect(tokenMatches('abc', 'abcd')).toBe(false)
    expect(tokenMatches(null, 'abc')).toBe(false)
    expect(tokenMatches('abc', null)).toBe(false)
  })

  it('needs the read token for reads when one is configured, but never for /healthz', async () => {
    const tmp = tempDir()
    const s = await openSqliteStore(join(tmp.dir, 'r.db'))
    const a = await createApp({ store: s, config: config({ readToken: READ_TOKEN }), webRoot: null })
    try {
      expect((await a.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
      const none = await a.inject({ method: 'GET', url: '/api/v1/leaderboard' })
      expect(none.statusCode).toBe(401)
      expect(none.json<{ error: { code: string } }>().error.code).toBe('FW_AUTH')
      const wrong = await a.inject({ method: 'GET', url: '/api/v1/runs', headers: auth('wrong-read-token') })
      expect(wrong.statusCode).toBe(401)
      expect((await a.inject({ method: 'GET', url: '/api/v1/runs', headers: auth(READ_TOKEN) })).statusCode).toBe(200)
      expect((await a.inject({ method: 'GET', url: '/api/v1/runs', headers: auth(WRITE_TOKEN) })).statusCode).toBe(200)
      // The read token does not allow writes.
      const payload = { reason: 'r' }
      const put = await a.inject({ method: 'PUT', url: '/api/v1/quarantine/x', headers: auth(READ_TOKEN), payload })
      expect(put.statusCode).toBe(401)
    } finally {
      await a.close()
      await s.close()
      tmp.cleanup()
    }
  })

  it('accepts only the Bearer scheme', async () => {
    for (const authorization of [WRITE_TOKEN, `Basic ${WRITE_TOKEN}`, `Bearer`, `Bearer ${WRITE_TOKEN} extra`]) {
      const payload = { reason: 'r' }
      const res = await app.inject({ method: 'PUT', url: '/api/v1/quarantine/x', headers: { authorization }, payload })
      expect(res.statusCode, authorization).toBe(401)
    }
  })
})

describe('/healthz', () => {
  it('reports a dead store as 503', async () => {
    const tmp = tempDir()
    const s = await openSqliteStore(join(tmp.dir, 'h.db'))
    const a = await createApp({ store: s, config: config(), webRoot: null })
    try {
      expect((await a.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({
        status: 'ok',
        store: 'sqlite',
        uploads: { accepted: 0, running: 0, capacity: 16, workers: 1 },
      })
      await s.close()
      const res = await a.inject({ method: 'GET', url: '/healthz' })
      expect(res.statusCode).toBe(503)
      expect(res.json<{ error: { code: string } }>().error.code).toBe('FW_STORE')
    } finally {
      await a.close()
      tmp.cleanup()
    }
  })
})
