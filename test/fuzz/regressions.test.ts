import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { InputError } from '../../src/errors.js'
import { parseReport } from '../../src/ingest/index.js'
import { parseEnvPairs } from '../../src/pipeline/run-context.js'
import { parseExpiry } from '../../src/cli/commands/quarantine.js'
import { runCliHere } from '../helpers/run-cli.js'
import { closeShared, SURFACES } from './surfaces/index.js'
import { countingSource, expectBoundedWork, expectWithinLimits, outcome, ROOT } from './support.js'

/**
 * Every input a fuzzer once failed on (test/fixtures/fuzz/regressions, described in its README): read through the
 * same checks as the fuzzers, and, where the fix chose an outcome, that outcome.
 */

const DIR = join(ROOT, 'test', 'fixtures', 'fuzz', 'regressions')
const entries = readdirSync(DIR).filter((f) => f !== 'README.md')
const files = entries.filter((f) => statSync(join(DIR, f)).isFile())
/** Inputs a surface's fuzzer once failed on, kept by bench/fuzz.mjs in a folder named after the surface. */
const kept = entries
  .filter((f) => statSync(join(DIR, f)).isDirectory())
  .flatMap((dir) => readdirSync(join(DIR, dir)).map((f) => [dir, f] as const))

/** What each fix decided, beyond "no undocumented error". */
const EXPECTED: Record<string, 'read' | 'refused'> = {
  'pytest-created-past-date-range.json': 'read',
}

describe('fuzz regressions', () => {
  it('every kept input is described in the README', () => {
    const readme = readFileSync(join(DIR, 'README.md'), 'utf8')
    for (const f of files) expect(readme).toContain(`\`${f}\``)
    for (const [dir, f] of kept) expect(readme).toContain(`\`${dir}/${f}\``)
  })

  it.each(files)('%s: read within the limits or refused with the file named', async (file) => {
    const bytes = readFileSync(join(DIR, file))
    const source = countingSource(file, bytes)
    const result = await outcome(file, () => parseReport(source))
    const report = 'report' in result ? result.report : undefined
    expectBoundedWork(source, bytes.length, report)
    if (report) expectWithinLimits(report)
    if (EXPECTED[file]) expect(report ? 'read' : 'refused').toBe(EXPECTED[file])
  })
})

describe('kept inputs, by surface', () => {
  afterAll(() => closeShared())

  it('every folder names a surface', () => {
    const names = new Set(SURFACES.map((s) => s.name))
    for (const [dir] of kept) expect(names.has(dir), dir).toBe(true)
  })

  it.skipIf(kept.length === 0).each(kept.map(([dir, f]) => [`${dir}/${f}`, dir, f] as const))(
    "%s: passes its surface's checks",
    async (_, dir, file) => {
      const surface = SURFACES.find((s) => s.name === dir)!
      await surface.setup?.()
      try {
        await surface.check(surface.load(readFileSync(join(DIR, dir, file)), file))
      } finally {
        await surface.teardown?.()
      }
    },
  )
})

describe('fuzz regressions beyond reports', () => {
  it('an --env value without a key is a usage error (exit 2), not an internal error', async () => {
    // Found by test/fuzz/cli-args.test.ts: `gate <report> --env=https://x.example.com/1`.
    for (const pair of ['https://x.example.com/1', '=v', ' =v', '']) {
      expect(() => parseEnvPairs([pair])).toThrow(InputError)
    }
    expect(parseEnvPairs(['k=a=b', ' os = linux '])).toEqual({ k: 'a=b', os: 'linux' })
    const report = join(ROOT, 'test', 'fixtures', 'reports', 'junit', 'vitest-junit.xml')
    const res = await runCliHere(['gate', report, '--db', ':memory:', '--env=https://x.example.com/1'])
    expect(res.exitCode).toBe(2)
    expect(res.stderr).toMatch(/--env expects key=value, got "https:\/\/x\.example\.com\/1"/)
    expect(res.stderr).not.toMatch(/internal error/)
  })

  it('a --expires day count beyond any date is a usage error, not an internal error', async () => {
    // Found by test/fuzz/cli-args.test.ts: `quarantine add <id> --reason=k= --expires=9007199254740993`.
    expect(() => parseExpiry('9007199254740993')).toThrow(InputError)
    expect(() => parseExpiry('99999999999d')).toThrow(/--expires: 99999999999d days is beyond any date/)
    expect(parseExpiry('14d', Date.UTC(2026, 0, 1))).toBe('2026-01-15T00:00:00.000Z')
    const res = await runCliHere([
      'quarantine',
      'add',
      'a',
      '--db',
      ':memory:',
      '--reason=x',
      '--expires=9007199254740993',
    ])
    expect(res.exitCode).toBe(2)
    expect(res.stderr).not.toMatch(/internal error/)
  })
})
