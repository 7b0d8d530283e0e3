import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from '../audit-chain.js'
import type { AuditStore } from '../store.js'
import { appendSqliteAudit, listSqliteAudit, readSqliteAuditHead, sqliteAuditChainPage } from './audit-log.js'
import type { SqliteConnection } from './connection.js'

/** The one audit chain of a SQLite store, for actions audited on their own (see `audit-log.ts`). */
export class SqliteAudit implements AuditStore {
  constructor(private readonly conn: SqliteConnection) {}

  appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    return this.conn.serial(() => {
      try {
        return Promise.resolve(this.conn.db.transaction(() => appendSqliteAudit(this.conn.db, entry)).immediate())
      } catch (error) {
        return Promise.reject(this.conn.wrap('audit', error))
      }
    })
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return Promise.resolve(listSqliteAudit(this.conn.db, filter))
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return Promise.resolve(sqliteAuditChainPage(this.conn.db, afterId, limit))
  }

  auditHead(): Promise<AuditHead> {
    return Promise.resolve(readSqliteAuditHead(this.conn.db))
  }
}
