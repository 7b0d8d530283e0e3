import { ruleAuditFromEntry, ruleAuditInput, ruleFromRow, ruleToRow, type RuleRow } from '../rows.js'
import type { QuarantineRule, RuleAuditEntry, RuleAuditInput, RuleStore } from '../store.js'
import { appendSqliteAudit, listSqliteAudit } from './audit-log.js'
import type { SqliteConnection } from './connection.js'

/** Quarantine rules and their audit trail in a SQLite store. */
export class SqliteRules implements RuleStore {
  constructor(private readonly conn: SqliteConnection) {}

  listQuarantineRules(): Promise<QuarantineRule[]> {
    const rows = this.conn.db.prepare('SELECT * FROM quarantine_rules ORDER BY id').all() as RuleRow[]
    return Promise.resolve(rows.map(ruleFromRow))
  }

  putQuarantineRule(rule: QuarantineRule, audit: RuleAuditInput): Promise<void> {
    try {
      this.conn.db
        .transaction(() => {
          this.conn.db
            .prepare(
              `INSERT OR REPLACE INTO quarantine_rules (id, match, reason, owner, issue_url, created_at, created_by, expires_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(...ruleToRow(rule))
          appendSqliteAudit(this.conn.db, ruleAuditInput(rule.id, audit, rule))
        })
        .immediate()
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(this.conn.wrap('save quarantine rule', error))
    }
  }

  deleteQuarantineRule(id: string, audit: RuleAuditInput): Promise<boolean> {
    try {
      const removed = this.conn.db
        .transaction(() => {
          const changes = this.conn.db.prepare('DELETE FROM quarantine_rules WHERE id = ?').run(id).changes
          if (changes) appendSqliteAudit(this.conn.db, ruleAuditInput(id, audit, null))
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.conn.wrap('remove quarantine rule', error))
    }
  }

  listRuleAudit(filter: { ruleId?: string; limit?: number } = {}): Promise<RuleAuditEntry[]> {
    const entries = listSqliteAudit(this.conn.db, { kind: 'rule', subject: filter.ruleId, limit: filter.limit })
    return Promise.resolve(entries.map(ruleAuditFromEntry))
  }
}
