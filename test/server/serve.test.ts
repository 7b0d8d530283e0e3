import { PassThrough } from 'node:stream'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { serve } from '../../src/cli/commands/serve.js'
import type { Io } from '../../src/cli/output.js'
import type { HealthResponse } from '../../src/server/api-types.js'
import { tempDir, WRITE_TOKEN } from './helpers.js'

function captureIo(env: NodeJS.ProcessEnv = {}): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
  stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
  return { io: { stdout, stderr, env }, out: () => out, err: () => err }
}

describe('flakewatch serve', () => {
  it('serves on the given port, prints the URL, and closes cleanly when stopped', async () => {
    const tmp = tempDir()
    // A library's deprecation warning would be printed to every user's terminal.
    const warnings: Error[] = []
    const onWarning = (w: Error) => warnings.push(w)
    process.on('warning', onWarning)
    const { io, out, err } = captureIo({ FLAKEWATCH_WRITE_TOKEN: WRITE_TOKEN, FLAKEWATCH_LOG_LEVEL: 'warn' })
    const stop = new AbortController()
    let url = ''
    const done = serve({ db: join(tmp.dir, 'serve.db'), host: '127.0.0.1', port: 0 }, io, {
      signal: stop.signal,
      onListening: (u) => (url = u),
    })
    await expect.poll(() => url, { timeout: 10_000 }).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(out()).toBe(`${url}\n`)
    const health = (await (await fetch(`${url}healthz`)).json()) as HealthResponse
    expect(health).toMatchObject({ status: 'ok', store: 'sqlite', uploads: { accepted: 0, running: 0 } })
    const page = await fetch(`${url}api/v1/leaderboard`)
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    stop.abort()
    const result = await done
    expect(result).toEqual({ url, stoppedBy: 'abort' })
    await expect(fetch(`${url}healthz`)).rejects.toThrow()
    expect(err()).not.toMatch(/refused/)
    process.off('warning', onWarning)
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([])
    tmp.cleanup()
  })

  it('stops on SIGTERM', async () => {
    const tmp = tempDir()
    const { io, err } = captureIo({ FLAKEWATCH_LOG_LEVEL: 'warn' })
    let url = ''
    const done = serve({ db: join(tmp.dir, 'term.db'), port: 0 }, io, { onListening: (u) => (url = u) })
    await expect.poll(() => url, { timeout: 10_000 }).not.toBe('')
    expect(err()).toMatch(/uploads and quarantine changes are refused/)
    process.emit('SIGTERM')
    expect((await done).stoppedBy).toBe('SIGTERM')
    tmp.cleanup()
  })

  it('fails with a clear message when the port is taken', async () => {
    const tmp = tempDir()
    const first = captureIo({ FLAKEWATCH_LOG_LEVEL: 'warn' })
    const stop = new AbortController()
    let url = ''
    const hooks = { signal: stop.signal, onListening: (u: string) => (url = u) }
    const running = serve({ db: join(tmp.dir, 'a.db'), port: 0 }, first.io, hooks)
    await expect.poll(() => url, { timeout: 10_000 }).not.toBe('')
    const port = new URL(url).port
    const second = captureIo({ FLAKEWATCH_LOG_LEVEL: 'warn' })
    const taken = serve({ db: join(tmp.dir, 'b.db'), port }, second.io)
    await expect(taken).rejects.toThrow(new RegExp(`cannot serve on 127.0.0.1:${port}`))
    stop.abort()
    await running
    await expect(serve({ db: join(tmp.dir, 'c.db'), port: 'eighty' }, second.io)).rejects.toThrow(/--port must be/)
    tmp.cleanup()
  })
})
