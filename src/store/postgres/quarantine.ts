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
import type { PgConnection } from './connection.js'
import type { PgQueryable } from './driver.js'

/** Advisory-lock namespace of the audit chain's appenders (any 32-bit constant of flakewatch's own). */
const AUDIT_LOCK_NAMESPACE = 0x66776175

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

  /**
   * Appends one audit entry chained to the last one. An advisory lock per schema serialises appenders until
   * commit, so that two concurrent changes never chain to the same predecessor.
   */
  private async appendAudit(
    db: PgQueryable,
    testId: string,
    audit: AuditInput,
    record: QuarantineRecord | null,
  ): Promise<void> {
    await db.query(`SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '.quarantine_audit'))`, [
      AUDIT_LOCK_NAMESPACE,
    ])
    const { rows } = await db.query<{ hash: string | null }>(
      'SELECT hash FROM quarantine_audit ORDER BY id DESC LIMIT 1',
    )
    const prevHash = rows[0]?.hash ?? AUDIT_GENESIS
    const hash = auditHash(prevHash, { testId, ...audit, record })
    await db.query(
      `INSERT INTO quarantine_audit (test_id, action, actor, at, reason, source, record, prev_hash, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        testId,
        audit.action,
        audit.actor,
        audit.at,
        audit.reason,
        audit.source,
        record && JSON.stringify(record),
        prevHash,
        hash,
      ],
    )
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
        await this.appendAudit(client, record.testId, audit, record)
      })
    } catch (error) {
      throw this.conn.wrap('quarantine', error)
    }
  }

  async deleteQuarantine(testId: string, audit: AuditInput): Promise<boolean> {
    try {
      return await this.conn.transaction(async (client) => {
        const { rowCount } = await client.query('DELETE FROM quarantine WHERE test_id = $1', [testId])
        if (rowCount) await this.appendAudit(client, testId, audit, null)
        return Boolean(rowCount)
      })
    } catch (error) {
      throw this.conn.wrap('unquarantine', error)
    }
  }

  async listAudit(filter: { testId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const { rows } = await this.conn.db.query<AuditRow>(
      `SELECT * FROM quarantine_audit WHERE $1::text IS NULL OR test_id = $1 ORDER BY id DESC LIMIT $2`,
      [filter.testId ?? null, filter.limit ?? null],
    )
    return rows.map(auditFromRow)
  }

  async listAuditChain(): Promise<ChainedAuditEntry[]> {
    const { rows } = await this.conn.db.query<ChainedAuditRow>('SELECT * FROM quarantine_audit ORDER BY id')
    return rows.map(chainedAuditFromRow)
  }
}
