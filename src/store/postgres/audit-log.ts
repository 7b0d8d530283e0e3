import { AUDIT_GENESIS, auditHash, type AuditHead, type AuditLogInput, type ChainedAuditEntry } from '../audit-chain.js'
import { auditLogFromRow, type AuditLogRow } from '../rows.js'
import type { PgQueryable } from './driver.js'

/**
 * The one audit chain on PostgreSQL. Every audited change appends here inside its own transaction, so the change
 * and its entry commit together.
 */

/** Any 32-bit constant, so that the chain's advisory lock does not collide with an application's own. */
const AUDIT_LOCK_NAMESPACE = 0x66776175

/**
 * Appends one entry chained to the head; call it inside the caller's transaction. An advisory lock per schema
 * serialises appenders until commit, so that two concurrent changes never chain to the same predecessor; the
 * triggers refuse an entry that does not chain to the head, and move the head along.
 * @example await transaction(async (client) => { await client.query('…'); await appendPostgresAudit(client, entry) })
 */
export async function appendPostgresAudit(db: PgQueryable, e: AuditLogInput): Promise<ChainedAuditEntry> {
  await db.query(`SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '.audit_log'))`, [AUDIT_LOCK_NAMESPACE])
  const prevHash = (await readPostgresAuditHead(db)).hash
  const hash = auditHash(prevHash, e)
  const data = e.data === null || e.data === undefined ? null : JSON.stringify(e.data)
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO audit_log (kind, subject, action, actor, at, reason, source, data, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
    [e.kind, e.subject, e.action, e.actor, e.at, e.reason, e.source, data, prevHash, hash],
  )
  return { ...e, id: Number(rows[0]!.id), prevHash, hash }
}

/** The head the triggers recorded at the last append. */
export async function readPostgresAuditHead(db: PgQueryable): Promise<AuditHead> {
  const { rows } = await db.query<{ count: string; hash: string }>('SELECT count, hash FROM audit_head')
  const row = rows[0]
  return row ? { count: Number(row.count), hash: row.hash } : { count: 0, hash: AUDIT_GENESIS }
}

export async function postgresAuditChainPage(
  db: PgQueryable,
  afterId: number,
  limit: number,
): Promise<ChainedAuditEntry[]> {
  const { rows } = await db.query<AuditLogRow>('SELECT * FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2', [
    afterId,
    limit,
  ])
  return rows.map(auditLogFromRow)
}

/** Entries of one kind (and subject), newest first. */
export async function listPostgresAudit(
  db: PgQueryable,
  filter: { kind: string; subject?: string; limit?: number },
): Promise<ChainedAuditEntry[]> {
  const { rows } = await db.query<AuditLogRow>(
    `SELECT * FROM audit_log WHERE kind = $1 AND ($2::text IS NULL OR subject = $2) ORDER BY id DESC LIMIT $3`,
    [filter.kind, filter.subject ?? null, filter.limit ?? null],
  )
  return rows.map(auditLogFromRow)
}

/**
 * The schema of the chain, with the same triggers as on SQLite (`sqlite/audit-log.ts`), name for name, plus the
 * TRUNCATE guards SQLite has no need of. The head moves by a SECURITY DEFINER trigger, so that the application
 * role may read the head but not write it (see `roles.ts`); `SET search_path FROM CURRENT` pins the functions to
 * the schema they were made in.
 */
export const POSTGRES_AUDIT_SCHEMA = `
  CREATE TABLE audit_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL,
    subject text NOT NULL,
    action text NOT NULL,
    actor text NOT NULL,
    at text NOT NULL,
    reason text NOT NULL,
    source text,
    data text,
    prev_hash text NOT NULL,
    hash text NOT NULL
  );
  CREATE INDEX audit_log_subject ON audit_log (kind, subject, id);
  CREATE TABLE audit_head (
    one smallint PRIMARY KEY CHECK (one = 1),
    count bigint NOT NULL,
    hash text NOT NULL
  );
  INSERT INTO audit_head (one, count, hash) VALUES (1, 0, '${AUDIT_GENESIS}');
  CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION fw_append_only();
  CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION fw_append_only();
  CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION fw_append_only();
  CREATE FUNCTION fw_audit_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
  BEGIN
    IF NEW.id <= (SELECT coalesce(max(id), 0) FROM audit_log) THEN
      RAISE EXCEPTION 'audit_log is append-only: an entry cannot be replaced' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION fw_audit_no_replace();
  CREATE FUNCTION fw_audit_link() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
  BEGIN
    IF NEW.prev_hash IS DISTINCT FROM (SELECT hash FROM audit_head WHERE one = 1) THEN
      RAISE EXCEPTION 'audit_log: an entry must chain to the head of the chain' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_log_link BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION fw_audit_link();
  CREATE FUNCTION fw_audit_head() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
  BEGIN
    UPDATE audit_head SET count = count + 1, hash = NEW.hash WHERE one = 1;
    RETURN NULL;
  END $$;
  CREATE TRIGGER audit_log_head AFTER INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION fw_audit_head();
  CREATE FUNCTION fw_audit_head_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'audit_head moves only with audit_log' USING ERRCODE = 'restrict_violation';
  END $$;
  CREATE TRIGGER audit_head_no_insert BEFORE INSERT ON audit_head
    FOR EACH ROW EXECUTE FUNCTION fw_audit_head_fixed();
  CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
    FOR EACH ROW EXECUTE FUNCTION fw_audit_head_fixed();
  CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head
    FOR EACH STATEMENT EXECUTE FUNCTION fw_audit_head_fixed();
  CREATE FUNCTION fw_audit_head_follows() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
  BEGIN
    IF NEW.one <> 1 OR NEW.count <> OLD.count + 1
      OR NEW.hash IS DISTINCT FROM (SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1) THEN
      RAISE EXCEPTION 'audit_head moves only with audit_log' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_head_follows BEFORE UPDATE ON audit_head
    FOR EACH ROW EXECUTE FUNCTION fw_audit_head_follows();
`
