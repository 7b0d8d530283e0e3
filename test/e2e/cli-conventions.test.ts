import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
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
    ['tickets', 'list'],
    ['tickets', 'plan'],
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
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
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

describe("serve logs: one JSON shape (pino's), requests only when asked for", () => {
  /** The JSON lines `serve` wrote on stderr after answering /healthz and a 404. */
  async function logsOf(args: string[], env: Record<string, string | undefined>) {
    const served = await spawnServe(['--db', db, ...args], { env: { FLAKEWATCH_DB: undefined, ...env } })
    try {
      expect((await fetch(`${served.url}/healthz`)).status).toBe(200)
      expect((await fetch(`${served.url}/api/v1/tests/nope`)).status).toBe(404)
    } finally {
      await served.close()
    }
    const lines = served
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
    const json = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    // pino's shape: a numeric level, a time in ms, pid, hostname and msg; never {"level":"info"}.
    for (const l of json)
      expect(l).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) })
    return json.filter((l) => l.msg === 'request')
  }

  it('at the default level (info) no request is logged', async () => {
    expect(await logsOf([], { FLAKEWATCH_LOG_LEVEL: undefined })).toEqual([])
  })

  it('--log-requests logs each request once, at info', async () => {
    const requests = await logsOf(['--log-requests'], { FLAKEWATCH_LOG_LEVEL: undefined })
    expect(requests.map((r) => [r.level, r.method, r.url, r.status])).toEqual([
      [30, 'GET', '/healthz', 200],
      [30, 'GET', '/api/v1/tests/nope', 404],
    ])
  })

  it('FLAKEWATCH_LOG_LEVEL=debug shows them at debug', async () => {
    const requests = await logsOf([], { FLAKEWATCH_LOG_LEVEL: 'debug' })
    expect(requests.map((r) => [r.level, r.url])).toEqual([
      [20, '/healthz'],
      [20, '/api/v1/tests/nope'],
    ])
  })

  it('an unknown level is a usage error that lists the levels', async () => {
    const r = await runCli(['serve', '--db', db, '--port', '0'], { env: { FLAKEWATCH_LOG_LEVEL: 'verbose' } })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/FLAKEWATCH_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent/)
  })
})
