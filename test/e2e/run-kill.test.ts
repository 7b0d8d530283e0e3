import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { CLI, runCli, testdir } from '../helpers/run-cli.js'

/** Whether `pid` still runs anything (a zombie waiting to be reaped does not). */
function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0]
    return state !== 'Z'
  } catch {
    return false
  }
}

/** Polls `check` up to `tries` times, 50 ms apart; a count, so that a slow machine only makes it wait longer. */
async function eventually(check: () => boolean, tries = 400): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (check()) return true
    await sleep(50)
  }
  return check()
}

/** A test command that starts a grandchild and records both pids, then sleeps far longer than any test. */
const SLEEPER = `
const { spawn } = require('node:child_process')
const { writeFileSync } = require('node:fs')
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' })
writeFileSync('pids.json', JSON.stringify({ command: process.pid, grandchild: grandchild.pid }))
setInterval(() => {}, 1e6)
`

describe.skipIf(process.platform !== 'linux')('flakewatch run killed with SIGKILL', () => {
  it('takes its test command, and what the command started, down with it', { timeout: 120_000 }, async () => {
    const dir = testdir({}, 'run-kill-')
    const run = spawn(
      process.execPath,
      [CLI, 'run', '--db', join(dir, 'fw.db'), '--allow-no-report', '--', process.execPath, '-e', SLEEPER],
      { cwd: dir, stdio: ['pipe', 'ignore', 'ignore'], env: { ...process.env, NO_COLOR: '1' } },
    )
    const pidsFile = join(dir, 'pids.json')
    expect(await eventually(() => existsSync(pidsFile) && readFileSync(pidsFile, 'utf8').endsWith('}'))).toBe(true)
    const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { command: number; grandchild: number }
    expect([alive(pids.command), alive(pids.grandchild)]).toEqual([true, true])

    const exited = new Promise((resolve) => run.once('exit', (_code, signal) => resolve(signal)))
    run.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(await eventually(() => !alive(pids.command) && !alive(pids.grandchild))).toBe(true)
  })

  it('still passes on the command’s exit code, its signal and a missing command', async () => {
    const dir = testdir({}, 'run-kill-')
    const base = ['run', '--db', join(dir, 'fw.db'), '--allow-no-report', '--']
    const code = await runCli([...base, process.execPath, '-e', 'process.exit(5)'], { cwd: dir })
    expect(code.exitCode).toBe(5)
    const signal = await runCli([...base, process.execPath, '-e', "process.kill(process.pid, 'SIGTERM')"], { cwd: dir })
    expect(signal.exitCode).toBe(143)
    expect(signal.stderr).toMatch(/interrupted by SIGTERM; nothing was recorded/)
    const missing = await runCli([...base, 'no-such-command-fw'], { cwd: dir })
    expect(missing.exitCode).toBe(127)
    expect(missing.stderr).toMatch(/cannot start no-such-command-fw/)
  })
})
