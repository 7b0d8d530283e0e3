import { StoreError } from '../../errors.js'
import { ComposedStore } from '../composed-store.js'
import type { NotificationStore } from '../notifications.js'
import type { MigrationResultSet } from '../sqlite/migrations.js'
import { PgAnalyses } from './analyses.js'
import { PgAudit } from './audit.js'
import { PgConnection } from './connection.js'
import { loadPg, type PgClient, type PgDriver, type PgPool } from './driver.js'
import { PgHeal } from './heal.js'
import { PgHistory } from './history.js'
import { PgIngest } from './ingest.js'
import { migratePostgres } from './migrations.js'
import { PostgresNotificationStore } from './notifications.js'
import { PostgresTicketStore } from './tickets.js'
import { PostgresTestNameStore } from './test-names.js'
import type { TestNameStore } from '../test-names.js'
import type { TicketStore } from '../tickets.js'
import { PgQuarantine } from './quarantine.js'
import { PgPartitions } from './partitions.js'
import { PgReplication } from './replication.js'
import { PgRetention } from './retention.js'
import { PgRules } from './rules.js'
import { PgRuns } from './runs.js'

export type { ActiveRun, WrittenResults } from './ingest.js'
export type { OnCommit } from './connection.js'

export interface PostgresStoreOptions {
  /** Connections kept by this store (default: `?pool=` or 10). The analysis scan holds one for its whole duration. */
  poolSize?: number
  /** How long to wait for a connection before failing (ms, default 10 000). */
  connectTimeoutMs?: number
  /** For reading commands. The schema check is read-only in every case; this is kept for symmetry with SQLite. */
  readOnly?: boolean
}

/** A PostgreSQL URL split into what `pg` needs and what flakewatch reads itself. */
export interface ResolvedPostgresUrl {
  /** The URL without flakewatch's own parameters. */
  connectionString: string
  /** From `?schema=name`: every table lives there (created if missing), through `search_path`. */
  schema: string | null
  /** From `?pool=n`: connections this store may hold, so that N servers can be fitted into `max_connections`. */
  poolSize: number | null
  /** The URL without its password, for messages. */
  location: string
}

const INT8_OID = 20
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * Splits `?schema=` off a PostgreSQL URL and checks it, since it becomes an identifier.
 * @example
 * resolvePostgresUrl('postgres://ci:secret@db/fw?schema=team_a').location // 'postgres://ci@db/fw?schema=team_a'
 */
export function resolvePostgresUrl(url: string): ResolvedPostgresUrl {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (error) {
    throw new StoreError(`not a valid PostgreSQL URL: ${redact(url)}`, { cause: error })
  }
  const schema = parsed.searchParams.get('schema')
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    throw new StoreError(`schema "${schema}" is not a plain identifier (letters, digits, underscore)`)
  }
  const pool = parsed.searchParams.get('pool')
  const poolSize = pool === null ? null : Number(pool)
  if (poolSize !== null && !(Number.isInteger(poolSize) && poolSize >= 1 && poolSize <= 1000)) {
    throw new StoreError(`pool=${pool}: expected a whole number of connections from 1 to 1000`)
  }
  parsed.searchParams.delete('schema')
  parsed.searchParams.delete('pool')
  const connectionString = parsed.toString()
  parsed.password = ''
  if (schema) parsed.searchParams.set('schema', schema)
  return { connectionString, schema, poolSize, location: parsed.toString() }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@')
}

/**
 * Opens (migrating if needed) a PostgreSQL store. `pg` and `pg-copy-streams` are loaded only here.
 * @example const store = await openPostgresStore('postgres://ci@db:5432/flakewatch?schema=flakewatch')
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const resolved = resolvePostgresUrl(url)
  const driver = await loadPg()
  const pool = new driver.Pool({
    connectionString: resolved.connectionString,
    options: resolved.schema ? `-c search_path=${resolved.schema}` : undefined,
    max: opts.poolSize ?? resolved.poolSize ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'flakewatch',
    // Counts, ids and epoch-ms times are int8; all fit a double, and numbers are what the rest of flakewatch uses.
    types: { getTypeParser: (oid, format) => (oid === INT8_OID ? Number : driver.getTypeParser(oid, format)) },
  })
  // An idle connection dropped by the server emits here; without a listener that would crash the process.
  // The next query fails with its own error instead.
  pool.on('error', () => undefined)
  let client: PgClient
  try {
    client = await pool.connect()
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw new StoreError(`cannot connect to PostgreSQL at ${resolved.location}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const migrated = await migratePostgres(client, resolved.schema)
  client.release(migrated.error)
  if (migrated.error) {
    await pool.end().catch(() => undefined)
    throw new StoreError(`cannot migrate ${resolved.location}: ${migrated.error.message}`, { cause: migrated.error })
  }
  return new PostgresStore(driver, pool, resolved.location, migrated.results)
}

/**
 * A PostgreSQL store: one pool, and one module per concern on it (ingest, history, runs, quarantine, rules, the audit chain, heal
 * data, retention, notifications), each behind its part of the {@link Store} interface.
 */
export class PostgresStore extends ComposedStore {
  readonly kind = 'postgres' as const
  private readonly conn: PgConnection
  private notificationStore: PostgresNotificationStore | null = null
  private ticketStore: PostgresTicketStore | null = null
  private nameStore: PostgresTestNameStore | null = null
  private walPositions: PgReplication | null = null

  constructor(
    driver: PgDriver,
    private readonly pool: PgPool,
    readonly location: string,
    /** What opening this store did to the schema: which migrations it applied and which it found applied. */
    readonly migrations: MigrationResultSet['results'] = [],
  ) {
    const conn = new PgConnection(driver, pool, location)
    const partitions = new PgPartitions(conn)
    super({
      ingest: new PgIngest(conn, partitions),
      history: new PgHistory(conn),
      runs: new PgRuns(conn),
      quarantine: new PgQuarantine(conn),
      rules: new PgRules(conn),
      audit: new PgAudit(conn),
      heal: new PgHeal(conn),
      retention: new PgRetention(conn, partitions),
      analyses: new PgAnalyses(conn),
    })
    this.conn = conn
  }

  notifications(): NotificationStore {
    return (this.notificationStore ??= new PostgresNotificationStore(this.conn.db, async (fn) => {
      try {
        return await this.conn.transaction((client) => fn(client))
      } catch (error) {
        throw this.conn.wrap('notifications', error)
      }
    }))
  }

  tickets(): TicketStore {
    return (this.ticketStore ??= new PostgresTicketStore(this.conn.db, async (fn) => {
      try {
        return await this.conn.transaction((client) => fn(client))
      } catch (error) {
        throw this.conn.wrap('tickets', error)
      }
    }))
  }

  testNames(): TestNameStore {
    return (this.nameStore ??= new PostgresTestNameStore(this.conn.db, async (fn) => {
      try {
        return await this.conn.transaction((client) => fn(client))
      } catch (error) {
        throw this.conn.wrap('test names', error)
      }
    }))
  }

  /** This server's WAL positions: where a primary writes, how far a standby has replayed (read replicas). */
  replication(): PgReplication {
    return (this.walPositions ??= new PgReplication(this.conn))
  }

  /** Runs a SQL statement and returns its rows; for tests, benchmarks and diagnostics only. */
  async rawQuery<R = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<R[]> {
    const { rows } = await this.pool.query<R>(sql, params)
    return rows
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
