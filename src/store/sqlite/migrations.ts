import { AUDIT_GENESIS, legacyAuditHash } from '../audit-chain.js'
import {
  legacyAuditEntries,
  legacyFields,
  type LegacyQuarantineAuditRow,
  type LegacyRuleAuditRow,
} from '../legacy-audit.js'
import { SQLITE_ANALYSES_READS, SQLITE_ANALYSES_SCHEMA, SQLITE_READ_INDEXES } from './analyses.js'
import { RUNS_SUITE_INDEX } from '../analyses.js'
import { appendSqliteAudit, SQLITE_AUDIT_SCHEMA } from './audit-log.js'
import type { SqliteDb } from './driver.js'

/** A forward-only schema step. Ids are ordered; an applied id is never run again. */
export interface SqliteMigration {
  id: string
  up(db: SqliteDb): void
}

export interface MigrationResultSet {
  error?: Error
  results: { id: string; status: 'applied' | 'skipped' }[]
}

/**
 * The schema follows the analysis scan: results are clustered by (test, at, run) so that one pass in primary-key
 * order yields every test's history oldest first, with integer keys throughout (text keys halve insert speed).
 */
export const SQLITE_MIGRATIONS: SqliteMigration[] = [
  {
    id: '0001-initial',
    up(db) {
      db.exec(`
        CREATE TABLE tests (
          id INTEGER PRIMARY KEY,
          test_id TEXT NOT NULL UNIQUE,
          suite TEXT NOT NULL,
          module TEXT NOT NULL,
          name TEXT NOT NULL,
          file TEXT
        );
        CREATE TABLE runs (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL UNIQUE,
          suite TEXT NOT NULL,
          branch TEXT,
          revision TEXT,
          pipeline_id TEXT,
          pipeline_url TEXT,
          job_id TEXT,
          job_url TEXT,
          artifacts_url TEXT,
          job_status TEXT,
          pipeline_status TEXT,
          runner_id TEXT,
          env TEXT NOT NULL DEFAULT '{}',
          started_at TEXT,
          finished_at TEXT,
          duration_ms INTEGER,
          status TEXT NOT NULL CHECK (status IN ('complete', 'interrupted', 'unknown')),
          uploaded_at TEXT NOT NULL,
          at INTEGER NOT NULL,
          -- Per-run counts, kept up to date by each ingest: the infra-failure guard and the run views read them
          -- without touching the million-row results table.
          total INTEGER NOT NULL DEFAULT 0,
          passed INTEGER NOT NULL DEFAULT 0,
          failed INTEGER NOT NULL DEFAULT 0,
          skipped INTEGER NOT NULL DEFAULT 0,
          flaky INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX runs_at ON runs (at);
        CREATE TABLE reports (
          run INTEGER NOT NULL,
          content_hash TEXT NOT NULL,
          file TEXT NOT NULL,
          ingested_at TEXT NOT NULL,
          PRIMARY KEY (run, content_hash)
        ) WITHOUT ROWID;
        CREATE TABLE messages (
          id INTEGER PRIMARY KEY,
          key TEXT NOT NULL UNIQUE,
          text TEXT NOT NULL
        );
        CREATE TABLE results (
          test INTEGER NOT NULL,
          at INTEGER NOT NULL,
          run INTEGER NOT NULL,
          status INTEGER NOT NULL,
          flaky INTEGER NOT NULL,
          duration_ms REAL,
          attempts INTEGER NOT NULL,
          failed_attempts INTEGER NOT NULL,
          failed_ms REAL NOT NULL,
          error_type TEXT,
          message INTEGER,
          healing INTEGER NOT NULL,
          PRIMARY KEY (test, at, run)
        ) WITHOUT ROWID;
        CREATE INDEX results_run ON results (run, status, flaky);
        CREATE TABLE attempts (
          run INTEGER NOT NULL,
          test INTEGER NOT NULL,
          retry INTEGER NOT NULL,
          status INTEGER NOT NULL,
          duration_ms REAL,
          message INTEGER,
          stack INTEGER,
          PRIMARY KEY (run, test, retry)
        ) WITHOUT ROWID;
        CREATE TABLE quarantine (
          test_id TEXT PRIMARY KEY,
          reason TEXT NOT NULL,
          owner TEXT,
          issue_url TEXT,
          created_at TEXT NOT NULL,
          created_by TEXT NOT NULL,
          expires_at TEXT,
          source TEXT NOT NULL CHECK (source IN ('auto', 'manual'))
        );
        CREATE TABLE quarantine_audit (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          test_id TEXT NOT NULL,
          action TEXT NOT NULL,
          actor TEXT NOT NULL,
          at TEXT NOT NULL,
          reason TEXT NOT NULL,
          source TEXT,
          record TEXT
        );
        CREATE INDEX quarantine_audit_test ON quarantine_audit (test_id, id);
        CREATE TABLE fingerprints (
          test_id TEXT NOT NULL,
          locator TEXT NOT NULL,
          data TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          PRIMARY KEY (test_id, locator)
        );
        CREATE TABLE heal_log (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          test_id TEXT NOT NULL,
          old_locator TEXT NOT NULL,
          new_locator TEXT NOT NULL,
          score REAL NOT NULL,
          breakdown TEXT NOT NULL,
          url TEXT,
          at TEXT NOT NULL,
          run_id TEXT
        );
        -- The audit log and the heal log are append-only: the database itself refuses edits.
        CREATE TRIGGER quarantine_audit_no_update BEFORE UPDATE ON quarantine_audit
          BEGIN SELECT RAISE(ABORT, 'quarantine_audit is append-only'); END;
        CREATE TRIGGER quarantine_audit_no_delete BEFORE DELETE ON quarantine_audit
          BEGIN SELECT RAISE(ABORT, 'quarantine_audit is append-only'); END;
        CREATE TRIGGER heal_log_no_update BEFORE UPDATE ON heal_log
          BEGIN SELECT RAISE(ABORT, 'heal_log is append-only'); END;
        CREATE TRIGGER heal_log_no_delete BEFORE DELETE ON heal_log
          BEGIN SELECT RAISE(ABORT, 'heal_log is append-only'); END;
      `)
    },
  },
  {
    // The audit trail becomes tamper-evident: each entry carries a hash chained to the previous one, and the
    // database refuses a replace (INSERT OR REPLACE deletes the old row without firing the delete trigger).
    id: '0003-server',
    up(db) {
      db.exec(`
        ALTER TABLE quarantine_audit ADD COLUMN prev_hash TEXT;
        ALTER TABLE quarantine_audit ADD COLUMN hash TEXT;
        DROP TRIGGER quarantine_audit_no_update;
      `)
      // Entries written before this migration are chained as they stand: from here on, any change shows.
      const update = db.prepare('UPDATE quarantine_audit SET prev_hash = ?, hash = ? WHERE id = ?')
      let prev = AUDIT_GENESIS
      const rows = db.prepare('SELECT * FROM quarantine_audit ORDER BY id').iterate()
      for (const row of rows as Iterable<LegacyQuarantineAuditRow>) {
        const hash = legacyAuditHash(prev, legacyFields(row))
        update.run(prev, hash, row.id)
        prev = hash
      }
      // In a BEFORE INSERT trigger NEW.id is -1 when SQLite assigns the id; an explicit id at or below the
      // newest is a replace or a back-dated entry.
      db.exec(`
        CREATE TRIGGER quarantine_audit_no_update BEFORE UPDATE ON quarantine_audit
          BEGIN SELECT RAISE(ABORT, 'quarantine_audit is append-only'); END;
        CREATE TRIGGER quarantine_audit_no_replace BEFORE INSERT ON quarantine_audit
          WHEN NEW.id <> -1 AND NEW.id <= (SELECT coalesce(max(id), 0) FROM quarantine_audit)
          BEGIN SELECT RAISE(ABORT, 'quarantine_audit is append-only: an entry cannot be replaced'); END;
        CREATE TRIGGER heal_log_no_replace BEFORE INSERT ON heal_log
          WHEN NEW.id <> -1 AND NEW.id <= (SELECT coalesce(max(id), 0) FROM heal_log)
          BEGIN SELECT RAISE(ABORT, 'heal_log is append-only: an entry cannot be replaced'); END;
      `)
    },
  },
  {
    // Quarantine by pattern (issue 18): the rules, and their own append-only audit trail.
    id: '0005-quarantine-rules',
    up(db) {
      db.exec(`
        CREATE TABLE quarantine_rules (
          id TEXT PRIMARY KEY,
          match TEXT NOT NULL,
          reason TEXT NOT NULL,
          owner TEXT,
          issue_url TEXT,
          created_at TEXT NOT NULL,
          created_by TEXT NOT NULL,
          expires_at TEXT
        );
        CREATE TABLE quarantine_rule_audit (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          rule_id TEXT NOT NULL,
          action TEXT NOT NULL,
          actor TEXT NOT NULL,
          at TEXT NOT NULL,
          reason TEXT NOT NULL,
          rule TEXT
        );
        CREATE INDEX quarantine_rule_audit_rule ON quarantine_rule_audit (rule_id, id);
        CREATE TRIGGER quarantine_rule_audit_no_update BEFORE UPDATE ON quarantine_rule_audit
          BEGIN SELECT RAISE(ABORT, 'quarantine_rule_audit is append-only'); END;
        CREATE TRIGGER quarantine_rule_audit_no_delete BEFORE DELETE ON quarantine_rule_audit
          BEGIN SELECT RAISE(ABORT, 'quarantine_rule_audit is append-only'); END;
      `)
    },
  },
  {
    // Notifications (issue 17): what was last said of each test, and the webhook outbox with its delivery log.
    id: '0009-beyond',
    up(db) {
      db.exec(`
        CREATE TABLE notification_state (
          test_id TEXT PRIMARY KEY,
          verdict TEXT NOT NULL,
          quarantined INTEGER NOT NULL,
          expiry_warned_for TEXT,
          updated_at TEXT NOT NULL
        );
        CREATE TABLE webhook_deliveries (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          event_id TEXT NOT NULL,
          webhook TEXT NOT NULL,
          event TEXT NOT NULL,
          test_id TEXT NOT NULL,
          body TEXT NOT NULL,
          status TEXT NOT NULL,
          attempts INTEGER NOT NULL,
          created_at TEXT NOT NULL,
          next_attempt_at INTEGER NOT NULL,
          last_attempt_at TEXT,
          last_status INTEGER,
          last_error TEXT,
          delivered_at TEXT,
          UNIQUE (webhook, event_id)
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      `)
    },
  },
  {
    // Root-cause hints (issue 19): each result's place in its run's execution order, for order dependency.
    id: '0010-order',
    up(db) {
      db.exec('ALTER TABLE results ADD COLUMN position INTEGER')
    },
  },
  {
    // Notifications of quarantine rules (issue 17): what was last said of each rule, to tell created, replaced and
    // deleted rules apart at the next look.
    id: '0011-rule-notifications',
    up(db) {
      db.exec(`
        CREATE TABLE notification_rule_state (
          rule_id TEXT PRIMARY KEY,
          digest TEXT NOT NULL,
          updated_at TEXT NOT NULL
        );
      `)
    },
  },
  {
    // Several servers on one store: when each run was last written (epoch ms), so that an instance can ask which
    // runs another one wrote since it last looked and re-analyse only those. Existing runs count as written when
    // uploaded.
    id: '0012-written-at',
    up(db) {
      db.exec(`
        ALTER TABLE runs ADD COLUMN written_at INTEGER NOT NULL DEFAULT 0;
        UPDATE runs SET written_at = coalesce(CAST(round((julianday(uploaded_at) - 2440587.5) * 86400000) AS INTEGER), 0);
        CREATE INDEX runs_written ON runs (written_at);
      `)
    },
  },
  {
    // One tamper-evident chain for everything audited (issue 33): quarantines and rules (whose trail had no hash)
    // move into audit_log in the order they happened, with a head (count and last hash) that the triggers keep,
    // so that entries removed from the end show. The old quarantine chain is checked once more on the way.
    id: '0013-audit-chain',
    up(db) {
      db.exec(SQLITE_AUDIT_SCHEMA)
      const quarantine = db.prepare('SELECT * FROM quarantine_audit ORDER BY id').all() as LegacyQuarantineAuditRow[]
      const rules = db.prepare('SELECT * FROM quarantine_rule_audit ORDER BY id').all() as LegacyRuleAuditRow[]
      for (const e of legacyAuditEntries(quarantine, rules, new Date().toISOString())) appendSqliteAudit(db, e)
      db.exec('DROP TABLE quarantine_audit; DROP TABLE quarantine_rule_audit')
    },
  },
  {
    // Tickets in trackers (issue 31): one row per test, what its ticket should be and what the tracker has, with
    // a lease so that two processes never open one test's ticket twice; and what the ticket sync last saw of each
    // test, apart from the webhooks' state.
    id: '0014-tickets',
    up(db) {
      db.exec(`
        CREATE TABLE ticket_state (
          test_id TEXT PRIMARY KEY,
          verdict TEXT NOT NULL,
          quarantined INTEGER NOT NULL,
          expiry_warned_for TEXT,
          updated_at TEXT NOT NULL
        );
        CREATE TABLE tickets (
          test_id TEXT PRIMARY KEY,
          tracker TEXT NOT NULL,
          marker TEXT NOT NULL,
          key TEXT,
          url TEXT,
          wanted TEXT NOT NULL,
          actual TEXT,
          reason TEXT NOT NULL,
          pending_comment TEXT,
          last_failure_at INTEGER,
          attempts INTEGER NOT NULL,
          next_attempt_at INTEGER NOT NULL,
          last_error TEXT,
          lease_owner TEXT,
          lease_until INTEGER NOT NULL,
          updated_at TEXT NOT NULL
        );
      `)
    },
  },
  {
    // The names tests were seen under (see store/test-names.ts).
    id: '0015-test-names',
    up(db) {
      db.exec(`
        CREATE TABLE test_names (
          name_id TEXT PRIMARY KEY,
          suite TEXT NOT NULL,
          test_id TEXT NOT NULL,
          module_is_label INTEGER NOT NULL,
          source TEXT NOT NULL CHECK (source IN ('ingest', 'merge', 'split')),
          at TEXT NOT NULL
        );
        CREATE INDEX test_names_suite ON test_names (suite);
        CREATE INDEX test_names_test ON test_names (test_id);
      `)
    },
  },
  {
    // Persisted analyses (issue 32, docs/scaling.md): one row per test, every existing test's row stale until the
    // first refresh analyses it.
    id: '0016-analyses',
    up(db) {
      db.exec(SQLITE_ANALYSES_SCHEMA)
    },
  },
  {
    // Suite or package timings of a run (issue 29: `go test -json` package events), apart from the run row: a
    // `go test ./...` run has one per package. Keyed by the run's integer id; prune deletes them with the run.
    id: '0018-run-timings',
    up(db) {
      db.exec(`
        CREATE TABLE run_timings (
          run INTEGER NOT NULL,
          name TEXT NOT NULL,
          duration_ms REAL NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
          PRIMARY KEY (run, name)
        ) WITHOUT ROWID;
      `)
    },
  },
  {
    // What the server's reads need of a persisted analysis besides its JSON (issue 32, docs/scaling.md): every row
    // is analysed again to fill them.
    id: '0019-analysis-reads',
    up(db) {
      db.exec(SQLITE_ANALYSES_READS)
    },
  },
  {
    // The default leaderboard order and the window's verdict counts read by index (issue 32: under uploads, their
    // sorts and scans kept the database busy and every read waited).
    id: '0020-read-indexes',
    up(db) {
      db.exec(SQLITE_READ_INDEXES)
    },
  },
  {
    // A suite's runs in the analysis window by index (issue 32): `?suite=` is answered from the persisted
    // analyses, and its run counts, heatmap columns and trends read that suite's runs only.
    id: '0021-suite-runs',
    up(db) {
      db.exec(RUNS_SUITE_INDEX)
    },
  },
]

