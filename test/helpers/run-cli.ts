import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { StringDecoder } from 'node:string_decoder'

export const ROOT = join(import.meta.dirname, '..', '..')
export const CLI = join(ROOT, 'dist', 'cli', 'main.js')

export interface CliResult {
  stdout: string
  stderr: string
  exitCode: number
}

/** Runs the built CLI as a user would, in its own process, and captures everything. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...opts.env }
    // The developer's own CI variables must not leak into run context assertions.
    for (const k of [
      'GITHUB_ACTIONS',
      'GITLAB_CI',
      'BUILDKITE',
      'CIRCLECI',
      'JENKINS_URL',
      'FLAKEWATCH_DB',
      'GITHUB_STEP_SUMMARY',
    ]) {
      if (!opts.env || !(k in opts.env)) delete env[k]
    }
    const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env })
    let stdout = ''
    let stderr = ''
    // Decoded across chunks: a pipe may split a character's UTF-8 bytes between two reads.
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, exitCode: code ?? -1 }))
  })
}

/** A temporary directory under the repository (so that node_modules resolve), filled with the given files. */
export function testdir(files: Record<string, string> = {}, prefix = 'e2e-'): string {
  const base = join(ROOT, 'test', '.tmp')
  mkdirSync(base, { recursive: true })
  const dir = mkdtempSync(join(base, prefix))
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), content)
  }
  return dir
}

export interface ServeProcess {
  url: string
  /** The server's process id (its upload workers are its children). */
  pid: number
  /** Everything it printed on stderr so far. */
  stderr: () => string
  close: () => Promise<void>
  /** kill -9, as a crash or the OOM killer would, resolved once the process is gone. */
  crash: () => Promise<void>
}

/** `flakewatch serve` from the built CLI, as its own process on a free port, as a team would run it. */
export async function spawnServe(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: '1', FLAKEWATCH_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\/$/m.exec(out)
      if (m) resolve(m[1]!)
    })
    child.on('exit', (code) => reject(new Error(`flakewatch serve exited with ${code}: ${err}`)))
  })
  return {
    url,
    pid: child.pid!,
    stderr: () => err,
    close: () => stop('SIGTERM'),
    crash: () => stop('SIGKILL'),
  }
  function stop(signal: NodeJS.Signals): Promise<void> {
    return new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill(signal)
    })
  }
}

/**
 * Runs the CLI in this process (the source, not `dist/`), with stdout and stderr captured: for tests that check
 * many exit codes, where a process per call would cost a second each.
 */
export async function runCliHere(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const { Writable } = await import('node:stream')
  const { runCli: run } = await import('../../src/cli/main.js')
  const sink = () => {
    let text = ''
    // The CLI writes bytes in blocks of its own, which may split a character's UTF-8 bytes.
    const decoder = new StringDecoder('utf8')
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        text += decoder.write(chunk)
        done()
      },
    })
    return { stream, text: () => text + decoder.end() }
  }
  const out = sink()
  const err = sink()
  const exitCode = await run(args, {
    stdout: out.stream,
    stderr: err.stream,
    env: { ...process.env, NO_COLOR: '1', FLAKEWATCH_DB: undefined, ...env },
  })
  return { stdout: out.text(), stderr: err.text(), exitCode }
}
