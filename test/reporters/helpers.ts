import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStore } from '../../src/store/open.js'
import { CHROMIUM_PATH, PLAYWRIGHT_LAUNCH_OPTIONS } from '../helpers/chromium.js'
import { ROOT, testdir } from '../helpers/run-cli.js'

export { ROOT }

export const CHROMIUM = CHROMIUM_PATH

export const BIN = {
  vitest: join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
  jest: join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
  playwright: join(ROOT, 'node_modules', '@playwright', 'test', 'cli.js'),
  flakewatch: join(ROOT, 'dist', 'cli', 'main.js'),
}

/** The Playwright `use` block for the tests' Chromium (test/helpers/chromium.ts), as a config-file snippet. */
export const PLAYWRIGHT_USE = `{ launchOptions: ${PLAYWRIGHT_LAUNCH_OPTIONS} }`

const REPORTER_DIST = ['playwright/reporter.js', 'reporters/vitest.js', 'reporters/jest.js', 'cli/main.js']

function newest(dir: string): number {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return t
}

/**
 * The runners load the reporters from dist/, as users do. The global setup normally builds it; this covers a
 * run without it. Concurrent test files take turns through a directory lock.
 */
export function ensureDist(): void {
  const stale = () => {
    const built = REPORTER_DIST.map((f) => join(ROOT, 'dist', f))
    if (built.some((f) => !existsSync(f))) return true
    const oldest = Math.min(...built.map((f) => statSync(f).mtimeMs))
    const reporter = statSync(join(ROOT, 'src', 'playwright', 'reporter.ts')).mtimeMs
    return Math.max(newest(join(ROOT, 'src', 'reporters')), reporter) > oldest
  }
  if (!stale()) return
  const lock = join(ROOT, 'test', '.tmp', 'reporters-build.lock')
  mkdirSync(join(ROOT, 'test', '.tmp'), { recursive: true })
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} held for 2 minutes; remove it if no build is running`)
      execFileSync('sleep', ['0.5'])
    }
  }
  try {
    if (!stale()) return
    try {
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' })
    } catch {
      // tsc emits despite type errors elsewhere in the tree; the typecheck step reports those.
    }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/**
 * A suite directory under test/.tmp (so the runners resolve from the repository's node_modules) in which
 * `flakewatch/...` resolves as in a user's project: node_modules/flakewatch holds the package.json exports and
 * a link to the built dist/.
 */
export function projectDir(prefix: string, files: Record<string, string>): string {
  const dir = testdir(files, `reporters-${prefix}-`)
  const pkg = join(dir, 'node_modules', 'flakewatch')
  mkdirSync(pkg, { recursive: true })
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
  const { name, type, exports } = manifest
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name, type, exports }))
  symlinkSync(join(ROOT, 'dist'), join(pkg, 'dist'), 'dir')
  // A repository of its own, as a user's project is: test ids carry paths relative to it, whatever surrounds it.
  execFileSync('git', ['init', '-q'], { cwd: dir })
  return dir
}

export interface Ran {
  exitCode: number
  stdout: string
  stderr: string
}

/** Variables of CI systems and of flakewatch: the developer's own must not leak into run-context assertions. */
const LEAKY = /^(CI|GITHUB_.*|GITLAB_CI|CI_.*|BUILDKITE.*|CIRCLE.*|JENKINS_.*|BUILD_.*|FLAKEWATCH_.*|RUNNER_.*)$/

/** Runs a node script (a runner's bin, the CLI) in `cwd` with a clean environment plus `env`. */
export function run(script: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const base: Record<string, string> = { NO_COLOR: '1', FORCE_COLOR: '0' }
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !LEAKY.test(k)) base[k] = v
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env: { ...base, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ exitCode: code ?? -1, stdout, stderr }))
  })
}

/** What a comparison looks at for one test in one run. */
export interface StoredTest {
  status: string
  flakyOnRetry: boolean
  healingOccurred: boolean
  attempts: string[]
  runStatus: string
  env: Record<string, string>
}

/** Every test of a store with its latest result, keyed by test id, read through the Store interface. */
export async function readStore(db: string): Promise<Map<string, StoredTest>> {
  const store = await openStore({ db })
  try {
    const out = new Map<string, StoredTest>()
    for (const t of await store.listTests()) {
      const history = await store.getTestHistory(t.testId)
      const e = history!.entries.at(-1)!
      const attempts = await store.getAttempts(t.testId, e.run.runId)
      out.set(t.testId, {
        status: e.status,
        flakyOnRetry: e.flakyOnRetry,
        healingOccurred: e.healingOccurred,
        attempts: attempts.map((a) => a.status),
        runStatus: e.run.status,
        env: e.run.env,
      })
    }
    return out
  } finally {
    await store.close()
  }
}

type Comparable = Pick<StoredTest, 'status' | 'flakyOnRetry' | 'attempts'>

/** The part of a stored test that must be identical however it got into the store. */
export function comparable(tests: Map<string, StoredTest>): Record<string, Comparable> {
  return Object.fromEntries(
    [...tests].map(([id, t]) => [id, { status: t.status, flakyOnRetry: t.flakyOnRetry, attempts: t.attempts }]),
  )
}

/** Removes a suite directory once its test is done; kept with FLAKEWATCH_KEEP_TMP=1 for debugging. */
export function cleanup(dir: string | undefined): void {
  if (dir && !process.env.FLAKEWATCH_KEEP_TMP) rmSync(dir, { recursive: true, force: true })
}
