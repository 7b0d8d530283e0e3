import { spawn } from 'node:child_process'
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CommanderError, type Command } from 'commander'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/program.js'
import { CLI, ROOT, runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

/**
 * Every `flakewatch` command in a ```sh block of README.md and docs/*.md: parsed by the real CLI (an unknown
 * command or option, a missing argument or an invalid choice fails), then run in order in a scratch folder with
 * a copy of examples/ and a store filled from examples/reports, where it must not exit 2. See docs/development.md.
 */

interface DocCommand {
  page: string
  line: string
  /** The flakewatch words, without `npx` and leading variable assignments. */
  argv: string[]
  env: Record<string, string>
  run: boolean
}

/** Commands of the docs that are not flakewatch's, and what exercises them. */
const OTHER_COMMANDS: Record<string, string> = {
  'npm i -D flakewatch': 'test/install/pack.test.ts installs the packed tarball',
  'npm ci': '.ci/run',
  'npm run demo': 'test/install/pack.test.ts (ingest + analyze of examples/reports) and test/web/readme-screenshot.test.ts',
  'npm test': '.ci/run',
  'npm run build': '.ci/run (npm test builds first)',
  'npm run bench': 'bench/run.mjs, run by hand: never part of the tests',
  'npx tsc': '.ci/run (npm test builds first)',
  'node --expose-gc bench/': 'bench/run.mjs, run by hand',
  export: 'a shell variable for the commands after it',
  'curl ': 'test/server/upload.test.ts sends the same request',
  'npx playwright test': 'test/reporters/playwright.test.ts and test/retry/',
  'npx vitest run': 'test/recipes/github-actions.test.ts and test/reporters/vitest.test.ts',
  'npx jest': 'test/recipes/gitlab-ci.test.ts and test/reporters/jest.test.ts',
  true: 'the shell',
  'claude mcp add': 'test/mcp/stdio.test.ts starts `flakewatch mcp` as the client does; test/mcp/http.test.ts talks to /mcp',
}

/** The report of the tests the pages name (`unit::src/cart.test.ts::adds an item`), as Vitest's JUnit writes it. */
const CART_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="vitest tests" tests="2" failures="0">
  <testsuite name="src/cart.test.ts" tests="2" failures="0" errors="0" skipped="0" time="0.01">
    <testcase classname="src/cart.test.ts" name="adds an item" time="0.004"/>
    <testcase classname="src/cart.test.ts" name="applies a coupon" time="0.003"/>
  </testsuite>
</testsuites>
`

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** Shell words of one command line: quotes removed, `$(…)` kept whole. */
function words(line: string): string[] {
  const out: string[] = []
  let cur = ''
  let has = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      cur += line.slice(i + 1, end < 0 ? undefined : end)
      has = true
      i = end < 0 ? line.length : end
    } else if (c === '$' && line[i + 1] === '(') {
      const end = line.indexOf(')', i)
      cur += line.slice(i, end + 1)
      has = true
      i = end
    } else if (/\s/.test(c)) {
      if (has) out.push(cur)
      cur = ''
      has = false
    } else {
      cur += c
      has = true
    }
  }
  if (has) out.push(cur)
  return out
}

/** The commands of every ```sh block, with comments, continuations and `&&` chains taken apart. */
function docCommands(): { flakewatch: DocCommand[]; other: { page: string; line: string }[] } {
  const flakewatch: DocCommand[] = []
  const other: { page: string; line: string }[] = []
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    for (const m of text.matchAll(/^( *)```(sh(?: [^\n]*)?)\n([\s\S]*?)^\1```/gm)) {
      const run = !m[2]!.includes('parse-only')
      for (const raw of m[3]!.replace(/\\\n/g, ' ').split('\n')) {
        const line = raw.replace(/\s+#\s.*$/, '').trim()
        if (!line || line.startsWith('#')) continue
        for (const part of line.split(/\s*(?:&&|\|\|)\s*/)) {
          // flakewatch inside $(…) of another command, as in the retry recipes.
          for (const inner of part.matchAll(/\$\((flakewatch [^)]*)\)/g)) {
            flakewatch.push({ page, line: inner[1]!, argv: words(inner[1]!).slice(1), env: {}, run: false })
          }
          const w = words(part.replace(/\s*>\s*\S+$/, ''))
          const env: Record<string, string> = {}
          while (w[0] && /^[A-Z_]+=/.test(w[0])) {
            const [k, ...v] = w.shift()!.split('=')
            env[k!] = v.join('=')
          }
          if (w[0] === 'npx' && w[1] === 'flakewatch') w.shift()
          if (w[0] === 'flakewatch') flakewatch.push({ page, line: part, argv: w.slice(1), env, run })
          else other.push({ page, line: w.join(' ') })
        }
      }
    }
  }
  return { flakewatch, other }
}

