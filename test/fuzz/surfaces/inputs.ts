import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { expect } from 'vitest'
import { loadConfig } from '../../../src/config/load.js'
import { ConfigError, InputError } from '../../../src/errors.js'
import { importBundleBytes } from '../../../src/export/import-bundle.js'
import { compileGlob, globProblem } from '../../../src/glob.js'
import { formatQuarantineFile, parseQuarantineFile } from '../../../src/quarantine/file.js'
import { compileRule, regexProblem, validateRuleMatch, type RuleSubject } from '../../../src/quarantine/rules.js'
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/sqlite-store.js'
import { jsonFiles, mutations, ROOT, type Surface } from '../support.js'

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

/** Mutated bytes of one of a few valid files, kept as the file they are. */
interface FileInput {
  label: string
  bytes: Buffer
}

function mutatedFile(originals: readonly Buffer[]): fc.Arbitrary<FileInput> {
  return fc
    .tuple(fc.nat({ max: originals.length - 1 }), mutations())
    .map(([i, m]) => ({ label: m.label, bytes: m.apply(originals[i]!) }))
}

const fileInputs = (ext: string): Pick<Surface<FileInput>, 'save' | 'load'> => ({
  save: (input) => ({ ext, bytes: input.bytes }),
  load: (bytes) => ({ label: 'kept', bytes }),
})

/** A glob is refused with its reason, or compiles to a matcher no longer than a few times the glob. */
export const globSurface: Surface<{ glob: string; text: string }> = {
  name: 'rule-glob',
  runs: 1000,
  arbitrary: () => fc.record({ glob: pattern, text: fc.string({ maxLength: 200 }) }),
  check: ({ glob, text }) => {
    const problem = globProblem(glob)
    if (problem !== null) {
      expect(problem).toMatch(/^not a valid glob: /)
      return
    }
    const re = compileGlob(glob)
    // Braces become alternations, never a product of expansions: the matcher grows with the glob, not faster.
    expect(re.source.length).toBeLessThanOrEqual(16 * glob.length + 16)
    expect(typeof re.testExact(text)).toBe('boolean')
  },
  ...jsonFiles(),
}

const LONG = '1'.repeat(4096)

/** A rule is refused with an InputError naming the field, or matches any message at the length cap. */
export const ruleSurface: Surface<{ message: string; testId: string; broad: boolean }> = {
  name: 'rule-match',
  runs: 1000,
  arbitrary: () => fc.record({ message: pattern, testId: pattern, broad: fc.boolean() }),
  check: ({ message, testId, broad }) => {
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
    for (const text of [LONG, `${LONG}!`, message]) expect(typeof compiled.matches(subject(text))).toBe('boolean')
  },
  ...jsonFiles(),
}

const QUARANTINE = Buffer.from(
  formatQuarantineFile({
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
  } as never),
)

const QFILE = '.flakewatch/quarantine.json'

/** Read or refused with an InputError naming the file; what was read writes back to a file that reads the same. */
function checkQuarantine(text: string): void {
  try {
    const set = parseQuarantineFile(text, QFILE)
    const again = parseQuarantineFile(formatQuarantineFile(set), QFILE)
    expect(again.records.map((r) => r.testId)).toEqual(set.records.map((r) => r.testId))
    expect(again.rules.map((r) => [r.id, r.match])).toEqual(set.rules.map((r) => [r.id, r.match]))
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message.startsWith(QFILE)).toBe(true)
  }
}

export const quarantineFileSurface: Surface<FileInput> = {
  name: 'quarantine-file',
  runs: 1000,
  arbitrary: () => mutatedFile([QUARANTINE]),
  check: (input) => checkQuarantine(input.bytes.toString('utf8')),
  ...fileInputs('json'),
}

/** Any JSON value, alone or spread into a valid file's top level. */
export const quarantineJsonSurface: Surface<{ value: unknown }> = {
  name: 'quarantine-file-json',
  runs: 1000,
  arbitrary: () => fc.record({ value: fc.jsonValue({ maxDepth: 6 }) }),
  check: ({ value }) => {
    const spread = typeof value === 'object' && value !== null ? value : { value }
    for (const t of [JSON.stringify({ version: 1, quarantined: [], ...spread }), JSON.stringify(value)]) {
      checkQuarantine(t)
    }
  },
  ...jsonFiles(),
}

let configDir: string | undefined
const configFile = () => join(configDir!, 'flakewatch.config.json')
const openConfigDir = () => {
  configDir = mkdtempSync(join(tmpdir(), 'fw-fuzz-config-'))
  return Promise.resolve()
}
const closeConfigDir = () => {
  if (configDir) rmSync(configDir, { recursive: true, force: true })
  return Promise.resolve()
}

/** Loaded, or refused with a ConfigError whose every issue names the file. */
function checkConfig(bytes: Buffer | string, strict: boolean): void {
  writeFileSync(configFile(), bytes)
  try {
    loadConfig({ cwd: configDir!, env: {} })
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    if (strict) expect((error as ConfigError).issues.every((x) => x.startsWith(configFile()))).toBe(true)
  }
}

const CONFIGS = ['examples/notifications/flakewatch.config.json', 'examples/project/flakewatch.config.json'].map((f) =>
  readFileSync(join(ROOT, f)),
)

export const configFileSurface: Surface<FileInput> = {
  name: 'config-file',
  runs: 1000,
  setup: openConfigDir,
  teardown: closeConfigDir,
  arbitrary: () => mutatedFile(CONFIGS),
  check: (input) => checkConfig(input.bytes, true),
  ...fileInputs('json'),
}

const SECTIONS = ['db', 'suite', 'analysis', 'successRate', 'quarantine', 'server', 'notifications', 'projects']

export const configSectionSurface: Surface<{ section: string; value: unknown }> = {
  name: 'config-section',
  runs: 1000,
  setup: openConfigDir,
  teardown: closeConfigDir,
  arbitrary: () => fc.record({ section: fc.constantFrom(...SECTIONS), value: fc.jsonValue({ maxDepth: 5 }) }),
  check: ({ section, value }) => checkConfig(JSON.stringify({ [section]: value }), false),
  ...jsonFiles(),
}

let bundleStore: SqliteStore | undefined
let bundleDir: string | undefined
const BUNDLE_DIR = join(ROOT, 'test', 'fixtures', 'bundle', 'valid')
const BUNDLES = [
  ...readdirSync(BUNDLE_DIR).map((f) => readFileSync(join(BUNDLE_DIR, f))),
  readFileSync(join(ROOT, 'examples', 'bundle', 'flake-history-bundle.json')),
]

/** A mutated history bundle is imported whole or refused with an InputError, storing nothing. */
export const bundleSurface: Surface<FileInput> = {
  name: 'history-bundle',
  runs: 1000,
  setup: async () => {
    bundleDir = mkdtempSync(join(tmpdir(), 'fw-fuzz-bundle-'))
    bundleStore = await openSqliteStore(join(bundleDir, 'fw.db'))
  },
  teardown: async () => {
    await bundleStore?.close()
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true })
  },
  arbitrary: () => mutatedFile(BUNDLES),
  check: async ({ bytes }) => {
    const store = bundleStore!
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
  },
  ...fileInputs('json'),
}

export const inputSurfaces = [
  globSurface,
  ruleSurface,
  quarantineFileSurface,
  quarantineJsonSurface,
  configFileSurface,
  configSectionSurface,
  bundleSurface,
] as Surface<unknown>[]
