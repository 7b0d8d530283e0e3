import { spawn } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CommanderError, type Command } from 'commander'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/program.js'
import { CLI, ROOT, runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

/**
 * Every `flakewatch` command in a ```sh block of README.md and docs/*.md: parsed by the real CLI (an unknown
 * command or option, a missing argument or an invalid choice fails), then run as a reader would, in the order of
 * docs/README.md, starting in an empty folder: the README's `flakewatch demo --dir shop` and `cd shop` make the
 * example project the rest runs in, and nothing else is put there. See docs/development.md.
 */

interface DocCommand {
  page: string
  line: string
  /** The flakewatch words, without `npx` and leading variable assignments. */
  argv: string[]
  env: Record<string, string>
  run: boolean
  /** `clone`: a block of a page that runs in a clone of flakewatch (```sh clone). */
  where: 'project' | 'clone'
}

/** A `cd <dir>` of the docs: the commands after it run there. */
interface DocCd {
  page: string
  cd: string
}

/** An `export NAME=value` of the docs: the commands after it on the same page run with it, as in a reader's shell. */
interface DocExport {
  page: string
  export: Record<string, string>
}

type DocStep = DocCommand | DocCd | DocExport

/** Commands of the docs that are not flakewatch's, and what exercises them. */
const OTHER_COMMANDS: Record<string, string> = {
  'npm i -D flakewatch':
    'test/install/pack.test.ts installs the packed tarball; here flakewatch and vitest resolve from this repository',
  'npm ci': '.ci/run',
  'npm run demo': 'the build, then flakewatch demo: test/cli/demo.test.ts',
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
  'cd ': 'followed here: the commands after it run in that folder',
  pg_basebackup: ".ci/pg-replica makes the tests' replica on 5433 the same way",
  pg_createcluster: 'docs/development.md: the scale cluster for bench/pg-scale.mjs, made by hand',
  pg_ctlcluster: '.ci/run and .ci/pg-replica',
  pg_dropcluster: 'docs/development.md: the scale cluster, removed by hand',
  printf: 'the shell',
  'psql ': '.ci/run',
  'node bench/': 'bench/run.mjs, run by hand; test/bench/pg-scale.test.ts runs pg-scale.mjs small',
  'claude mcp add':
    'test/mcp/stdio.test.ts starts `flakewatch mcp` as the client does; test/mcp/http.test.ts talks to /mcp',
}

/** The README, then the pages in the order docs/README.md gives them, then any page it does not link. */
const PAGES = (() => {
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8')
  const linked = [...index.matchAll(/\]\(([a-z0-9-]+\.md)\)/g)].map((m) => m[1]!)
  const all = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))
  const ordered = [...new Set([...linked.filter((f) => all.includes(f)), ...all.sort()])]
  return ['README.md', ...ordered.map((f) => `docs/${f}`)]
})()

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
function docCommands(): {
  flakewatch: DocCommand[]
  steps: DocStep[]
  other: { page: string; line: string }[]
} {
  const flakewatch: DocCommand[] = []
  const steps: DocStep[] = []
  const other: { page: string; line: string }[] = []
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    for (const m of text.matchAll(/^( *)```(sh(?: [^\n]*)?)\n([\s\S]*?)^\1```/gm)) {
      const run = !m[2]!.includes('parse-only')
      const where = m[2]!.includes('clone') ? 'clone' : 'project'
      for (const raw of m[3]!.replace(/\\\n/g, ' ').split('\n')) {
        const line = raw.replace(/\s+#\s.*$/, '').trim()
        if (!line || line.startsWith('#')) continue
        for (const part of line.split(/\s*(?:&&|\|\|)\s*/)) {
          // flakewatch inside $(…) of another command, as in the retry recipes.
          for (const inner of part.matchAll(/\$\((flakewatch [^)]*)\)/g)) {
            flakewatch.push({ page, line: inner[1]!, argv: words(inner[1]!).slice(1), env: {}, run: false, where })
          }
          // A redirect and a trailing `&` (a background job) are the shell's, not the command's.
          const w = words(part.replace(/\s*>\s*\S+$/, '').replace(/\s+&$/, ''))
          const env: Record<string, string> = {}
          while (w[0] && /^[A-Z_]+=/.test(w[0])) {
            const [k, ...v] = w.shift()!.split('=')
            env[k!] = v.join('=')
          }
          if (w[0] === 'npx' && w[1] === 'flakewatch') w.shift()
          if (w[0] === 'flakewatch') {
            const c: DocCommand = { page, line: part, argv: w.slice(1), env, run, where }
            flakewatch.push(c)
            steps.push(c)
          } else {
            if (w[0] === 'cd' && run) steps.push({ page, cd: w[1]! })
            if (w[0] === 'export' && run) {
              const assigned = w.slice(1).map((a) => a.split('='))
              steps.push({ page, export: Object.fromEntries(assigned.map(([k, ...v]) => [k!, v.join('=')])) })
            }
            other.push({ page, line: w.join(' ') })
          }
        }
      }
    }
  }
  return { flakewatch, steps, other }
}

