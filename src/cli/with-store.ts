import type { ResolvedConfig } from '../config/load.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'
import type { Io } from './output.js'
import { printConfigWarnings, selectConfig, type StoreFlags } from './project-option.js'

/**
 * Opens the configured store for one command. A command that only reads (`access: 'read'`, opened read-only) or
 * works on an existing history (`'existing'`) never creates a
 * database: a missing file is an error. No command creates a missing folder.
 */
export async function withStore<T>(
  opts: StoreFlags,
  io: Io,
  fn: (store: Store, config: ResolvedConfig, project: string | null) => Promise<T>,
  access: 'read' | 'existing' | 'write' = 'write',
): Promise<T> {
  const { config, project } = selectConfig(opts, io.env)
  printConfigWarnings(config, io)
  const store = await openStore({
    db: opts.db ?? config.db,
    env: {},
    mustExist: access !== 'write',
    createFolder: false,
    // A reader never takes the write lock: it answers while an ingest is writing.
    readOnly: access === 'read',
  })
  try {
    return await fn(store, config, project)
  } finally {
    await store.close()
  }
}

/**
 * `withStore` for commands that only read: the store opens without the write lock, so they answer while an
 * ingest is writing.
 */
export function withReadStore<T>(
  opts: StoreFlags,
  io: Io,
  fn: (store: Store, config: ResolvedConfig, project: string | null) => Promise<T>,
): Promise<T> {
  return withStore(opts, io, fn, 'read')
}
