import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { ENGINE_WARNING, packTarball, run, SCRATCH_PACKAGE, type PackResult } from './pack-tarball.js'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string
  scripts: Record<string, string>
  engines: { node: string }
  bin: Record<string, string>
  exports: Record<string, string | { types: string; default: string }>
}

let dir: string
let packed: PackResult
let files: string[]

beforeAll(async () => {
  dir = testdir({}, 'pack-')
  packed = await packTarball(dir)
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

  it('ships no tests, no sources, no databases (but the example project of `flakewatch demo`)', () => {
    expect(files).toContain('examples/project/src/cart.test.ts')
    const own = files.filter((f) => !f.startsWith('examples/project/'))
    expect(own.filter((f) => /^(test|src|bench|scripts|\.ci)\//.test(f))).toEqual([])
    expect(files.filter((f) => /\.db(-wal|-shm)?$|\.tsbuildinfo$/.test(f))).toEqual([])
    expect(own.filter((f) => /\.test\./.test(f))).toEqual([])
    expect(own.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([])
  })
})

describe('npm i -D flakewatch, from the tarball', () => {
  let project: string
  let install: { stdout: string; stderr: string }

  beforeAll(async () => {
    project = testdir({ 'package.json': SCRATCH_PACKAGE }, 'install-')
    const tarball = join(dir, packed.filename)
    // Install scripts are skipped so that no native build runs here; the repository's own build of the same
    // better-sqlite3 version stands in for it below. Packages come from npm's cache when it has them.
    install = await run(
      'npm',
      ['i', '-D', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball],
      {
        cwd: project,
        maxBuffer: 16 * 1024 * 1024,
      },
    )
  }, 240_000)

  it('prints no engine warning on this Node, which is in the range the README claims', () => {
    const claimed = pkg.engines.node
    expect(semver.satisfies(process.version, claimed), `${process.version} is outside ${claimed}`).toBe(true)
    expect(install.stderr).not.toMatch(ENGINE_WARNING)
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme).toContain(`Node.js ${describeRange(claimed)}`)
  })

  it('installs only packages whose own engines admit the lowest Node of every part of the claimed range', () => {
    const lowest = semver.toComparators(pkg.engines.node).map((set) => semver.minVersion(set.join(' '))!.version)
    expect(lowest).toEqual(['20.19.0', '22.12.0'])
    const refused: string[] = []
    for (const file of packageFiles(join(project, 'node_modules'))) {
      const dep = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: string
        version?: string
        engines?: { node?: string }
      }
      const range = dep.engines?.node
      if (!dep.name || !range) continue
      for (const v of lowest)
        if (!semver.satisfies(v, range)) refused.push(`${dep.name}@${dep.version} (${range}) refuses ${v}`)
    }
    expect(refused).toEqual([])
  })

  it('runs there: the CLI, the examples, the library', async () => {
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

    // The README's first command, from the installed package: no clone, the leaderboard of the examples.
    const demo = await run('npx', ['--no-install', 'flakewatch', 'demo', '--dir', 'shop', '--no-serve'], {
      cwd: project,
    })
    expect(demo.stdout).toMatch(/^unit::shop\.checkout\.PaymentGatewayTest::charges a card .* flaky /m)
    expect(existsSync(join(project, 'shop/examples/reports/2026-11-21-unit.xml'))).toBe(true)

    // The library resolves by its package name, as a user's code imports it.
    writeFileSync(join(project, 'check.mjs'), "import { openStore } from 'flakewatch'\nconsole.log(typeof openStore)\n")
    expect((await run(process.execPath, ['check.mjs'], { cwd: project })).stdout.trim()).toBe('function')
  }, 240_000)
})

/** "^20.19.0 || >=22.12.0" as the README words it: "20.19+ or 22.12+". */
function describeRange(range: string): string {
  return semver
    .toComparators(range)
    .map((set) => `${semver.minVersion(set.join(' '))!.version.replace(/\.0$/, '')}+`)
    .join(' or ')
}

/** Every package.json of the installed packages, nested ones included. */
function packageFiles(modules: string): string[] {
  const out: string[] = []
  if (!existsSync(modules)) return out
  for (const e of readdirSync(modules, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue
    const dirs = e.name.startsWith('@')
      ? readdirSync(join(modules, e.name)).map((n) => join(modules, e.name, n))
      : [join(modules, e.name)]
    for (const d of dirs) {
      if (existsSync(join(d, 'package.json'))) out.push(join(d, 'package.json'))
      out.push(...packageFiles(join(d, 'node_modules')))
    }
  }
  return out
}
