import { quarantineAuditFromEntry, quarantineAuditInput, quarantineFromRow, type QuarantineRow } from '../rows.js'
import type { AuditEntry, AuditInput, QuarantineRecord, QuarantineStore } from '../store.js'
import { appendPostgresAudit, listPostgresAudit } from './audit-log.js'
import type { PgConnection } from './connection.js'

/** Single-test quarantines and their audit chain in a PostgreSQL store. */
export class PgQuarantine implements QuarantineStore {
  constructor(private readonly conn: PgConnection) {}

  async listQuarantines(): Promise<QuarantineRecord[]> {
    const { rows } = await this.conn.db.query<QuarantineRow>('SELECT * FROM quarantine ORDER BY test_id')
    return rows.map(quarantineFromRow)
  }

  async getQuarantine(testId: string): Promise<QuarantineRecord | null> {
    const { rows } = await this.conn.db.query<QuarantineRow>('SELECT * FROM quarantine WHERE test_id = $1', [testId])
    return rows[0] ? quarantineFromRow(rows[0]) : null
  }

  async putQuarantine(record: QuarantineRecord, audit: AuditInput): Promise<void> {
    try {
      await this.conn.transaction(async (client) => {
        await client.query(
          `INSERT INTO quarantine (test_id, reason, owner, issue_url, created_at, created_by, expires_at, source)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (test_id) DO UPDATE SET reason = EXCLUDED.reason, owner = EXCLUDED.owner,
             issue_url = EXCLUDED.issue_url, created_at = EXCLUDED.created_at, created_by = EXCLUDED.created_by,
             expires_at = EXCLUDED.expires_at, source = EXCLUDED.source`,
          [
            record.testId,
            record.reason,
            record.owner,
            record.issueUrl,
            record.createdAt,
            record.createdBy,
            record.expiresAt,
            record.source,
          ],
        )
        await appendPostgresAudit(client, quarantineAuditInput(record.testId, audit, record))
      })
    } catch (error) {
      throw this.conn.wrap('quarantine', error)
    }
  }

  async deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    try {
      return await this.conn.transaction(async (client) => {
        const { rowCount } = await client.query('DELETE FROM quarantine WHERE test_id = $1', [testId])
        if (rowCount) await appendPostgresAudit(client, quarantineAuditInput(testId, audit, null))
        return Boolean(rowCount)
      })
    } catch (error) {
      throw this.conn.wrap('unquarantine', error)
    }
  }

  async listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const entries = await listPostgresAudit(this.conn.db, {
      kind: 'quarantine',
      subject: filter.testId,
      limit: filter.limit,
    })
    return entries.map(quarantineAuditFromEntry)
  }
}
