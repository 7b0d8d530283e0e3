import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { beforeAll, describe, expect, it } from 'vitest'
import { requestLogger } from '../../src/cli/commands/serve.js'
import { CLI, ROOT, runCli, spawnServe, testdir } from '../helpers/run-cli.js'

const EXAMPLES = join(ROOT, 'examples', 'reports')
let dir: string
let db: string

beforeAll(async () => {
  dir = testdir({}, 'conventions-')
  db = join(dir, 'fw.db')
  const r = await runCli(['ingest', EXAMPLES, '--db', db])
  expect(r.exitCode, r.stderr).toBe(0)
})

const jsonError = (stdout: string) => (JSON.parse(stdout) as { error: { code: string; message: string } }).error

describe('usage errors exit 2, and say so in JSON under --json', () => {
  it('an unknown option', async () => {
    const r = await runCli(['analyze', '--db', db, '--bogus', '--json'])
    expect(r.exitCode).toBe(2)
    expect(jsonError(r.stdout)).toEqual({ code: 'FW_USAGE', message: "unknown option '--bogus'" })
    expect(r.stderr).toMatch(/unknown option '--bogus'/)
  })

  it('an unknown command, a missing argument, a bad choice', async () => {
    expect((await runCli(['bogus'])).exitCode).toBe(2)
    expect((await runCli(['show'])).exitCode).toBe(2)
    const choice = await runCli(['ingest', EXAMPLES, '--format', 'nope', '--json'])
    expect(choice.exitCode).toBe(2)
    expect(jsonError(choice.stdout).code).toBe('FW_USAGE')
  })

  it('a tool error under --json is one JSON object on stdout', async () => {
    const r = await runCli(['show', 'no::such::test', '--db', db, '--json'])
    expect(r.exitCode).toBe(2)
    expect(jsonError(r.stdout)).toMatchObject({
      code: 'FW_NOT_FOUND',
      message: expect.stringMatching(/no::such::test/),
    })
  })

  it('without --json, stdout stays empty on an error', async () => {
    const r = await runCli(['analyze', '--db', db, '--bogus'])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
  })
})

