import { existsSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { StoreError } from '../../errors.js'
import { ComposedStore } from '../composed-store.js'
import type { NotificationStore } from '../notifications.js'
import { SqliteAnalyses } from './analyses.js'
import { SqliteAudit } from './audit.js'
import { SqliteConnection } from './connection.js'
import { loadSqlite, type SqliteConstructor, type SqliteDb, type SqliteStatement } from './driver.js'
import { SqliteHeal } from './heal.js'
import { SqliteHistory } from './history.js'
import { SqliteIngest } from './ingest.js'
import { migrateSqlite, pendingSqliteMigrations } from './migrations.js'
import { SqliteNotificationStore } from './notifications.js'
import { SqliteTicketStore } from './tickets.js'
import { SqliteTestNameStore } from './test-names.js'
import type { TestNameStore } from '../test-names.js'
import type { TicketStore } from '../tickets.js'
import { SqliteQuarantine } from './quarantine.js'
import { SqliteRetention } from './retention.js'
import { SqliteRules } from './rules.js'
import { SqliteRuns } from './runs.js'

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's transaction before giving up (ms). */
  busyTimeoutMs?: number
  /**
   * Open for reading only (analyze, show, gate, export, the server's analysis): the connection can never write,
   * and the schema check takes no lock. A file that is missing or needs migrating is opened for writing once to
   * create or migrate it, then reopened read-only.
   */
  readOnly?: boolean
  /**
   * Page cache of this connection, in MB. Default {@link WRITE_CACHE_MB} for a connection that writes and
   * {@link READ_CACHE_MB} for one that only reads; a long-running process with several connections (the server)
   * chooses smaller ones.
   */
  cacheMb?: number
}

/** Page cache of a connection that writes, in MB (see openSqliteStore). */
export const WRITE_CACHE_MB = 32

/** Page cache of a read-only connection, in MB: a one-off analysis reads every page of the store once. */
export const READ_CACHE_MB = 64

/**
 * Opens (creating if needed) a SQLite store. WAL lets readers run beside one writer; the busy timeout makes
 * parallel CI jobs that share one file wait for each other instead of failing.
 * @example const store = await openSqliteStore('.flakewatch.db')
 */
export async function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
  const Database = await loadSqlite()
  const path = file === ':memory:' ? file : resolve(file)
  if (opts.readOnly && path !== ':memory:' && existsSync(path)) {
    const reader = openReadOnly(Database, path, opts)
    if (reader) return reader
  }
  let db: SqliteDb
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    db = new Database(path, { timeout: opts.busyTimeoutMs ?? 30_000 })
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = OFF')
    // Results are clustered by test, so each report writes all over the table: a larger page cache keeps those
    // pages in memory instead of re-reading them for every run (allocated only as used). A report of a million
    // new tests fills any cache, so the size is also what such a report costs in memory: 32 MB, not 64.
    db.pragma(cacheSize(opts.cacheMb ?? WRITE_CACHE_MB))
    // Each report dirties a page per test, so checkpointing every 1,000 pages (the default) copies the same pages
    // back over and over; checkpointing every 20,000 (80 MB of WAL) measured 1.7× faster bulk ingest.
    db.pragma('wal_autocheckpoint = 20000')
  } catch (error) {
    throw new StoreError(`cannot open SQLite database ${path}: ${(error as Error).message}`, { cause: error })
  }
  const migrated = migrateSqlite(db)
  if (migrated.error) {
    db.close()
    const locked = /locked|busy/i.test(migrated.error.message)
    const what = locked
      ? `cannot migrate ${path}: another process holds the write lock (${migrated.error.message}); ` +
        'the schema needs migrating, so this open has to wait for it'
      : `cannot migrate ${path}: ${migrated.error.message}`
    throw new StoreError(what, { cause: migrated.error })
  }
  if (opts.readOnly && path !== ':memory:') {
    db.close()
    return openSqliteStore(path, opts)
  }
  return new SqliteStore(db, path)
}

/** The pragma that sets a connection's page cache to `mb` (a negative cache_size counts KiB, not pages). */
function cacheSize(mb: number): string {
  return `cache_size = -${Math.round(mb * 1024)}`
}

/**
 * A read-only connection when the schema is current, else null (the caller migrates first). WAL lets it read the
 * last committed state while a writer holds the lock.
 */
function openReadOnly(Database: SqliteConstructor, path: string, opts: SqliteStoreOptions): SqliteStore | null {
  let db: SqliteDb
  try {
    db = new Database(path, { timeout: opts.busyTimeoutMs ?? 30_000, readonly: true, fileMustExist: true })
    db.pragma(cacheSize(opts.cacheMb ?? READ_CACHE_MB))
  } catch (error) {
    throw new StoreError(`cannot open SQLite database ${path} for reading: ${(error as Error).message}`, {
      cause: error,
    })
  }
  try {
    if (pendingSqliteMigrations(db).length > 0) {
      db.close()
      return null
    }
  } catch (error) {
    db.close()
    throw new StoreError(`cannot read the schema of ${path}: ${(error as Error).message}`, { cause: error })
  }
  return new SqliteStore(db, path, true)
}

/**
 * A SQLite store: one connection, and one module per concern on it (ingest, history, runs, quarantine, rules,
 * the audit chain, heal data, retention, notifications), each behind its part of the {@link Store} interface.
 */
export class SqliteStore extends ComposedStore {
  readonly kind = 'sqlite' as const
  private readonly conn: SqliteConnection
  private notificationStore: SqliteNotificationStore | null = null
  private ticketStore: SqliteTicketStore | null = null
  private nameStore: SqliteTestNameStore | null = null

  constructor(
    private readonly db: SqliteDb,
    readonly location: string,
    /** Opened read-only: every write fails in the driver. */
    readonly readOnly = false,
  ) {
    const conn = new SqliteConnection(db, location, readOnly)
    super({
      ingest: new SqliteIngest(conn),
      history: new SqliteHistory(conn),
      runs: new SqliteRuns(conn),
      quarantine: new SqliteQuarantine(conn),
      rules: new SqliteRules(conn),
      audit: new SqliteAudit(conn),
      heal: new SqliteHeal(conn),
      retention: new SqliteRetention(conn),
      analyses: new SqliteAnalyses(conn),
    })
    this.conn = conn
  }

  notifications(): NotificationStore {
    return (this.notificationStore ??= new SqliteNotificationStore(this.db, (fn) => this.conn.serial(fn)))
  }

  tickets(): TicketStore {
    return (this.ticketStore ??= new SqliteTicketStore(this.db, (fn) => this.conn.serial(fn)))
  }

  testNames(): TestNameStore {
    return (this.nameStore ??= new SqliteTestNameStore(this.db, (fn) => this.conn.serial(fn)))
  }

  /** Runs a SQL query and returns its rows; for tests and diagnostics only. */
  rawQuery(sql: string, ...params: unknown[]): unknown[] {
    return this.db.prepare(sql).all(...params)
  }

  /** Runs a SQL statement that returns no rows; for tests and diagnostics only. */
  rawRun(sql: string, ...params: unknown[]): number {
    return this.db.prepare(sql).run(...params).changes
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close()
    return Promise.resolve()
  }
}

export type { SqliteStatement }
