import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { ConfigError, InputError } from '../../src/errors.js'
import { importBundleBytes } from '../../src/export/import-bundle.js'
import { compileGlob, globProblem } from '../../src/glob.js'
import { formatQuarantineFile, parseQuarantineFile } from '../../src/quarantine/file.js'
import { compileRule, regexProblem, validateRuleMatch, type RuleSubject } from '../../src/quarantine/rules.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { fuzzParams, FUZZ_TIMEOUT, mutatedProperty, mutations, ROOT } from './support.js'

/**
 * The inputs that are not reports: rule patterns (globs and RE2 regexes, from the API, the CLI or the quarantine
 * file), the quarantine file, the config file and history bundles. Each is accepted or refused with the documented
 * error (InputError, ConfigError) naming where; nothing else escapes, and a refused bundle stores nothing.
 */

/** Characters that mean something in a glob or a regex, mixed with plain ones, so that patterns are mostly syntax. */
const PATTERN_CHARS = [...'()[]{}|*+?.^$\\/:-,!=<>#&~abc019 \n', 'é', '\u{1F600}', '\u0000', '(?=', '(?!', '\\1', '**']
const pattern = fc
  .array(fc.constantFrom(...PATTERN_CHARS), { maxLength: 60 })
  .map((parts) => parts.join(''))
  .chain((p) => fc.oneof(fc.constant(p), fc.string({ maxLength: 40 })))

const subject = (message: string): RuleSubject => ({
  test: { testId: 'unit::a/b.spec.ts::c', name: 'c', module: 'a/b.spec.ts', file: 'a/b.spec.ts' },
  status: 'failed',
  message,
  branch: 'main',
  env: { runner: 'arm64' },
})

const rule = (match: object) => ({
  id: 'fuzz',
  match,
  reason: 'fuzz',
  owner: null,
  issueUrl: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'fuzz',
  expiresAt: null,
})

describe('rule patterns', () => {
  it(
    'a glob is refused with its reason, or compiles to a matcher no longer than a few times the glob',
    { timeout: FUZZ_TIMEOUT },
    () => {
      fc.assert(
        fc.property(pattern, fc.string({ maxLength: 200 }), (glob, text) => {
          const problem = globProblem(glob)
          if (problem !== null) {
            expect(problem).toMatch(/^not a valid glob: /)
            return
          }
          const re = compileGlob(glob)
          // Braces become alternations, never a product of expansions: the matcher grows with the glob, not faster.
          expect(re.source.length).toBeLessThanOrEqual(16 * glob.length + 16)
          expect(typeof re.testExact(text)).toBe('boolean')
        }),
        fuzzParams(1000),
      )
    },
  )

  it(
    'a rule is refused with an InputError naming the field, or matches any message at the length cap',
    { timeout: FUZZ_TIMEOUT },
    () => {
      const long = '1'.repeat(4096)
      fc.assert(
        fc.property(pattern, pattern, fc.boolean(), (message, testId, broad) => {
          let match
          try {
            match = validateRuleMatch({ message, testId, ...(broad ? { allowBroad: true } : {}) })
          } catch (error) {
            expect(error).toBeInstanceOf(InputError)
            expect((error as Error).message).toMatch(/^rule: (match|message|test_id)/)
            return
          }
          expect(regexProblem(message)).toBeNull()
          const compiled = compileRule(rule(match))
          for (const text of [long, `${long}!`, message]) expect(typeof compiled.matches(subject(text))).toBe('boolean')
        }),
        fuzzParams(1000),
      )
    },
  )
})

