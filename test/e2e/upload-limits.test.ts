import { request } from 'node:http'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UNREAD_BODY_DRAIN_BYTES } from '../../src/server/unread-body.js'
import { runCli, spawnServe, testdir, type ServeProcess } from '../helpers/run-cli.js'

const TOKEN = 'limits-token-0123456789'
const LIMIT = 1024 * 1024

/**
 * Sends `chunks` with `Transfer-Encoding: chunked` (no content-length, so only counting the bytes as they arrive
 * can stop it) over a real socket, and resolves with the answer. The server may answer and close before the body
 * is all sent: the write error that follows is the client's, not the answer.
 */
function postChunked(
  url: string,
  path: string,
  contentType: string,
  chunks: Iterable<Buffer | string>,
  method = 'POST',
): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType, 'transfer-encoding': 'chunked' },
    })
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text || '{}') as never }))
    })
    let answered = false
    req.on('response', () => (answered = true))
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e)
    })
    // A connection closed before any answer is a failure to see, not a wait until the test's timeout.
    req.on('close', () => {
      if (!answered) reject(new Error(`${method} ${path}: the connection closed before an answer`))
    })
    const pump = async () => {
      for (const c of chunks) {
        if (req.destroyed) return
        if (!req.write(c)) await new Promise((r) => req.once('drain', r))
      }
      req.end()
    }
    void pump().catch(() => undefined)
  })
}

/** One HTTP/1.1 answer read off a raw socket: its status line and its body (by its content-length). */
function nextAnswer(socket: Socket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0)
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d])
      const end = got.indexOf('\r\n\r\n')
      if (end < 0) return
      const head = got.subarray(0, end).toString()
      const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? NaN)
      if (got.length < end + 4 + length) return
      done()
      resolve({ status: Number(head.split(' ')[1]), body: got.subarray(end + 4, end + 4 + length).toString() })
    }
    const onGone = (e?: Error) => {
      done()
      reject(new Error(`the connection ended before an answer: ${e?.message ?? 'closed'}; read: ${got.toString()}`))
    }
    const done = () => {
      socket.off('data', onData).off('error', onGone).off('close', onGone)
    }
    socket.on('data', onData).on('error', onGone).on('close', onGone)
  })
}

/** Writes and resolves once the bytes are handed to the kernel, or rejects with the write's error (a reset). */
function send(socket: Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(data, (e) => (e ? reject(e) : resolve())))
}

