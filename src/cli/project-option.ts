import { loadConfig, type ResolvedConfig } from '../config/load.js'
import { projectConfig } from '../config/project-config.js'
import { InputError } from '../errors.js'
import type { Io } from './output.js'

/** The flags that say which store a command works on. */
export interface StoreFlags {
  db?: string
  config?: string
  /** A project of the config's `projects` (docs/projects.md): its store and webhooks. */
  project?: string
}

export interface SelectedConfig {
  config: ResolvedConfig
  /** The project's key, carried by every webhook payload as `serve` sends it; null without `--project`. */
  project: string | null
}

/**
 * The config a command works with: the loaded one, or with `--project <key>` the config as that project sees it
 * (its store and webhooks), exactly as `serve` gives the project's app. Exit 2 for an unknown key, and for `--db`
 * with `--project`: they would name two stores.
 */
export function selectConfig(opts: StoreFlags, env: NodeJS.ProcessEnv): SelectedConfig {
  const config = loadConfig({ file: opts.config, env })
  if (opts.project === undefined) return { config, project: null }
  if (opts.db !== undefined) throw new InputError('--db and --project both name a store: give one of them')
  return { config: projectConfig(config, opts.project), project: opts.project }
}

/**
 * For commands that read no config unless asked (`ingest`, `gate`, `run`): the flags with `--project` turned into
 * the project's store as `--db`, so that what they call (ingest, the gate's quarantines, the pull-request comment,
 * whose own `--project` is a GitLab project) sees one store. Without `--project`, the flags as given.
 */
export function projectStoreFlags<T extends StoreFlags>(opts: T, env: NodeJS.ProcessEnv): T {
  if (opts.project === undefined) return opts
  return { ...opts, db: selectConfig(opts, env).config.db, project: undefined }
}

/** Warnings already printed on a stream: a command that loads its config twice says each one once. */
const printed = new WeakMap<Io['stderr'], Set<string>>()

/** Prints the config's warnings (removed keys it still sets) on stderr, each once per process and stream. */
export function printConfigWarnings(config: Pick<ResolvedConfig, 'warnings'>, io: Pick<Io, 'stderr'>): void {
  let seen = printed.get(io.stderr)
  if (!seen) printed.set(io.stderr, (seen = new Set()))
  for (const w of config.warnings) {
    if (seen.has(w)) continue
    seen.add(w)
    io.stderr.write(`warning: ${w}\n`)
  }
}
