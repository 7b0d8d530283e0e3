import { AUDIT_GENESIS, auditHash, type AuditHead, type AuditLogInput, type ChainedAuditEntry } from '../audit-chain.js'
import { auditLogFromRow, type AuditLogRow } from '../rows.js'
import type { SqliteDb } from './driver.js'

/**
 * The one audit chain on SQLite. Every audited change appends here inside its own immediate transaction, so the
 * change and its entry commit together, and SQLite's single writer keeps the chain from forking.
 */

/**
 * Appends one entry chained to the head; call it inside the caller's immediate transaction. The triggers refuse
 * an entry that does not chain to the head, and move the head along.
 * @example db.transaction(() => { db.prepare('…').run(); appendSqliteAudit(db, entry) }).immediate()
 */
export function appendSqliteAudit(db: SqliteDb, e: AuditLogInput): ChainedAuditEntry {
  const prevHash = readSqliteAuditHead(db).hash
  const hash = auditHash(prevHash, e)
  const id = db
    .prepare(
      `INSERT INTO audit_log (kind, subject, action, actor, at, reason, source, data, prev_hash, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      e.kind,
      e.subject,
      e.action,
      e.actor,
      e.at,
      e.reason,
      e.source,
      stringifyData(e.data),
      prevHash,
      hash,
    ).lastInsertRowid
  return { ...e, id: Number(id), prevHash, hash }
}

function stringifyData(data: unknown): string | null {
  return data === null || data === undefined ? null : JSON.stringify(data)
}

/** The head the triggers recorded at the last append. */
export function readSqliteAuditHead(db: SqliteDb): AuditHead {
  const row = db.prepare('SELECT count, hash FROM audit_head').get() as AuditHead | undefined
  return row ? { count: Number(row.count), hash: row.hash } : { count: 0, hash: AUDIT_GENESIS }
}

export function sqliteAuditChainPage(db: SqliteDb, afterId: number, limit: number): ChainedAuditEntry[] {
  const rows = db.prepare('SELECT * FROM audit_log WHERE id > ? ORDER BY id LIMIT ?').all(afterId, limit)
  return (rows as AuditLogRow[]).map(auditLogFromRow)
}

/** Entries of one kind (and subject), newest first. */
export function listSqliteAudit(
  db: SqliteDb,
  filter: { kind: string; subject?: string; limit?: number },
): ChainedAuditEntry[] {
  const rows = filter.subject
    ? db
        .prepare('SELECT * FROM audit_log WHERE kind = ? AND subject = ? ORDER BY id DESC LIMIT ?')
        .all(filter.kind, filter.subject, filter.limit ?? -1)
    : db.prepare('SELECT * FROM audit_log WHERE kind = ? ORDER BY id DESC LIMIT ?').all(filter.kind, filter.limit ?? -1)
  return (rows as AuditLogRow[]).map(auditLogFromRow)
}

/**
 * The schema of the chain. The triggers are the same on PostgreSQL (`postgres/audit-log.ts`), name for name:
 * entries are never updated, deleted or replaced; an entry must chain to the head; the head moves only with an
 * append, by one, to the new entry's hash.
 */
export const SQLITE_AUDIT_SCHEMA = `
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    at TEXT NOT NULL,
    reason TEXT NOT NULL,
    source TEXT,
    data TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  );
  CREATE INDEX audit_log_subject ON audit_log (kind, subject, id);
  CREATE TABLE audit_head (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    count INTEGER NOT NULL,
    hash TEXT NOT NULL
  );
  INSERT INTO audit_head (one, count, hash) VALUES (1, 0, '${AUDIT_GENESIS}');
  CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
  CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
  -- NEW.id is -1 when SQLite assigns the id; an explicit id at or below the newest is a replace or a back-dated
  -- entry (INSERT OR REPLACE deletes the old row without firing the delete trigger).
  CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
    WHEN NEW.id <> -1 AND NEW.id <= (SELECT coalesce(max(id), 0) FROM audit_log)
    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: an entry cannot be replaced'); END;
  CREATE TRIGGER audit_log_link BEFORE INSERT ON audit_log
    WHEN NEW.prev_hash IS NOT (SELECT hash FROM audit_head WHERE one = 1)
    BEGIN SELECT RAISE(ABORT, 'audit_log: an entry must chain to the head of the chain'); END;
  CREATE TRIGGER audit_log_head AFTER INSERT ON audit_log
    BEGIN UPDATE audit_head SET count = count + 1, hash = NEW.hash WHERE one = 1; END;
  CREATE TRIGGER audit_head_no_insert BEFORE INSERT ON audit_head
    BEGIN SELECT RAISE(ABORT, 'audit_head moves only with audit_log'); END;
  CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
    BEGIN SELECT RAISE(ABORT, 'audit_head moves only with audit_log'); END;
  CREATE TRIGGER audit_head_follows BEFORE UPDATE ON audit_head
    WHEN NEW.one <> 1 OR NEW.count <> OLD.count + 1
      OR NEW.hash IS NOT (SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1)
    BEGIN SELECT RAISE(ABORT, 'audit_head moves only with audit_log'); END;
`