describe('the quarantine file', () => {
  const valid = formatQuarantineFile({
    records: [
      {
        testId: 'unit::a::b',
        reason: 'flaky',
        owner: '@team',
        issueUrl: 'https://tracker.example.com/1',
        createdAt: '2026-01-01T00:00:00.000Z',
        createdBy: 'alice',
        expiresAt: '2099-01-01T00:00:00.000Z',
        source: 'manual',
      },
    ],
    rules: [
      {
        ...rule({ message: 'Timeout \\d+ms', env: { runner: 'arm64' } }),
        issueUrl: 'https://tracker.example.com/2',
      },
    ],
  } as never)

  it('a mutated file is read or refused with an InputError naming it', { timeout: FUZZ_TIMEOUT }, async () => {
    await fc.assert(
      fc.asyncProperty(mutations(), async (mutation) => {
        const text = mutation.apply(Buffer.from(valid)).toString('utf8')
        try {
          const set = parseQuarantineFile(text, '.flakewatch/quarantine.json')
          // What was read writes back to a file that reads the same.
          const again = parseQuarantineFile(formatQuarantineFile(set), '.flakewatch/quarantine.json')
          expect(again.records.map((r) => r.testId)).toEqual(set.records.map((r) => r.testId))
          expect(again.rules.map((r) => [r.id, r.match])).toEqual(set.rules.map((r) => [r.id, r.match]))
        } catch (error) {
          expect(error).toBeInstanceOf(InputError)
          expect((error as Error).message.startsWith('.flakewatch/quarantine.json')).toBe(true)
        }
        await Promise.resolve()
      }),
      fuzzParams(300),
    )
  })

  it('any JSON value is read or refused with an InputError', { timeout: FUZZ_TIMEOUT }, () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify({ version: 1, quarantined: [], ...(typeof value === 'object' ? value : { value }) })
        for (const t of [text, JSON.stringify(value)]) {
          try {
            parseQuarantineFile(t, 'q.json')
          } catch (error) {
            expect(error).toBeInstanceOf(InputError)
          }
        }
      }),
      fuzzParams(500),
    )
  })
})

describe('the config file', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fw-fuzz-config-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const examples = ['examples/notifications/flakewatch.config.json', 'examples/project/flakewatch.config.json'].map(
    (f) => readFileSync(join(ROOT, f)),
  )

  it(
    'a mutated config is loaded or refused with a ConfigError naming the file',
    { timeout: FUZZ_TIMEOUT },
    async () => {
      await fc.assert(
        mutatedProperty(examples, (bytes) => {
          const file = join(dir, 'flakewatch.config.json')
          writeFileSync(file, bytes)
          try {
            loadConfig({ cwd: dir, env: {} })
          } catch (error) {
            expect(error).toBeInstanceOf(ConfigError)
            expect((error as ConfigError).issues.every((x) => x.startsWith(file))).toBe(true)
          }
        }),
        fuzzParams(300),
      )
    },
  )

  it('any JSON value in a config section is loaded or refused with a ConfigError', { timeout: FUZZ_TIMEOUT }, () => {
    const sections = ['db', 'suite', 'analysis', 'successRate', 'quarantine', 'server', 'notifications', 'projects']
    fc.assert(
      fc.property(fc.constantFrom(...sections), fc.jsonValue({ maxDepth: 5 }), (section, value) => {
        const file = join(dir, 'flakewatch.config.json')
        writeFileSync(file, JSON.stringify({ [section]: value }))
        try {
          loadConfig({ cwd: dir, env: {} })
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError)
        }
      }),
      fuzzParams(500),
    )
  })
})

describe('history bundles', () => {
  let store: SqliteStore
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fw-fuzz-bundle-'))
    store = await openSqliteStore(join(dir, 'fw.db'))
  })
  afterAll(async () => {
    await store?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const validDir = join(ROOT, 'test', 'fixtures', 'bundle', 'valid')
  const bundles = [
    ...readdirSync(validDir).map((f) => readFileSync(join(validDir, f))),
    readFileSync(join(ROOT, 'examples', 'bundle', 'flake-history-bundle.json')),
  ]

  it(
    'a mutated bundle is imported whole or refused with an InputError, storing nothing',
    { timeout: FUZZ_TIMEOUT },
    async () => {
      await fc.assert(
        mutatedProperty(bundles, async (bytes) => {
          const before = await store.stats()
          try {
            const summary = await importBundleBytes(store, bytes, 'bundle.json')
            const after = await store.stats()
            // A run already stored (same run id, other bytes) takes only results it lacks: the counts say what was added.
            expect(after.results - before.results).toBe(summary.results)
            expect(after.runs - before.runs).toBeLessThanOrEqual(summary.runs)
            // Importing the same bytes again adds nothing.
            await importBundleBytes(store, bytes, 'bundle.json')
            expect((await store.stats()).results).toBe(after.results)
          } catch (error) {
            expect(error).toBeInstanceOf(InputError)
            expect((error as Error).message.startsWith('bundle.json')).toBe(true)
            expect(await store.stats()).toEqual(before)
          }
        }),
        fuzzParams(150),
      )
    },
  )
})
