import { isAbsolute, resolve } from 'node:path'
import { z } from 'zod'
import { isPostgresUrl, resolveDbLocation } from '../store/open.js'
import { say, type ReporterIo } from './writer.js'

/** What the Vitest and Jest reporters accept, as written in the runner's config. */
export interface ReporterOptions {
  /** A SQLite file or a `postgres://` URL. Default: `FLAKEWATCH_DB`, else `.flakewatch.db` in the working directory. */
  db?: string
  /** The suite the tests belong to (the first part of their ids). Default: `FLAKEWATCH_SUITE`, else `default`. */
  suite?: string
  /** Write a CTRF JSON file here instead of writing to the store. */
  outputFile?: string
}

/** The Playwright reporter's options: those of every reporter, plus quarantine enforcement. */
export interface QuarantineReporterOptions extends ReporterOptions {
  /** Let the run pass when every unexpected failure is quarantined. Quarantines come from the store. */
  quarantine?: boolean
  /** Read quarantines from this reviewable file instead of the store (implies `quarantine: true`). */
  quarantineFile?: string
}

/** Options normalised: paths absolute, the destination decided. */
export interface ResolvedReporterOptions {
  /** Where results go: a CTRF file, or the store. */
  target: { kind: 'ctrf'; file: string } | { kind: 'store'; db: string }
  /** The store, also read for quarantines when results go to a CTRF file. */
  db: string
  suite: string | undefined
  /** Null: quarantine is not enforced. `file` null: quarantines come from the store. */
  quarantine: { file: string | null } | null
}

const OptionsSchema = z.object({
  db: z.string().min(1).optional(),
  suite: z.string().min(1).optional(),
  outputFile: z.string().min(1).optional(),
  quarantine: z.boolean().optional(),
  quarantineFile: z.string().min(1).optional(),
})

type Env = Record<string, string | undefined>

/** A path written in a config resolves against the config's directory, as the runners do for their outputFile. */
export function resolveConfigPath(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path)
}

/**
 * Checks and normalises reporter options. Runners add keys of their own (Playwright passes `configDir`), so
 * unknown keys are ignored rather than refused.
 * @example resolveReporterOptions({ outputFile: 'ctrf.json' }, '/repo', process.env).options?.target
 */
export function resolveReporterOptions(
  input: unknown,
  baseDir: string,
  env: Env,
): { options: ResolvedReporterOptions | null; errors: string[] } {
  const parsed = OptionsSchema.safeParse(input ?? {})
  if (!parsed.success) {
    return { options: null, errors: parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`) }
  }
  const o = parsed.data
  // A db named in the config follows the config, like its other paths; the default stays where the CLI looks.
  const db =
    o.db && o.db !== ':memory:' && !isPostgresUrl(o.db)
      ? resolveConfigPath(o.db, baseDir)
      : resolveDbLocation({ db: o.db, env })
  const enforce = o.quarantine ?? o.quarantineFile !== undefined
  return {
    options: {
      target: o.outputFile ? { kind: 'ctrf', file: resolveConfigPath(o.outputFile, baseDir) } : { kind: 'store', db },
      db,
      suite: o.suite,
      quarantine: enforce ? { file: o.quarantineFile ? resolveConfigPath(o.quarantineFile, baseDir) : null } : null,
    },
    errors: [],
  }
}

/**
 * {@link resolveReporterOptions} for a reporter's constructor: bad options are said once on stderr and turn the
 * reporter off, since a reporter must not fail the run over its own configuration.
 * @example this.options = reporterOptions(options, config.rootDir, this.io)
 */
export function reporterOptions(input: unknown, baseDir: string, io: ReporterIo): ResolvedReporterOptions | null {
  const { options, errors } = resolveReporterOptions(input, baseDir, io.env)
  if (errors.length > 0) say(io, `reporter options ignored, nothing will be recorded: ${errors.join('; ')}`)
  return options
}
