import { execFile } from 'node:child_process'
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT, testdir } from '../helpers/run-cli.js'

const run = promisify(execFile)
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string
  scripts: Record<string, string>
  bin: Record<string, string>
  exports: Record<string, string | { types: string; default: string }>
}

interface PackResult {
  filename: string
  files: { path: string; mode: number }[]
}

let dir: string
let packed: PackResult
let files: string[]

beforeAll(async () => {
  dir = testdir({}, 'pack-')
  // `prepack` would rebuild; the global setup and `npm test` already built dist/, so pack what is there.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  })
  packed = (JSON.parse(stdout) as PackResult[])[0]!
  files = packed.files.map((f) => f.path)
}, 120_000)

describe('npm pack', () => {
  it('builds before packing, so a fresh clone never ships without dist/', () => {
    expect(pkg.scripts.prepack).toBe('npm run build')
  })

  it('ships the CLI, the library, every export, the schemas and the dashboard', () => {
    const bin = Object.values(pkg.bin)[0]!
    expect(files).toContain(bin)
    expect(packed.files.find((f) => f.path === bin)!.mode & 0o111).not.toBe(0)
    for (const target of Object.values(pkg.exports)) {
      if (typeof target === 'string') expect(files).toContain(target.replace(/^\.\//, ''))
      else for (const p of [target.types, target.default]) expect(files).toContain(p.replace(/^\.\//, ''))
    }
    expect(files).toContain('schema/flake-history-bundle.v1.schema.json')
    expect(files).toContain('schema/flakewatch.config.schema.json')
    expect(files).toContain('dist/web/index.html')
    expect(files.some((f) => /^dist\/web\/assets\/.+\.js$/.test(f))).toBe(true)
    expect(files.some((f) => /^dist\/web\/assets\/.+\.css$/.test(f))).toBe(true)
    expect(files).toContain('README.md')
    expect(files.some((f) => f.startsWith('examples/reports/'))).toBe(true)
  })

  it('ships no tests, no sources, no databases', () => {
    expect(files.filter((f) => /^(test|src|bench|scripts|\.ci)\//.test(f))).toEqual([])
    expect(files.filter((f) => /\.test\.|\.db(-wal|-shm)?$|\.tsbuildinfo$/.test(f))).toEqual([])
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([])
  })
})

describe('npm i -D flakewatch, from the tarball', () => {
  it('installs into a fresh project and runs there', async () => {
    const project = testdir({ 'package.json': '{"name":"scratch","version":"1.0.0","private":true}\n' }, 'install-')
    const tarball = join(dir, packed.filename)
    // Install scripts are skipped so that no native build runs here; the repository's own build of the same
    // better-sqlite3 version stands in for it below.
    await run('npm', ['i', '-D', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    })
    const version = await run('npx', ['--no-install', 'flakewatch', '--version'], { cwd: project })
    expect(version.stdout.trim()).toBe(pkg.version)

    const ownSqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8'))
    const theirs = join(project, 'node_modules/better-sqlite3')
    expect(JSON.parse(readFileSync(join(theirs, 'package.json'), 'utf8')).version).toBe(ownSqlite.version)
    cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(theirs, 'build'), { recursive: true })

    const examples = join(project, 'node_modules/flakewatch/examples/reports')
    const ingest = await run('npx', ['--no-install', 'flakewatch', 'ingest', examples, '--json'], { cwd: project })
    expect(JSON.parse(ingest.stdout).ingested.length).toBeGreaterThan(10)
    expect(existsSync(join(project, '.flakewatch.db'))).toBe(true)
    const analyze = await run('npx', ['--no-install', 'flakewatch', 'analyze', '--json'], { cwd: project })
    const verdicts = (JSON.parse(analyze.stdout) as { verdict: string }[]).map((a) => a.verdict)
    expect(verdicts).toContain('flaky')

    // The library resolves by its package name, as a user's code imports it.
    writeFileSync(join(project, 'check.mjs'), "import { openStore } from 'flakewatch'\nconsole.log(typeof openStore)\n")
    expect((await run(process.execPath, ['check.mjs'], { cwd: project })).stdout.trim()).toBe('function')
  }, 240_000)
})
