import type { AuditHead, AuditKind, AuditLogInput, ChainedAuditEntry } from '../audit-chain.js'
import type { AuditStore } from '../store.js'
import { appendPostgresAudit, listPostgresAudit, postgresAuditChainPage, readPostgresAuditHead } from './audit-log.js'
import type { PgConnection } from './connection.js'

/** The one audit chain of a PostgreSQL store, for actions audited on their own (see `audit-log.ts`). */
export class PgAudit implements AuditStore {
  constructor(private readonly conn: PgConnection) {}

  async appendAudit(entry: AuditLogInput): Promise<ChainedAuditEntry> {
    try {
      return await this.conn.transaction((client) => appendPostgresAudit(client, entry))
    } catch (error) {
      throw this.conn.wrap('audit', error)
    }
  }

  listAuditLog(filter: { kind: AuditKind; subject?: string; limit?: number }): Promise<ChainedAuditEntry[]> {
    return listPostgresAudit(this.conn.db, filter)
  }

  auditChainPage(afterId: number, limit: number): Promise<ChainedAuditEntry[]> {
    return postgresAuditChainPage(this.conn.db, afterId, limit)
  }

  auditHead(): Promise<AuditHead> {
    return readPostgresAuditHead(this.conn.db)
  }
}
