import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { ConfigError } from '../errors.js'
import { ConfigSchema, REMOVED_CONFIG_KEYS, type FlakewatchConfigInput } from './schema.js'
import { DEFAULTS } from './defaults.js'

/** Config file names looked for in the working directory, in order. */
export const CONFIG_FILES = ['flakewatch.config.json', '.flakewatch.json']

export interface ResolvedConfig {
  db: string
  suite: string
  defaultBranch: string
  /** `root` as written (see `resolveRepoRoot`); null when unset. */
  root: string | null
  /** Analysis overrides, passed to the analysis engine's own resolver. */
  analysis: NonNullable<FlakewatchConfigInput['analysis']>
  successRate: typeof DEFAULTS.successRate
  quarantine: typeof DEFAULTS.quarantine
  server: typeof DEFAULTS.server
  codeowners: typeof DEFAULTS.codeowners
  notifications: typeof DEFAULTS.notifications
  tickets: typeof DEFAULTS.tickets
  projects: typeof DEFAULTS.projects
  /** The file the config came from, if any. */
  file: string | null
  /** What the user should change, without failing: each removed key the config still sets (see `REMOVED_CONFIG_KEYS`). */
  warnings: string[]
}

export interface LoadConfigOptions {
  cwd?: string
  /** An explicit --config path; it must exist. */
  file?: string
  env?: NodeJS.ProcessEnv
}

/**
 * Turns raw JSON into a resolved config: validate with zod, then fill defaults. Errors name the key
 * (`quarantine.expiryDays: must be > 0`).
 */
