import { copyFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Command, Option } from 'commander'
import fc from 'fast-check'
import { expect } from 'vitest'
import { processIo } from '../../../src/cli/output.js'
import { createProgram } from '../../../src/cli/program.js'
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js'
import { runCliHere } from '../../helpers/run-cli.js'
import { seed, tempDir } from '../../server/helpers.js'
import { jsonFiles, ROOT, type Surface } from '../support.js'

/**
 * Every local command (no network, no server, no child process), run in-process against a copy of a seeded SQLite
 * store with arbitrary values for its options and arguments: each ends with exit 0, 1 (a gate or check that
 * failed) or 2 (bad input, said in one line), never with an internal error.
 */

/** Commands that only read and write the store and files they are given. */
export const LOCAL = [
  'ingest',
  'analyze',
  'show',
  'gate',
  'list',
  'tests merge',
  'tests split',
  'quarantine add',
  'quarantine remove',
  'quarantine list',
  'quarantine rule add',
  'quarantine rule remove',
  'quarantine auto',
  'import bundle',
  'prune',
  'export csv',
  'export stats',
  'notify log',
  'tickets list',
  'audit verify',
  'audit head',
  'heals',
]

/** Options whose value is a path written to or a store elsewhere: given fixed values, not fuzzed. */
const FIXED = new Set([
  '--db',
  '--config',
  '--project',
  '--output',
  '--junit-out',
  '--file',
  '--quarantine-file',
  '--dir',
])

export function commandsByName(): Map<string, Command> {
  const out = new Map<string, Command>()
  const walk = (c: Command, prefix: string) => {
    for (const sub of c.commands) {
      out.set(`${prefix}${sub.name()}`, sub)
      walk(sub, `${prefix}${sub.name()} `)
    }
  }
  walk(createProgram(processIo()), '')
  return out
}

const value = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('-1', '0', '1e308', 'NaN', '9007199254740993', '0x10', '', '%', '**', '(a|a)*$', '(?=x)'),
  fc.constantFrom(
    '2026-02-30',
    '9999-12-31',
    '0001-01-01',
    'yesterday',
    'a'.repeat(5000),
    '\u{1F600}',
    'unit::mod::flaky',
  ),
  fc.constantFrom('k=v', '=', 'k=', 'a=b,c=d', 'x:y', 'https://x.example.com/1', 'javascript:alert(1)'),
)

interface Invocation {
  command: string
  /** Options picked by index among the command's valued ones, with their values. */
  options: [number, string][]
  positional: string[]
}

let tmp: { dir: string; cleanup: () => void } | undefined
let runs = 0
const commands = commandsByName()
const REPORT = join(ROOT, 'test', 'fixtures', 'reports', 'junit', 'vitest-junit.xml')
const BUNDLE = join(ROOT, 'test', 'fixtures', 'bundle', 'valid', 'one-run-one-test.json')

export const cliSurface: Surface<Invocation> = {
  name: 'cli-args',
  runs: 1000,
  setup: async () => {
    tmp = tempDir('fw-fuzz-cli-')
    const store = await openSqliteStore(join(tmp.dir, 'seeded.db'))
    await seed(store)
    await store.close()
  },
  teardown: () => {
    tmp?.cleanup()
    return Promise.resolve()
  },
  arbitrary: () =>
    fc.record({
      command: fc.constantFrom(...LOCAL),
      options: fc.array(fc.tuple(fc.nat(), value), { maxLength: 4 }),
      positional: fc.array(value, { minLength: 2, maxLength: 2 }),
    }),
  check: async ({ command, options, positional }) => {
    const cmd = commands.get(command)!
    const db = join(tmp!.dir, `run-${runs++}.db`)
    copyFileSync(join(tmp!.dir, 'seeded.db'), db)
    const valued = cmd.options.filter((o: Option) => (o.required || o.optional) && !FIXED.has(o.long!))
    const args = cmd.registeredArguments.map((a, i) => {
      if (a.name() === 'inputs' || a.name() === 'reports') return REPORT
      if (a.name() === 'file') return BUNDLE
      return positional[i % positional.length]!
    })
    const flags = valued.length === 0 ? [] : options.map(([k, v]) => `${valued[k % valued.length]!.long!}=${v}`)
    const argv = [...command.split(' '), ...args, '--db', db, ...flags]
    try {
      const res = await runCliHere(argv, { FLAKEWATCH_ACTOR: 'fuzz' })
      expect([0, 1, 2], `${argv.join(' ')}\n${res.stderr}`).toContain(res.exitCode)
      expect(res.stderr, argv.join(' ')).not.toMatch(/internal error/)
    } finally {
      rmSync(db, { force: true })
      rmSync(`${db}-wal`, { force: true })
      rmSync(`${db}-shm`, { force: true })
    }
  },
  ...jsonFiles(),
}
