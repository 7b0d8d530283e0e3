import { AUDIT_GENESIS, auditHash, type ChainedAuditEntry } from '../audit-chain.js'
import {
  auditFromRow,
  chainedAuditFromRow,
  quarantineFromRow,
  type AuditRow,
  type ChainedAuditRow,
  type QuarantineRow,
} from '../rows.js'
import type { AuditEntry, AuditInput, QuarantineRecord, QuarantineStore } from '../store.js'
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

  /** Appends one audit entry chained to the last one; runs inside the caller's immediate transaction. */
  private appendAudit(testId: string, audit: AuditInput, record: QuarantineRecord | null): void {
    const last = this.conn.db.prepare('SELECT hash FROM quarantine_audit ORDER BY id DESC LIMIT 1').pluck().get() as
      string | null | undefined
    const prevHash = last ?? AUDIT_GENESIS
    const hash = auditHash(prevHash, { testId, ...audit, record })
    this.conn.db
      .prepare(
        `INSERT INTO quarantine_audit (test_id, action, actor, at, reason, source, record, prev_hash, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        testId,
        audit.action,
        audit.actor,
        audit.at,
        audit.reason,
        audit.source,
        record && JSON.stringify(record),
        prevHash,
        hash,
      )
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
          this.appendAudit(record.testId, audit, record)
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
          if (changes) this.appendAudit(testId, audit, null)
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.conn.wrap('unquarantine', error))
    }
  }

  listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const rows = (
      filter.testId
        ? this.conn
            .read('SELECT * FROM quarantine_audit WHERE test_id = ? ORDER BY id DESC LIMIT ?')
            .all(filter.testId, filter.limit ?? -1)
        : this.conn.read('SELECT * FROM quarantine_audit ORDER BY id DESC LIMIT ?').all(filter.limit ?? -1)
    ) as AuditRow[]
    return Promise.resolve(rows.map(auditFromRow))
  }

  listAuditChain(): Promise<ChainedAuditEntry[]> {
    const rows = this.conn.db.prepare('SELECT * FROM quarantine_audit ORDER BY id').all() as ChainedAuditRow[]
    return Promise.resolve(rows.map(chainedAuditFromRow))
  }
}
