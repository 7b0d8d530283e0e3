import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { InputError } from '../errors.js'
import type { Store } from './store.js'

/** Where the store lives when nothing says otherwise: a SQLite file in the working directory. */
export const DEFAULT_DB = '.flakewatch.db'

export interface OpenStoreOptions {
  /** A SQLite file path, `:memory:`, or a `postgres://` / `postgresql://` URL. Default: `FLAKEWATCH_DB` or `.flakewatch.db`. */
  db?: string
  env?: NodeJS.ProcessEnv
  /**
   * For commands that only read: a SQLite file that does not exist is an error, never created (an empty new
   * database would only hide a wrong path). Default false.
   */
  mustExist?: boolean
  /** Create the SQLite file's folder when it is missing. Default true; the CLI says false, so a typo is an error. */
  createFolder?: boolean
  /**
   * For commands that only read (analyze, show, gate, export, the server's analysis): the schema is checked with
   * plain reads, so the open never waits behind a writer; on SQLite the connection cannot write at all.
   */
  readOnly?: boolean
  /** SQLite only: the connection's page cache, in MB (default 32 for a connection that writes, 64 for a reader). */
  cacheMb?: number
}

/** Resolves the store location: the explicit option, then `FLAKEWATCH_DB`, then the default file. */
export function resolveDbLocation(opts: OpenStoreOptions = {}): string {
  const env = opts.env ?? process.env
  return opts.db ?? env.FLAKEWATCH_DB ?? DEFAULT_DB
}

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

/**
 * Opens the store a location names. Each backend's driver is imported only when chosen, so SQLite users never
 * load `pg` and vice versa.
 * @example const store = await openStore({ db: 'postgres://ci@db/flakewatch' })
 */
export async function openStore(opts: OpenStoreOptions = {}): Promise<Store> {
  const location = resolveDbLocation(opts)
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js')
    return openPostgresStore(location, { readOnly: opts.readOnly })
  }
  if (location !== ':memory:') {
    if (opts.mustExist && !existsSync(location))
      throw new InputError(
        `${location}: no flakewatch database here (store reports first with "flakewatch ingest <files>", or pass --db)`,
      )
    if (opts.createFolder === false && !existsSync(dirname(location) || '.'))
      throw new InputError(`${location}: the folder ${dirname(location)} does not exist`)
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js')
  return openSqliteStore(location, { readOnly: opts.readOnly, cacheMb: opts.cacheMb })
}
