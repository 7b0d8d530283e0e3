import { quarantineAuditFromEntry, quarantineAuditInput, quarantineFromRow, type QuarantineRow } from '../rows.js'
import type { AuditEntry, AuditInput, QuarantineRecord, QuarantineStore } from '../store.js'
import { appendSqliteAudit, listSqliteAudit } from './audit-log.js'
import type { SqliteConnection } from './connection.js'

/** Single-test quarantines and their audit chain in a SQLite store. */
export class SqliteQuarantine implements QuarantineStore {
  constructor(private readonly conn: SqliteConnection) {}

  listQuarantines(): Promise<QuarantineRecord[]> {
    const rows = this.conn.read('SELECT * FROM quarantine ORDER BY test_id').all() as QuarantineRow[]
    return Promise.resolve(rows.map(quarantineFromRow))
  }

  getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    const row = this.conn.read('SELECT * FROM quarantine WHERE test_id = ?').get(testId) as QuarantineRow | undefined
    return Promise.resolve(row ? quarantineFromRow(row) : null)
  }

  putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    return this.conn.serial(() => this.putQuarantineNow(record, audit))
  }

  private putQuarantineNow(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    try {
      this.conn.db
        .transaction(() => {
          this.conn.db
            .prepare(
              `INSERT OR REPLACE INTO quarantine (test_id, reason, owner, issue_url, created_at, created_by, expires_at, source)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(
              record.testId,
              record.reason,
              record.owner,
              record.issueUrl,
              record.createdAt,
              record.createdBy,
              record.expiresAt,
              record.source,
            )
          appendSqliteAudit(this.conn.db, quarantineAuditInput(record.testId, audit, record))
        })
        .immediate()
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(this.conn.wrap('quarantine', error))
    }
  }

  deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    return this.conn.serial(() => this.deleteQuarantineNow(testId, audit))
  }

  private deleteQuarantineNow(testId: string, audit: AuditInput): Promise<boolean> {
    try {
      const removed = this.conn.db
        .transaction(() => {
          const changes = this.conn.db.prepare('DELETE FROM quarantine WHERE test_id = ?').run(testId).changes
          if (changes) appendSqliteAudit(this.conn.db, quarantineAuditInput(testId, audit, null))
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.conn.wrap('unquarantine', error))
    }
  }

  listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const entries = listSqliteAudit(this.conn.db, { kind: 'quarantine', subject: filter.testId, limit: filter.limit })
    return Promise.resolve(entries.map(quarantineAuditFromEntry))
  }
}
