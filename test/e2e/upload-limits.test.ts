import { request } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
      res.on('data', (d: Buffer) => (text += d.toString()))
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
})