/** Words a shell command of the docs starts with (after an optional `$ ` prompt). */
const COMMAND_START = /^\s*(\$ )?(npx|npm|flakewatch|curl|psql|pg_\w+|node|export|cd|git|docker)\s/

/**
 * Code blocks that hold shell commands but are not ```sh: a ```bash or ```console block, or a ```text (or bare)
 * block with a command line in it, would be neither run nor parsed. Each is named with its page and line.
 */
function unmarkedShellBlocks(): string[] {
  const out: string[] = []
  for (const page of PAGES) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n')
    let open: { fence: string; info: string; line: number } | null = null
    let body: string[] = []
    lines.forEach((line, i) => {
      const fence = /^( *)(```+)\s*([^`]*)$/.exec(line)
      if (!open) {
        if (fence) {
          open = { fence: fence[1]! + fence[2]!, info: fence[3]!.trim(), line: i + 1 }
          body = []
        }
        return
      }
      if (fence && line.trimEnd() === open.fence) {
        const lang = open.info.split(/\s+/)[0] ?? ''
        const where = `${page}:${open.line} (\`\`\`${open.info})`
        if (/^(bash|shell|console|zsh|shell-session|terminal)$/.test(lang)) out.push(where)
        else if ((lang === '' || lang === 'text') && body.some((b) => COMMAND_START.test(b))) out.push(where)
        open = null
        return
      }
      body.push(line)
    })
  }
  return out
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

const { flakewatch, steps, other } = docCommands()

describe('commands in README.md and docs/*.md', () => {
  it('finds the commands of every page, and knows what exercises the others', () => {
    expect(flakewatch.length).toBeGreaterThan(40)
    const pages = new Set(flakewatch.map((c) => c.page))
    expect(pages).toContain('README.md')
    for (const o of other) {
      const known = Object.keys(OTHER_COMMANDS).find((k) => o.line.startsWith(k))
      expect(
        known,
        `${o.page}: "${o.line}" is not flakewatch's: list it in OTHER_COMMANDS with what tests it`,
      ).toBeDefined()
    }
  })

  it('every block of shell commands is a ```sh block: run, or marked parse-only as a fragment', () => {
    expect(unmarkedShellBlocks()).toEqual([])
  })

  it('the parse check refuses what the CLI refuses, and runs nothing', () => {
    expect(parseOnly(['analyze', '--no-such-flag'])).toMatch(/unknown option/)
    expect(parseOnly(['no-such-command'])).toMatch(/unknown command/)
    expect(parseOnly(['gate', '--format', 'yaml', 'r.xml'])).toMatch(/Allowed choices/)
    expect(parseOnly(['show'])).toMatch(/missing required argument/)
    expect(parseOnly(['notify', '--config', 'missing.json'])).toBeNull()
  })

  it.each(flakewatch.map((c) => [`${c.page}: flakewatch ${c.argv.join(' ')}`, c] as const))('parses %s', (_, c) => {
    expect(parseOnly(c.argv)).toBeNull()
  })
})

