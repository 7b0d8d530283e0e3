import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { BIN, projectDir, ROOT } from '../reporters/helpers.js'
import { spawnServe } from '../helpers/run-cli.js'

export { ROOT }

export interface CodeBlock {
  /** The info string after the fence: `yaml`, `ts`, `sh parse-only`. */
  info: string
  code: string
}

/**
 * The fenced code blocks of one `## heading` section of a Markdown page, in order, with list indentation removed:
 * what the tests run is what the page shows, so a recipe that drifts fails here.
 */
export function sectionBlocks(page: string, heading: string): CodeBlock[] {
  const text = readFileSync(join(ROOT, page), 'utf8')
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`${page}: no section "## ${heading}"`)
  const next = text.indexOf('\n## ', start + 4)
  const section = text.slice(start, next < 0 ? undefined : next)
  const blocks: CodeBlock[] = []
  const fence = /^( *)```(\S[^\n]*)\n([\s\S]*?)^\1```$/gm
  for (let m = fence.exec(section); m; m = fence.exec(section)) {
    const indent = m[1]!.length
    const code = m[3]!
      .split('\n')
      .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
      .join('\n')
    blocks.push({ info: m[2]!.trim(), code })
  }
  return blocks
}

export function yamlOf(block: CodeBlock | undefined): unknown {
  if (!block || block.info !== 'yaml') throw new Error(`expected a yaml block, got ${block?.info}`)
  return parse(block.code) as unknown
}

/**
 * A user's project under test/.tmp: `flakewatch` installed as node_modules/flakewatch (the built package), and the
 * runners' bins in node_modules/.bin, so that `npx flakewatch`, `npx vitest` and `npx jest` resolve locally, as
 * after `npm ci`.
 */
export function userProject(prefix: string, files: Record<string, string>): string {
  const dir = projectDir(`recipe-${prefix}`, { 'package.json': '{"name":"shop","private":true}\n', ...files })
  const bin = join(dir, 'node_modules', '.bin')
  mkdirSync(bin, { recursive: true })
  symlinkSync(BIN.flakewatch, join(bin, 'flakewatch'))
  symlinkSync(BIN.vitest, join(bin, 'vitest'))
  symlinkSync(BIN.jest, join(bin, 'jest'))
  return dir
}

/** Variables of CI systems and of flakewatch: the developer's own must not leak into a simulated job. */
const LEAKY = /^(CI|GITHUB_.*|GITLAB_.*|CI_.*|BUILDKITE.*|CIRCLE.*|JENKINS_.*|BUILD_.*|FLAKEWATCH_.*|RUNNER_.*)$/

export interface Shell {
  exitCode: number
  output: string
}

/**
 * Runs a CI script in bash as a runner does (`-e`: the first failing command fails the step), with a clean
 * environment plus the CI's variables. npx may only use what is installed: it must never fetch a package.
 */
export function sh(script: string, cwd: string, env: Record<string, string>): Promise<Shell> {
  const base: Record<string, string> = { NO_COLOR: '1', FORCE_COLOR: '0', npm_config_offline: 'true' }
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !LEAKY.test(k)) base[k] = v
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { ...base, ...env } })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ exitCode: code ?? -1, output }))
  })
}

export interface Server {
  url: string
  close: () => Promise<void>
}

/** `flakewatch serve` as its own process on a free port, as a team would run it. */
export function serve(db: string, token: string): Promise<Server> {
  return spawnServe(['--db', db], { env: { FLAKEWATCH_WRITE_TOKEN: token } })
}