export function resolveConfig(raw: unknown, source = 'config'): Omit<ResolvedConfig, 'file'> {
  const parsed = ConfigSchema.safeParse(raw)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${source}: ${i.path.join('.') || '(root)'}: ${i.message}`))
  }
  const c = parsed.data
  const warnings = dropRemovedKeys(c, source)
  return {
    warnings,
    db: c.db ?? DEFAULTS.db,
    suite: c.suite ?? DEFAULTS.suite,
    defaultBranch: c.defaultBranch ?? DEFAULTS.defaultBranch,
    root: c.root ?? null,
    analysis: c.analysis ?? {},
    successRate: { ...DEFAULTS.successRate, ...c.successRate },
    quarantine: { ...DEFAULTS.quarantine, ...c.quarantine },
    server: { ...DEFAULTS.server, ...c.server },
    codeowners: { ...DEFAULTS.codeowners, ...c.codeowners },
    notifications: { ...DEFAULTS.notifications, ...c.notifications },
    tickets: c.tickets ?? DEFAULTS.tickets,
    projects: c.projects ?? {},
  }
}

/**
 * Deletes each removed key (see `REMOVED_CONFIG_KEYS`) from the parsed config, so nothing downstream sees it, and
 * returns one warning per key it found, naming the key and what replaced it.
 */
function dropRemovedKeys(config: object, source: string): string[] {
  const warnings: string[] = []
  for (const { path, replacedBy } of REMOVED_CONFIG_KEYS) {
    let parent: unknown = config
    for (const step of path.slice(0, -1)) {
      parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[step] : undefined
    }
    const key = path[path.length - 1]!
    if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key)) continue
    delete (parent as Record<string, unknown>)[key]
    warnings.push(`${source}: ${path.join('.')} is no longer used and is ignored: ${replacedBy}; remove it`)
  }
  return warnings
}

/**
 * `FLAKEWATCH_WRITE_TOKENS=ci:tok1,alice:tok2`: named write tokens. The name is everything before the first colon.
 * @example parseNamedTokens('ci:s3cret-ci-token,alice:s3cret-alice') // { ci: 's3cret-ci-token', alice: 's3cret-alice' }
 */
export function parseNamedTokens(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = item.indexOf(':')
    const name = colon > 0 ? item.slice(0, colon) : ''
    const token = item.slice(colon + 1)
    if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(name) || token.length < 8) {
      throw new ConfigError([
        `FLAKEWATCH_WRITE_TOKENS: expected name:token pairs separated by commas (names of letters, digits, _ . @ -; ` +
          `tokens of at least 8 characters), got an entry named "${name.slice(0, 64)}"`,
      ])
    }
    if (name in out) throw new ConfigError([`FLAKEWATCH_WRITE_TOKENS: the name "${name}" is given twice`])
    out[name] = token
  }
  return out
}

/**
 * Loads the config. Precedence: CLI flags (applied by the caller) > `FLAKEWATCH_*` environment > file > defaults.
 * A relative `db` path in a file resolves against the file's folder.
 */
export function loadConfig(opts: LoadConfigOptions = {}): ResolvedConfig {
  const cwd = opts.cwd ?? process.cwd()
  const env = opts.env ?? process.env
  const explicit = opts.file ?? env.FLAKEWATCH_CONFIG
  let file: string | null = null
  let raw: unknown = {}
  if (explicit) {
    file = resolve(cwd, explicit)
    if (!existsSync(file)) throw new ConfigError([`${file}: config file not found`])
  } else {
    file = CONFIG_FILES.map((f) => resolve(cwd, f)).find((f) => existsSync(f)) ?? null
  }
  if (file) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'))
    } catch (error) {
      throw new ConfigError([`${file}: invalid JSON: ${(error as Error).message}`])
    }
  }
  const config = resolveConfig(raw, file ?? 'config')
  if (file && config.db !== DEFAULTS.db && !/^postgres(ql)?:/.test(config.db) && !isAbsolute(config.db)) {
    config.db = resolve(dirname(file), config.db)
  }
  if (file && config.codeowners.file) config.codeowners.file = resolve(dirname(file), config.codeowners.file)
  if (env.FLAKEWATCH_DB) config.db = env.FLAKEWATCH_DB
  if (env.FLAKEWATCH_SUITE) config.suite = env.FLAKEWATCH_SUITE
  if (env.FLAKEWATCH_DEFAULT_BRANCH) config.defaultBranch = env.FLAKEWATCH_DEFAULT_BRANCH
  if (env.FLAKEWATCH_WRITE_TOKEN) config.server.writeToken = env.FLAKEWATCH_WRITE_TOKEN
  if (env.FLAKEWATCH_READ_TOKEN) config.server.readToken = env.FLAKEWATCH_READ_TOKEN
  if (env.FLAKEWATCH_ORG_TOKEN) config.server.orgToken = env.FLAKEWATCH_ORG_TOKEN
  // A project's SQLite file is relative to the config file, as `db` is.
  if (file) {
    for (const p of Object.values(config.projects)) {
      if (!/^postgres(ql)?:/.test(p.db) && p.db !== ':memory:' && !isAbsolute(p.db)) p.db = resolve(dirname(file), p.db)
    }
  }
  if (env.FLAKEWATCH_WRITE_TOKENS) {
    config.server.writeTokens = { ...config.server.writeTokens, ...parseNamedTokens(env.FLAKEWATCH_WRITE_TOKENS) }
  }
  if (env.FLAKEWATCH_QUARANTINE_FILE) config.quarantine.file = env.FLAKEWATCH_QUARANTINE_FILE
  return { ...config, file }
}

type QuarantineCriteriaKey =
  'classes' | 'minScore' | 'minConfidence' | 'onProvenEvidence' | 'onFlakyVerdict' | 'releaseAfterPasses'

/**
 * The analysis engine's options from the config: the `analysis` section, with the success-rate window and
 * default branch that live at the top level because people look for them there.
 */
export function analysisOptions(
  config: Pick<ResolvedConfig, 'analysis' | 'successRate' | 'defaultBranch'> & {
    quarantine?: Pick<ResolvedConfig['quarantine'], QuarantineCriteriaKey>
  },
) {
  const q = config.quarantine
  return {
    ...config.analysis,
    successRate: { ...config.successRate, defaultBranch: config.defaultBranch },
    // The quarantine policy's entry criteria, so that recommendations and `quarantine auto` agree.
    ...(q && {
      quarantine: {
        classes: q.classes,
        minScore: q.minScore,
        minConfidence: q.minConfidence,
        onProvenEvidence: q.onProvenEvidence,
        onFlakyVerdict: q.onFlakyVerdict,
        releaseAfterPasses: q.releaseAfterPasses,
      },
    }),
  }
}
