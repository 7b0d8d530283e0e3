import { ruleAuditFromRow, ruleFromRow, ruleToRow, type RuleAuditRow, type RuleRow } from '../rows.js'
import type { QuarantineRule, RuleAuditEntry, RuleAuditInput, RuleStore } from '../store.js'
import type { SqliteConnection } from './connection.js'

/** Quarantine rules and their audit trail in a SQLite store. */
export class SqliteRules implements RuleStore {
  constructor(private readonly conn: SqliteConnection) {}

  listQuarantineRules(): Promise<QuarantineRule[]> {
    const rows = this.conn.db.prepare('SELECT * FROM quarantine_rules ORDER BY id').all() as RuleRow[]
    return Promise.resolve(rows.map(ruleFromRow))
  }

  private appendRuleAudit(ruleId: string, audit: RuleAuditInput, rule: QuarantineRule | null): void {
    this.conn.db
      .prepare('INSERT INTO quarantine_rule_audit (rule_id, action, actor, at, reason, rule) VALUES (?, ?, ?, ?, ?, ?)')
      .run(ruleId, audit.action, audit.actor, audit.at, audit.reason, rule && JSON.stringify(rule))
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
          this.appendRuleAudit(rule.id, audit, rule)
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
          if (changes) this.appendRuleAudit(id, audit, null)
          return changes > 0
        })
        .immediate()
      return Promise.resolve(removed)
    } catch (error) {
      return Promise.reject(this.conn.wrap('remove quarantine rule', error))
    }
  }

  listRuleAudit(filter: { ruleId?: string; limit?: number } = {}): Promise<RuleAuditEntry[]> {
    const rows = (
      filter.ruleId
        ? this.conn.db
            .prepare('SELECT * FROM quarantine_rule_audit WHERE rule_id = ? ORDER BY id DESC LIMIT ?')
            .all(filter.ruleId, filter.limit ?? -1)
        : this.conn.db.prepare('SELECT * FROM quarantine_rule_audit ORDER BY id DESC LIMIT ?').all(filter.limit ?? -1)
    ) as RuleAuditRow[]
    return Promise.resolve(rows.map(ruleAuditFromRow))
  }
}
