import { StoreError } from '../../errors.js'
import type { Attempt, Run, TestHistory, TestRef } from '../../model.js'
import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from '../audit-chain.js'
import type { NotificationStore } from '../notifications.js'
import type { MigrationResultSet } from '../sqlite/migrations.js'
import type {
  AuditEntry,
  AuditInput,
  Fingerprint,
  HealFilter,
  HealRecord,
  HistoryFilter,
  IngestOptions,
  QuarantineRecord,
  QuarantineRule,
  ReportBatch,
  ReportStream,
  RuleAuditEntry,
  RuleAuditInput,
  RunFilter,
  RunOutcome,
  RunSummary,
  Store,
  StoreStats,
  TestFilter,
  WrittenRun,
} from '../store.js'
import { PgAudit } from './audit.js'
import { PgConnection } from './connection.js'
import { loadPg, type PgClient, type PgDriver, type PgPool } from './driver.js'
import { PgHeal } from './heal.js'
import { PgHistory } from './history.js'
import { PgIngest } from './ingest.js'
import { migratePostgres } from './migrations.js'
import { PostgresNotificationStore } from './notifications.js'
import { PgQuarantine } from './quarantine.js'
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
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  private readonly conn: PgConnection
  private readonly ingest: PgIngest
  private readonly history: PgHistory
  private readonly runs: PgRuns
  private readonly quarantine: PgQuarantine
  private readonly rules: PgRules
  private readonly audit: PgAudit
  private readonly heal: PgHeal
  private readonly retention: PgRetention
  private notificationStore: PostgresNotificationStore | null = null

  constructor(
    driver: PgDriver,
    private readonly pool: PgPool,
    readonly location: string,
    /** What opening this store did to the schema: which migrations it applied and which it found applied. */
    readonly migrations: MigrationResultSet['results'] = [],
  ) {
    this.conn = new PgConnection(driver, pool, location)
    this.ingest = new PgIngest(this.conn)
    this.history = new PgHistory(this.conn)
    this.runs = new PgRuns(this.conn)
    this.quarantine = new PgQuarantine(this.conn)
    this.rules = new PgRules(this.conn)
    this.audit = new PgAudit(this.conn)
    this.heal = new PgHeal(this.conn)
    this.retention = new PgRetention(this.conn)
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

  // Results

  ingestReport(batch: ReportBatch, opts?: IngestOptions): Promise<RunOutcome[]> {
    return this.ingest.ingestReport(batch, opts)
  }

  ingestStream(stream: ReportStream, opts?: IngestOptions): Promise<RunOutcome[]> {
    return this.ingest.ingestStream(stream, opts)
  }

  // History

  scanHistory(filter?: HistoryFilter): AsyncIterable<TestHistory> {
    return this.history.scanHistory(filter)
  }

  testsInRuns(runIds: string[]): Promise<string[]> {
    return this.history.testsInRuns(runIds)
  }

  getTestHistory(testId: string, opts?: { limit?: number }): Promise<TestHistory | null> {
    return this.history.getTestHistory(testId, opts)
  }

  getAttempts(testId: string, runId: string): Promise<Attempt[]> {
    return this.history.getAttempts(testId, runId)
  }

  // Runs and tests

  listRuns(filter?: RunFilter): Promise<Run[]> {
    return this.runs.listRuns(filter)
  }

  getRun(runId: string): Promise<Run | null> {
    return this.runs.getRun(runId)
  }

  runSummaries(filter?: RunFilter): Promise<RunSummary[]> {
    return this.runs.runSummaries(filter)
  }

  runsWrittenSince(sinceMs: number, limit: number): Promise<WrittenRun[]> {
    return this.runs.runsWrittenSince(sinceMs, limit)
  }

  listTests(filter?: TestFilter): Promise<TestRef[]> {
    return this.runs.listTests(filter)
  }

  getTest(testId: string): Promise<TestRef | null> {
    return this.runs.getTest(testId)
  }

  stats(): Promise<StoreStats> {
    return this.runs.stats()
  }

  // Quarantine and audit

  listQuarantines(): Promise<QuarantineRecord[]> {
    return this.quarantine.listQuarantines()
  }

  getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    return this.quarantine.getQuarantine(testId)
  }

  putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    return this.quarantine.putQuarantine(record, audit)
  }

  deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    return this.quarantine.deleteQuarantine(testId, audit)
  }

  listAudit(filter?: { testId?: string; limit?: number }): Promise<AuditEntry[]> {
    return this.quarantine.listAudit(filter)
  }

  // Rules

  listQuarantineRules(): Promise<QuarantineRule[]> {
    return this.rules.listQuarantineRules()
  }

  putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    return this.rules.putQuarantineRule(rule, audit)
  }

  deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    return this.rules.deleteQuarantineRule(id, audit)
  }

  listRuleAudit(filter?: { ruleId?: string; limit?: number }): Promise<RuleAuditEntry[]> {
    return this.rules.listRuleAudit(filter)
  }

  // The audit chain

  appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    return this.audit.appendAudit(entry)
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return this.audit.listAuditLog(filter)
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return this.audit.auditChainPage(afterId, limit)
  }

  auditHead(): Promise<AuditHead> {
    return this.audit.auditHead()
  }

  // Heal data

  putFingerprint(fp: Fingerprint): Promise<void> {
    return this.heal.putFingerprint(fp)
  }

  getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    return this.heal.getFingerprint(testId, locator)
  }

  appendHeal(heal: HealRecord): Promise<void> {
    return this.heal.appendHeal(heal)
  }

  listHeals(filter?: HealFilter): Promise<HealRecord[]> {
    return this.heal.listHeals(filter)
  }

  // Retention

  prune(before: number, opts?: { batchSize?: number }): Promise<{ runs: number; results: number }> {
    return this.retention.prune(before, opts)
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
