import { ruleAuditFromEntry, ruleAuditInput, ruleFromRow, ruleToRow, type RuleRow } from '../rows.js'
import type { QuarantineRule, RuleAuditEntry, RuleAuditInput, RuleStore } from '../store.js'
import { appendPostgresAudit, listPostgresAudit } from './audit-log.js'
import type { PgConnection } from './connection.js'

/** Quarantine rules and their audit trail in a PostgreSQL store. */
export class PgRules implements RuleStore {
  constructor(private readonly conn: PgConnection) {}

  async listQuarantineRules(): Promise<QuarantineRule[]> {
    const { rows } = await this.conn.db.query<RuleRow>('SELECT * FROM quarantine_rules ORDER BY id')
    return rows.map(ruleFromRow)
  }

  async putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    try {
      await this.conn.transaction(async (client) => {
        await client.query(
          `INSERT INTO quarantine_rules (id, match, reason, owner, issue_url, created_at, created_by, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (id) DO UPDATE SET match = EXCLUDED.match, reason = EXCLUDED.reason, owner = EXCLUDED.owner,
             issue_url = EXCLUDED.issue_url, created_at = EXCLUDED.created_at, created_by = EXCLUDED.created_by,
             expires_at = EXCLUDED.expires_at`,
          ruleToRow(rule),
        )
        await appendPostgresAudit(client, ruleAuditInput(rule.id, audit, rule))
      })
    } catch (error) {
      throw this.conn.wrap('save quarantine rule', error)
    }
  }

  async deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    try {
      return await this.conn.transaction(async (client) => {
        const { rowCount } = await client.query('DELETE FROM quarantine_rules WHERE id = $1', [id])
        if (rowCount) await appendPostgresAudit(client, ruleAuditInput(id, audit, null))
        return Boolean(rowCount)
      })
    } catch (error) {
      throw this.conn.wrap('remove quarantine rule', error)
    }
  }

  async listRuleAudit(filter: { ruleId?: string; limit?: number } = {}): Promise<RuleAuditEntry[]> {
    const entries = await listPostgresAudit(this.conn.db, { kind: 'rule', subject: filter.ruleId, limit: filter.limit })
    return entries.map(ruleAuditFromEntry)
  }
}
