import { connect, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { SECURITY_HEADERS } from '../../src/server/security-headers.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config, seed, tempDir, WRITE_TOKEN } from './helpers.js'

/** One raw request, so that neither a client nor `inject` tidies a malformed one before the server sees it. */
function raw(port: number, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (data += chunk))
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const at = line.indexOf(':')
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
    socket.on('error', reject)
  })
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`
const post = (path: string, type: string, body: string, token = WRITE_TOKEN) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${type}\r\n` +
  `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`

describe('every response has the same security headers and error shape', () => {
  it('for 400, 401, 404, 413, 415, 422, 431, 500 and 503, before and after routing', async () => {
    const tmp = tempDir()
    const store = await openSqliteStore(join(tmp.dir, 'e.db'))
    await seed(store)
    // A store whose run listing has a bug: the route fails with an error nobody planned for.
    store.listRuns = () => Promise.reject(new TypeError('cannot read properties of undefined'))
    const app = await createApp({ store, config: config({ bodyLimitMb: 0.01 }), webRoot: null })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const port = (app.server.address() as AddressInfo).port
    const cases: [string, string, number][] = [
      ['malformed URL under the API', get('/api/v1/tests/%E0%A4%A'), 400],
      ['malformed URL elsewhere', get('/%E0%A4%A'), 400],
      ['malformed request line', 'GET /\x01 HTTP/1.1\r\n\r\n', 400],
      ['bad query', get('/api/v1/leaderboard?limit=0'), 400],
      ['missing token', post('/api/v1/reports', 'application/xml', '<x/>', 'wrong-token-0123'), 401],
      ['no route', get('/api/v1/nope'), 404],
      ['body too large', post('/api/v1/reports', 'application/xml', 'x'.repeat(20_000)), 413],
      ['unsupported type', post('/api/v1/reports', 'text/plain', 'x'), 415],
      ['unparsable report', post('/api/v1/reports', 'application/xml', '<nope'), 422],
      ['headers too large', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ['server fault', get('/api/v1/runs'), 500],
      ['store down', get('/healthz'), 503],
      ['no dashboard', get('/'), 503],
    ]
    try {
      for (const [what, request, status] of cases) {
        const res = await raw(port, request)
        expect(res.status, what).toBe(status)
        for (const [name, value] of Object.entries(SECURITY_HEADERS))
          expect(res.headers[name], `${what}: ${name}`).toBe(value)
        expect(res.headers['content-type'], what).toMatch(/^application\/json/)
        const body = JSON.parse(res.body) as { error: { code: unknown; message: unknown } }
        expect(typeof body.error.code, what).toBe('string')
        expect(typeof body.error.message, what).toBe('string')
        // Only the upload's 422 adds the ingest summary beside the error.
        if (status !== 422) expect(Object.keys(body), what).toEqual(['error'])
        expect(Object.keys(body.error).sort(), what).toEqual(['code', 'message'])
      }
      const fault = await raw(port, get('/api/v1/runs'))
      expect(fault.body).not.toContain('undefined')
    } finally {
      await app.close()
      await store.close()
      tmp.cleanup()
    }
  })
})
