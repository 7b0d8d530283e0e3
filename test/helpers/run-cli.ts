import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

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
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
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
