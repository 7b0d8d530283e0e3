import { copyFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Command, Option } from 'commander'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processIo } from '../../src/cli/output.js'
import { createProgram } from '../../src/cli/program.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { runCliHere } from '../helpers/run-cli.js'
import { seed, tempDir } from '../server/helpers.js'
import { fuzzParams, FUZZ_TIMEOUT, ROOT } from './support.js'

/**
 * Every local command (no network, no server, no child process), run in-process against a copy of a seeded SQLite
 * store with arbitrary values for its options and arguments: each ends with exit 0, 1 (a gate or check that
 * failed) or 2 (bad input, said in one line), never with an internal error.
 */

/** Commands that only read and write the store and files they are given. */
const LOCAL = [
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

function commandsByName(): Map<string, Command> {
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

describe('CLI argument values', () => {
  const tmp = tempDir('fw-fuzz-cli-')
  const dir = tmp.dir
  const seeded = join(dir, 'seeded.db')
  beforeAll(async () => {
    const store = await openSqliteStore(seeded)
    await seed(store)
    await store.close()
  }, 120_000)
  afterAll(() => tmp.cleanup())

  const commands = commandsByName()
  const report = join(ROOT, 'test', 'fixtures', 'reports', 'junit', 'vitest-junit.xml')
  const bundle = join(ROOT, 'test', 'fixtures', 'bundle', 'valid', 'one-run-one-test.json')

  it('every local command exists, so that the list stays true', () => {
    for (const name of LOCAL) expect(commands.has(name), name).toBe(true)
  })

  it('ends with exit 0, 1 or 2, never an internal error', { timeout: FUZZ_TIMEOUT }, async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LOCAL),
        fc.array(fc.tuple(fc.nat(), value), { maxLength: 4 }),
        fc.array(value, { minLength: 2, maxLength: 2 }),
        async (name, picks, positional) => {
          const cmd = commands.get(name)!
          const db = join(dir, `run-${n++}.db`)
          copyFileSync(seeded, db)
          const valued = cmd.options.filter((o: Option) => (o.required || o.optional) && !FIXED.has(o.long!))
          const args = cmd.registeredArguments.map((a, i) => {
            if (a.name() === 'inputs' || a.name() === 'reports') return report
            if (a.name() === 'file') return bundle
            return positional[i % positional.length]!
          })
          const options = valued.length === 0 ? [] : picks.map(([k, v]) => `${valued[k % valued.length]!.long!}=${v}`)
          const argv = [...name.split(' '), ...args, '--db', db, ...options]
          const res = await runCliHere(argv, { FLAKEWATCH_ACTOR: 'fuzz' })
          rmSync(db, { force: true })
          expect([0, 1, 2], `${argv.join(' ')}\n${res.stderr}`).toContain(res.exitCode)
          expect(res.stderr, argv.join(' ')).not.toMatch(/internal error/)
        },
      ),
      fuzzParams(120),
    )
  })
})