/** The real command tree with every action replaced: parsing checks commands, options, arguments and choices. */
function parseOnly(argv: string[]): string | null {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  const io = { stdout: sink, stderr: sink, env: {} }
  const program = createProgram(io)
  const silence = (cmd: Command) => {
    cmd.exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} })
    // Every command that does something (a leaf, or one like `notify` that also has subcommands) does nothing.
    if ((cmd as unknown as { _actionHandler: unknown })._actionHandler) cmd.action(() => {})
    for (const sub of cmd.commands) silence(sub)
  }
  silence(program)
  try {
    program.parse(argv, { from: 'user' })
    return null
  } catch (e) {
    if (e instanceof CommanderError && (e.exitCode === 0 || e.code === 'commander.helpDisplayed')) return null
    return e instanceof Error ? e.message : String(e)
  }
}

const { flakewatch, other } = docCommands()

describe('commands in README.md and docs/*.md', () => {
  it('finds the commands of every page, and knows what exercises the others', () => {
    expect(flakewatch.length).toBeGreaterThan(40)
    const pages = new Set(flakewatch.map((c) => c.page))
    expect(pages).toContain('README.md')
    for (const o of other) {
      const known = Object.keys(OTHER_COMMANDS).find((k) => o.line.startsWith(k))
      expect(known, `${o.page}: "${o.line}" is not flakewatch's: list it in OTHER_COMMANDS with what tests it`).toBeDefined()
    }
  })

  it('the parse check refuses what the CLI refuses, and runs nothing', () => {
    expect(parseOnly(['analyze', '--no-such-flag'])).toMatch(/unknown option/)
    expect(parseOnly(['no-such-command'])).toMatch(/unknown command/)
    expect(parseOnly(['gate', '--format', 'yaml', 'r.xml'])).toMatch(/Allowed choices/)
    expect(parseOnly(['show'])).toMatch(/missing required argument/)
    expect(parseOnly(['notify', '--config', 'missing.json'])).toBeNull()
  })

  it.each(flakewatch.map((c) => [`${c.page}: flakewatch ${c.argv.join(' ')}`, c] as const))(
    'parses %s',
    (_, c) => {
      expect(parseOnly(c.argv)).toBeNull()
    },
  )
})

describe('running them against the example store', () => {
  let dir: string
  beforeAll(async () => {
    // A user's project as the pages assume it: a Vitest project (under test/.tmp, so `npx vitest` resolves from
    // this repository), its report in test-results/, and the config file of docs/configuration.md.
    dir = testdir(
      {
        'vitest.config.mjs': "export default { test: { include: ['*.check.mjs'] } }\n",
        'cart.check.mjs': "import { test, expect } from 'vitest'\ntest('adds an item', () => expect(1 + 1).toBe(2))\n",
        'test-results/junit.xml': CART_JUNIT,
      },
      'docs-commands-',
    )
    cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true })
    // docs/ingest.md's own examples read flakewatch's fixture reports.
    cpSync(join(ROOT, 'test/fixtures/reports'), join(dir, 'test/fixtures/reports'), { recursive: true })
    // …and the public ones, for the formats whose tools do not run here (NUnit, xUnit.net, Bazel).
    cpSync(join(ROOT, 'test/fixtures/public'), join(dir, 'test/fixtures/public'), { recursive: true })
    for (const args of [['ingest', 'examples/reports'], ['ingest', 'test-results/junit.xml', '--suite', 'unit']]) {
      const ingest = await runCli(args, { cwd: dir })
      expect(ingest.exitCode, ingest.stderr).toBe(0)
    }
    const config = /```json\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8'))![1]!
    writeFileSync(join(dir, 'flakewatch.config.json'), config)
  }, 120_000)
  afterAll(() => cleanup(dir))

  // Commands that reach another server (a team server, GitHub, GitLab) are parsed only.
  const remote = new Set(['upload', 'publish'])
  const runnable = flakewatch.filter((c) => c.run && !remote.has(c.argv[0]!) && !c.argv.includes('--help'))

  it.each(runnable.map((c) => [`${c.page}: flakewatch ${c.argv.join(' ')}`, c] as const))(
    'runs %s without a usage or input error',
    async (_, c) => {
      const env = { ...c.env, FLAKEWATCH_WRITE_TOKEN: c.env.FLAKEWATCH_WRITE_TOKEN ?? 'docs-write-token-0123456789' }
      if (c.argv[0] === 'serve') {
        // On a free port of 127.0.0.1 whatever the page says; stopped once it listens.
        const argv = c.argv.map((a, i, all) =>
          all[i - 1] === '--port' ? '0' : all[i - 1] === '--host' ? '127.0.0.1' : a,
        )
        expect(await serveUntilListening(argv, dir, env)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
        return
      }
      const res = await runCli(c.argv, { cwd: dir, env })
      expect(res.exitCode, `${c.line}\n${res.stdout}\n${res.stderr}`).not.toBe(2)
      expect(res.exitCode).toBeLessThanOrEqual(1)
    },
    60_000,
  )
})

function serveUntilListening(argv: string[], cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...argv], { cwd, env: { ...process.env, ...env } })
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const url = /^http:\/\/\S+$/m.exec(out)?.[0]
      if (url) {
        child.once('exit', () => resolve(url))
        child.kill('SIGTERM')
      }
    })
    child.on('exit', (code) => {
      if (!/^http:\/\//m.test(out)) reject(new Error(`serve exited with ${code}: ${err}`))
    })
  })
}