const chunk = (data: Buffer | string) =>
  Buffer.concat([Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n`), Buffer.from(data), Buffer.from('\r\n')])

function* megabytes(n: number, prefix = '') {
  if (prefix) yield prefix
  for (let i = 0; i < n * 4; i++) yield Buffer.alloc(256 * 1024, 0x61)
}

/** The request lines `serve --log-requests` wrote for URLs that hold `path`, with their status. */
function logged(s: ServeProcess, path: string): number[] {
  return s
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as { url: string; status: number })
    .filter((l) => l.url.includes(path))
    .map((l) => l.status)
}

describe('limits answer as limits (issue 33)', { timeout: 180_000 }, () => {
  let dir: string
  let server: ServeProcess
  beforeAll(async () => {
    dir = testdir({ 'flakewatch.config.json': JSON.stringify({ server: { bodyLimitMb: 1 } }) }, 'limits-')
    server = await spawnServe(['--db', join(dir, 'fw.db'), '--log-requests'], {
      cwd: dir,
      env: { FLAKEWATCH_WRITE_TOKEN: TOKEN, FLAKEWATCH_LOG_LEVEL: 'info' },
    })
  })
  afterAll(() => server?.close())

  it('answers a chunked upload over the body limit with 413 naming the limit, and logs 413', async () => {
    const raw = await postChunked(server.url, '/api/v1/reports?name=big.xml', 'application/xml', megabytes(3))
    expect(raw, server.stderr()).toMatchObject({ status: 413, body: { error: { code: 'FW_TOO_LARGE' } } })
    expect(raw.body.error!.message).toContain(`limited to ${LIMIT} bytes`)

    const boundary = '----fw-limits'
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="r"; filename="big.xml"\r\nContent-Type: application/xml\r\n\r\n`
    const multi = await postChunked(
      server.url,
      '/api/v1/reports?suite=multi',
      `multipart/form-data; boundary=${boundary}`,
      megabytes(3, head),
    )
    expect(multi, server.stderr()).toMatchObject({ status: 413, body: { error: { code: 'FW_TOO_LARGE' } } })

    // A JSON route's own, smaller limit is said the same way.
    const rule = await postChunked(server.url, '/api/v1/rules/big', 'application/json', megabytes(1), 'PUT')
    expect(rule).toMatchObject({ status: 413, body: { error: { code: 'FW_TOO_LARGE' } } })
    expect(rule.body.error!.message).toMatch(/limited to 65536 bytes/)

    await expect
      .poll(() => [...logged(server, '/api/v1/reports'), ...logged(server, '/api/v1/rules')])
      .toEqual([413, 413, 413])
    expect(server.stderr()).not.toMatch(/FW_INTERNAL|request failed/)
  })

  it('flakewatch upload reports a 413 once and never retries it', async () => {
    const before = logged(server, 'huge.xml').length
    const cases = Array.from({ length: 25_000 }, (_, i) => `<testcase classname="m" name="t${i}" time="0.01"/>`)
    writeFileSync(join(dir, 'huge.xml'), `<testsuite name="s">${cases.join('')}</testsuite>\n`)
    const up = await runCli(['upload', join(dir, 'huge.xml'), '--url', server.url, '--retries', '3', '--json'], {
      env: { FLAKEWATCH_WRITE_TOKEN: TOKEN },
    })
    expect(up.exitCode).toBe(0)
    expect(JSON.parse(up.stdout).failed).toMatchObject([{ file: join(dir, 'huge.xml'), status: 413 }])
    expect(up.stderr).not.toMatch(/retry/)
    await expect.poll(() => logged(server, 'huge.xml').length - before).toBe(1)
    const strict = await runCli(['upload', join(dir, 'huge.xml'), '--url', server.url, '--strict'], {
      env: { FLAKEWATCH_WRITE_TOKEN: TOKEN },
    })
    expect(strict.exitCode).toBe(2)
    expect(strict.stderr).toMatch(/413.*limited to 1048576 bytes/)
  })

  /** Opens a connection and sends a chunked body just over the limit; resolves once the whole answer is read. */
  async function refusedMidBody(method: string, path: string, type: string) {
    const { port } = new URL(server.url)
    const socket = connect(Number(port), '127.0.0.1')
    // Each write reports its own failure (a reset) to the test.
    socket.on('error', () => undefined)
    const first = nextAnswer(socket)
    await send(
      socket,
      `${method} ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: ${type}\r\n` +
        'transfer-encoding: chunked\r\n\r\n',
    )
    for (const piece of megabytes(LIMIT / (1024 * 1024))) await send(socket, chunk(piece))
    await send(socket, chunk('a'))
    return { socket, refused: await first }
  }

  // The race of the first test, made certain: the client reads the whole 413 first and only then sends the rest
  // of its body. A server that closes the connection under the answer makes those writes fail (or the next answer
  // never come); one that keeps reading drops the rest and answers the next request on the same connection.
  it.each([
    ['PUT', '/api/v1/rules/linger', 'application/json', 'request bodies here are limited to 65536 bytes'],
    ['POST', '/api/v1/reports?name=linger.xml', 'application/xml', `uploads are limited to ${LIMIT} bytes`],
  ])(
    'keeps reading the rest of a body refused by %s %s after the 413, and serves the next request',
    async (method, path, type, said) => {
      const { socket, refused } = await refusedMidBody(method, path, type)
      try {
        expect(refused.status, refused.body).toBe(413)
        expect(JSON.parse(refused.body)).toMatchObject({
          error: { code: 'FW_TOO_LARGE', message: expect.stringContaining(said) },
        })
        for (const piece of megabytes(2)) await send(socket, chunk(piece))
        await send(socket, '0\r\n\r\n')
        const next = nextAnswer(socket)
        await send(socket, 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n')
        expect((await next).status).toBe(200)
      } finally {
        socket.destroy()
      }
    },
  )

  it('stops reading a refused body after UNREAD_BODY_DRAIN_BYTES more, and closes the connection', async () => {
    const { socket, refused } = await refusedMidBody('PUT', '/api/v1/rules/endless', 'application/json')
    try {
      expect(refused.status).toBe(413)
      const next = nextAnswer(socket)
      const sent = (async () => {
        for (const piece of megabytes(UNREAD_BODY_DRAIN_BYTES / (1024 * 1024) + 4)) await send(socket, chunk(piece))
        await send(socket, '0\r\n\r\nGET /healthz HTTP/1.1\r\nhost: x\r\n\r\n')
      })()
      await expect(next).rejects.toThrow(/the connection ended before an answer/)
      await sent.catch(() => undefined)
    } finally {
      socket.destroy()
    }
  })
})

describe('flakewatch upload against a server that resets the connection under a body it refuses', () => {
  it('retries the network error, names its cause, and says a reset while sending may be a size refusal', async () => {
    // Reads the request head only, then closes with the body unread: the kernel answers the rest with a reset.
    let requests = 0
    const resetter = createServer((socket) => {
      socket.on('error', () => undefined)
      let head = ''
      socket.on('data', (d: Buffer) => {
        if (head.includes('\r\n\r\n')) return
        head += d.toString('latin1')
        if (head.includes('\r\n\r\n')) {
          requests++
          socket.destroy()
        }
      })
    })
    await new Promise<void>((r) => resetter.listen(0, '127.0.0.1', r))
    try {
      const dir = testdir({ 'big.xml': `<testsuite name="s">${'<!-- padding -->'.repeat(300_000)}</testsuite>\n` })
      const url = `http://127.0.0.1:${(resetter.address() as AddressInfo).port}`
      const up = await runCli(['upload', join(dir, 'big.xml'), '--url', url, '--retries', '1', '--json'], {
        env: { FLAKEWATCH_WRITE_TOKEN: TOKEN },
      })
      expect(up.exitCode, up.stderr).toBe(0)
      const [failed] = (JSON.parse(up.stdout) as { failed: { status: number | null; error: string }[] }).failed
      expect(failed).toMatchObject({ status: null, error: expect.stringMatching(/^network error: fetch failed: \S/) })
      if (/EPIPE|ECONNRESET/.test(failed!.error)) {
        expect(failed!.error).toMatch(
          /reset before an answer, with the 4\.6 MB report sent or being sent.*server\.bodyLimitMb/,
        )
      }
      expect(up.stderr).toMatch(/retry 1 \(network error: fetch failed: \S/)
      expect(requests).toBe(2)
    } finally {
      await new Promise((r) => resetter.close(r))
    }
  })
})