/**
 * Which migrations the file still needs, found with plain reads: no write lock, so that readers never wait behind
 * a writer when nothing needs migrating.
 */
export function pendingSqliteMigrations(db: SqliteDb, migrations = SQLITE_MIGRATIONS): string[] {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta'").get()
  if (!hasMeta) return migrations.map((m) => m.id)
  const applied = new Set(
    (db.prepare("SELECT key FROM schema_meta WHERE key LIKE 'migration:%'").pluck().all() as string[]).map((k) =>
      k.slice('migration:'.length),
    ),
  )
  return migrations.filter((m) => !applied.has(m.id)).map((m) => m.id)
}

/**
 * Applies pending migrations in order, each in its own immediate transaction, so parallel openers serialise. When
 * a read-only check finds nothing pending, nothing is written and no lock is taken.
 */
export function migrateSqlite(db: SqliteDb, migrations = SQLITE_MIGRATIONS): MigrationResultSet {
  if (pendingSqliteMigrations(db, migrations).length === 0) {
    return { results: migrations.map((m) => ({ id: m.id, status: 'skipped' as const })) }
  }
  db.exec('CREATE TABLE IF NOT EXISTS schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
  const results: MigrationResultSet['results'] = []
  const applied = db.prepare('SELECT 1 FROM schema_meta WHERE key = ?')
  const record = db.prepare('INSERT INTO schema_meta (key, value) VALUES (?, ?)')
  for (const m of migrations) {
    const key = `migration:${m.id}`
    try {
      const ran = db
        .transaction(() => {
          if (applied.get(key)) return false
          m.up(db)
          record.run(key, new Date().toISOString())
          return true
        })
        .immediate()
      results.push({ id: m.id, status: ran ? 'applied' : 'skipped' })
    } catch (error) {
      return { error: error as Error, results }
    }
  }
  db.prepare('INSERT OR REPLACE INTO schema_meta (key, value) VALUES (?, ?)').run(
    'schema_version',
    String(migrations.length),
  )
  return { results }
}