describe('filters', () => {
  it('an unknown value is an error listing the valid ones', async () => {
    const r = await runCli(['analyze', '--db', db, '--verdict', 'flakey', '--json'])
    expect(r.exitCode).toBe(2)
    expect(jsonError(r.stdout).message).toBe(
      '--verdict: unknown value "flakey"; valid: flaky, broken, healthy, insufficient_data',
    )
    const cls = await runCli(['analyze', '--db', db, '--class', 'stable,wobbly'])
    expect(cls.exitCode).toBe(2)
    expect(cls.stderr).toMatch(/--class: unknown value "wobbly"; valid: stable, intermittent, flaky, chronic/)
  })

  it('--limit cuts the table, not the summary: the counts are of every test matched', async () => {
    const all = await runCli(['analyze', '--db', db])
    const total = /^(\d+) tests: (.*)$/m.exec(all.stderr)!
    expect(Number(total[1])).toBeGreaterThan(3)
    const three = await runCli(['analyze', '--db', db, '--limit', '3'])
    expect(three.stdout.trim().split('\n')).toHaveLength(2 + 3)
    expect(three.stderr.trim()).toBe(`${total[0]} (the first 3 shown: --limit 3)`)
  })

  it('a filter that matches nothing says so, naming the filters', async () => {
    const r = await runCli(['analyze', '--db', db, '--suite', 'nope'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe('no tests match --suite nope\n')
    const json = await runCli(['analyze', '--db', db, '--suite', 'nope', '--json'])
    expect(JSON.parse(json.stdout)).toEqual([])
  })
})

describe('read commands never create a database or a folder', () => {
  const reads = [
    ['analyze'],
    ['show', 'default::x::y'],
    ['quarantine', 'list'],
    ['quarantine', 'export', '-o', 'q.json'],
    ['quarantine', 'auto', '--dry-run'],
    ['export', 'csv'],
    ['export', 'bundle'],
    ['export', 'stats'],
    ['list', '--flaky'],
    ['notify', 'log'],
    ['audit', 'verify'],
    ['audit', 'head'],
    ['heals'],
    // Not a read, but pruning a store that is not there would only make an empty one.
    ['prune', '--days', '30'],
  ]
  it.each(reads)('%s %s', async (...args: string[]) => {
    const scratch = testdir({}, 'read-')
    for (const target of ['missing-dir/x.db', 'x.db']) {
      const r = await runCli([...args, '--db', target], { cwd: scratch })
      expect(r.exitCode, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/no flakewatch database here/)
      expect(existsSync(join(scratch, target))).toBe(false)
      expect(existsSync(join(scratch, 'missing-dir'))).toBe(false)
    }
  })

  it('serve starts no empty store in the wrong folder: the default one only with --init, a named one as named', async () => {
    const scratch = testdir({}, 'serve-')
    const refused = await runCli(['serve', '--port', '0'], { cwd: scratch })
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toMatch(/\.flakewatch\.db: no flakewatch database here\. .*--db <file>.*--init/)
    expect(readdirSync(scratch)).toEqual([])
    for (const [args, file] of [
      [['--init'], '.flakewatch.db'],
      [['--db', 'named.db'], 'named.db'],
    ] as const) {
      const served = await spawnServe([...args], { cwd: scratch, env: { FLAKEWATCH_DB: undefined } })
      expect((await fetch(`${served.url}/healthz`)).status).toBe(200)
      await served.close()
      expect(existsSync(join(scratch, file))).toBe(true)
    }
  })

  it('a write command creates the database, but never a missing folder', async () => {
    const scratch = testdir({}, 'write-')
    const r = await runCli(['ingest', EXAMPLES, '--db', 'missing-dir/x.db'], { cwd: scratch })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/missing-dir\/x\.db: the folder missing-dir does not exist/)
    expect(existsSync(join(scratch, 'missing-dir'))).toBe(false)
    expect((await runCli(['ingest', EXAMPLES, '--db', 'x.db'], { cwd: scratch })).exitCode).toBe(0)
    expect(existsSync(join(scratch, 'x.db'))).toBe(true)
  })

  it('the gate without a database or quarantine file: nothing is quarantined, with a warning', async () => {
    const scratch = testdir({}, 'gate-')
    const report = join(EXAMPLES, '2026-11-21-unit.xml')
    const noDb = await runCli(['gate', report, '--db', 'none.db'], { cwd: scratch })
    expect(noDb.stderr).toMatch(/warning: no flakewatch database at none\.db: no test is quarantined/)
    expect([0, 1]).toContain(noDb.exitCode)
    expect(existsSync(join(scratch, 'none.db'))).toBe(false)
    const noFile = await runCli(['gate', report, '--quarantine-file', '.flakewatch/quarantine.json'], { cwd: scratch })
    expect(noFile.stderr).toMatch(/warning: \.flakewatch\/quarantine\.json does not exist: no test is quarantined/)
    expect(noFile.exitCode).toBe(noDb.exitCode)
  })
})

describe('dry runs are marked', () => {
  it('quarantine auto --dry-run', async () => {
    const human = await runCli(['quarantine', 'auto', '--dry-run', '--db', db])
    expect(human.exitCode, human.stderr).toBe(0)
    expect(human.stderr).toMatch(/^dry run: nothing was changed/)
    expect(human.stdout).toMatch(/^would\s+test\s+reason/)
    const json = await runCli(['quarantine', 'auto', '--dry-run', '--db', db, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ dry_run: true })
    const list = await runCli(['quarantine', 'list', '--db', db, '--json'])
    expect(JSON.parse(list.stdout)).toMatchObject({ quarantined: [] })
  })
})

describe('output flags', () => {
  it('quarantine export takes -o/--output like every other command (and --file still works)', async () => {
    for (const flag of ['-o', '--output', '--file']) {
      const out = join(dir, `q${flag}.json`)
      const r = await runCli(['quarantine', 'export', '--db', db, flag, out])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(JSON.parse(readFileSync(out, 'utf8'))).toBeTruthy()
    }
  })
})

describe('run passes signals on to the command', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal}: the command receives it, and run exits ${code}`, async () => {
      const scratch = testdir({}, 'signal-')
      const child = [
        "const fs = require('fs')",
        `process.on('${signal}', () => { fs.writeFileSync('got-signal', '${signal}'); process.exit(0) })`,
        "fs.writeFileSync('ready', '1')",
        'setInterval(() => {}, 1000)',
      ].join('\n')
      writeFileSync(join(scratch, 'child.cjs'), child)
      const proc = spawn(process.execPath, [CLI, 'run', '--db', 'fw.db', '--', process.execPath, 'child.cjs'], {
        cwd: scratch,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      await expect.poll(() => existsSync(join(scratch, 'ready')), { timeout: 20_000 }).toBe(true)
      proc.kill(signal)
      const exit = await new Promise<number | null>((r) => proc.on('close', (c) => r(c)))
      expect(exit).toBe(code)
      expect(readFileSync(join(scratch, 'got-signal'), 'utf8')).toBe(signal)
      expect(stderr).toMatch(new RegExp(`interrupted by ${signal}; nothing was recorded`))
      expect(existsSync(join(scratch, 'fw.db'))).toBe(false)
    })
  }
})

describe('serve request logs', () => {
  const capture = (isTTY: boolean) => {
    const stream = Object.assign(new PassThrough(), { isTTY })
    let text = ''
    stream.on('data', (d: Buffer) => (text += d.toString()))
    return { io: { stdout: new PassThrough(), stderr: stream, env: {} }, text: () => text }
  }
  const entry = { method: 'GET', url: '/api/v1/leaderboard?x=\u001b[2J', status: 200, ms: 12 }

  it('one short line on a terminal', () => {
    const c = capture(true)
    requestLogger(c.io)!(entry)
    expect(c.text()).toBe('GET /api/v1/leaderboard?x=[2J 200 12 ms\n')
  })

  it('one JSON line otherwise', () => {
    const c = capture(false)
    requestLogger(c.io)!(entry)
    const lines = c.text().trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'request', method: 'GET', status: 200, ms: 12 })
  })

  it('a real server logs each request once', async () => {
    const proc = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FLAKEWATCH_DB: undefined },
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    try {
      await expect.poll(() => stdout, { timeout: 20_000 }).toMatch(/^http:\/\//)
      const url = stdout.trim().split('\n')[0]!
      expect((await fetch(`${url}healthz`)).status).toBe(200)
      await expect.poll(() => stderr).toMatch(/"url":"\/healthz"/)
      expect(stderr.split('\n').filter((l) => l.includes('/healthz'))).toHaveLength(1)
    } finally {
      proc.kill('SIGTERM')
      await new Promise((r) => proc.on('close', r))
    }
  })
})