describe('running them as written, in the example project', () => {
  let base: string
  let clone: string
  let scratch: string
  /** Where the next command runs: the empty folder, then wherever the docs `cd` to. */
  let cwd: string
  /** What the page being run has exported so far. */
  let exported: { page: string; env: Record<string, string> } = { page: '', env: {} }
  beforeAll(() => {
    // An empty folder under test/.tmp, so that `npx vitest` and `flakewatch/vitest` resolve from this
    // repository, as they would in a project with `npm i -D flakewatch vitest`.
    base = testdir({}, 'docs-commands-')
    cwd = base
    // Where `flakewatch demo` without --dir makes its folder (os.tmpdir()): under test/.tmp too.
    scratch = testdir({}, 'docs-tmp-')
    // docs/ingest.md's ```sh clone blocks run in a clone of flakewatch: what they read of it is test/fixtures.
    clone = testdir({}, 'docs-clone-')
    cpSync(join(ROOT, 'test/fixtures/reports'), join(clone, 'test/fixtures/reports'), { recursive: true })
    cpSync(join(ROOT, 'test/fixtures/public'), join(clone, 'test/fixtures/public'), { recursive: true })
  })
  afterAll(() => {
    cleanup(base)
    cleanup(scratch)
    cleanup(clone)
  })

  it('starts from the README: the demo, then the example project', () => {
    const readme = steps.filter((s) => s.page === 'README.md')
    expect(readme.slice(0, 3).map(title)).toEqual([
      'README.md: flakewatch demo',
      'README.md: flakewatch demo --dir shop --no-serve',
      'README.md: cd shop',
    ])
  })

  it("the example project's config is docs/configuration.md's example", () => {
    const config = /```json\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8'))![1]!
    expect(readFileSync(join(ROOT, 'examples/project/flakewatch.config.json'), 'utf8')).toBe(config)
  })

  // Commands that reach another server (a team server, GitHub, GitLab) are parsed only.
  const remote = new Set(['upload', 'publish'])
  const runnable = steps.filter(
    (s) => 'cd' in s || 'export' in s || (s.run && !remote.has(s.argv[0]!) && !s.argv.includes('--help')),
  )
  const title = (s: DocStep) =>
    `${s.page}: ${
      'cd' in s
        ? `cd ${s.cd}`
        : 'export' in s
          ? `export ${Object.keys(s.export).join(' ')}`
          : `flakewatch ${s.argv.join(' ')}`
    }`

  it.each(runnable.map((s) => [title(s), s] as const))(
    'runs %s without a usage or input error',
    async (_, s) => {
      if (exported.page !== s.page) exported = { page: s.page, env: {} }
      if ('cd' in s) {
        cwd = join(cwd, s.cd)
        expect(existsSync(cwd), `${s.cd} does not exist in ${cwd}`).toBe(true)
        return
      }
      if ('export' in s) {
        Object.assign(exported.env, s.export)
        return
      }
      const dir = s.where === 'clone' ? clone : cwd
      const env = {
        ...exported.env,
        ...s.env,
        TMPDIR: scratch,
        FLAKEWATCH_WRITE_TOKEN: s.env.FLAKEWATCH_WRITE_TOKEN ?? 'docs-write-token-0123456789',
      }
      const serves = s.argv[0] === 'serve' || (s.argv[0] === 'demo' && !s.argv.includes('--no-serve'))
      if (serves) {
        // On a free port of 127.0.0.1 whatever the page says; stopped once it listens.
        const argv = s.argv.map((a, i, all) =>
          all[i - 1] === '--port' ? '0' : all[i - 1] === '--host' ? '127.0.0.1' : a,
        )
        if (!argv.includes('--port')) argv.push('--port', '0')
        expect(await serveUntilListening(argv, dir, env)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
        return
      }
      const res = await runCli(s.argv, { cwd: dir, env })
      expect(res.exitCode, `${s.line}\n${res.stdout}\n${res.stderr}`).not.toBe(2)
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
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
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
