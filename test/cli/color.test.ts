import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { colorEnabled } from '../../src/cli/color.js'
import { runCli } from '../../src/cli/main.js'
import type { Io } from '../../src/cli/output.js'
import { openStore } from '../../src/store/open.js'
import { history } from '../helpers/builders.js'

/** An Io whose stdout says it is (or is not) a terminal, capturing what is written. */
function captureIo(env: NodeJS.ProcessEnv, tty: boolean) {
  let out = ''
  let err = ''
  const stdout = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString()
        cb()
      },
    }),
    { isTTY: tty },
  )
  const stderr = new Writable({
    write(chunk: Buffer, _enc, cb) {
      err += chunk.toString()
      cb()
    },
  })
  const io: Io = { stdout, stderr, env }
  return { io, out: () => out, err: () => err }
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[\d+m/

describe('colorEnabled', () => {
  const tty = { isTTY: true }
  const pipe = { isTTY: false }
  it.each([
    // [env, stream, expected]
    [{}, tty, true],
    [{}, pipe, false],
    [{ NO_COLOR: '1' }, tty, false],
    // no-color.org: present and not empty
    [{ NO_COLOR: '' }, tty, true],
    [{ FORCE_COLOR: '1' }, pipe, true],
    [{ FORCE_COLOR: '' }, pipe, true],
    [{ FORCE_COLOR: '3' }, pipe, true],
    [{ FORCE_COLOR: 'true' }, pipe, true],
    [{ FORCE_COLOR: '0' }, tty, false],
    [{ FORCE_COLOR: 'false' }, tty, false],
    // FORCE_COLOR wins over NO_COLOR, as in Node and supports-color
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, pipe, true],
    [{ TERM: 'dumb' }, tty, false],
  ] as const)('%j on a %j stream: %s', (env, stream, expected) => {
    expect(colorEnabled({ env, stream })).toBe(expected)
  })
})

describe('verdicts in colour on the CLI', () => {
  let dir: string
  let db: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fw-color-'))
    db = join(dir, 'fw.db')
    const store = await openStore({ db })
    const h = history()
    for (let i = 0; i < 12; i++) {
      h.run(`r${i}`).pass('steady')
      if (i % 3 === 0) h.flaky('wobbly')
      else h.pass('wobbly')
      if (i < 4) h.pass('falls')
      else h.fail('falls')
    }
    for (const b of h.build()) await store.ingestReport(b)
    await store.close()
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('colours the verdict column on a terminal, and nothing else of a test name', async () => {
    const c = captureIo({}, true)
    expect(await runCli(['analyze', '--db', db], c.io)).toBe(0)
    const lines = c.out().split('\n')
    const wobbly = lines.find((l) => l.includes('wobbly'))!
    const falls = lines.find((l) => l.includes('falls'))!
    const steady = lines.find((l) => l.includes('steady'))!
    expect(wobbly).toContain('\u001b[33mflaky\u001b[39m')
    expect(falls).toContain('\u001b[31mbroken\u001b[39m')
    // eslint-disable-next-line no-control-regex
    expect(steady).toMatch(/\u001b\[(32|90)m(healthy|too few runs)\u001b\[39m/)
    // The header and the rule carry none.
    expect(lines[0]).not.toMatch(ANSI)
  })

  it('writes no colour into a pipe, with NO_COLOR, or into --output', async () => {
    const pipe = captureIo({}, false)
    await runCli(['analyze', '--db', db], pipe.io)
    expect(pipe.out()).toContain('flaky')
    expect(pipe.out()).not.toMatch(ANSI)
    const noColor = captureIo({ NO_COLOR: '1' }, true)
    await runCli(['analyze', '--db', db], noColor.io)
    expect(noColor.out()).not.toMatch(ANSI)
  })

  it('FORCE_COLOR colours into a pipe (a CI log), and FORCE_COLOR=0 turns a terminal off', async () => {
    const forced = captureIo({ FORCE_COLOR: '1' }, false)
    await runCli(['analyze', '--db', db], forced.io)
    expect(forced.out()).toContain('\u001b[33mflaky\u001b[39m')
    const off = captureIo({ FORCE_COLOR: '0' }, true)
    await runCli(['analyze', '--db', db], off.io)
    expect(off.out()).not.toMatch(ANSI)
  })

  it('keeps --json free of colour whatever the environment', async () => {
    const c = captureIo({ FORCE_COLOR: '1' }, true)
    await runCli(['analyze', '--db', db, '--json'], c.io)
    expect(c.out()).not.toMatch(ANSI)
    expect(JSON.parse(c.out())).toBeInstanceOf(Array)
  })

  it('colours show: the verdict and the history strip', async () => {
    const c = captureIo({ FORCE_COLOR: '1' }, false)
    expect(await runCli(['show', 'unit::mod::falls', '--db', db], c.io)).toBe(0)
    expect(c.out()).toContain('verdict: \u001b[31mbroken\u001b[39m')
    expect(c.out()).toContain('\u001b[31m✗\u001b[39m')
    expect(c.out()).toContain('\u001b[32m✓\u001b[39m')
  })
})
