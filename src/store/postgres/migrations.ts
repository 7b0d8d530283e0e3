import type { MigrationResultSet } from '../sqlite/migrations.js'
import { AUDIT_GENESIS, legacyAuditHash } from '../audit-chain.js'
import {
  legacyAuditEntries,
  legacyFields,
  type LegacyQuarantineAuditRow,
  type LegacyRuleAuditRow,
} from '../legacy-audit.js'
import { POSTGRES_ANALYSES_READS, POSTGRES_ANALYSES_SCHEMA, POSTGRES_READ_INDEXES } from './analyses.js'
import { RUNS_SUITE_INDEX } from '../analyses.js'
import { appendPostgresAudit, POSTGRES_AUDIT_SCHEMA } from './audit-log.js'
import type { PgClient, PgQueryable } from './driver.js'
import { DAY_MS, dayPartitionsDdl, daysAhead, PARTITIONED_INDEXES, partitionable } from './partitions.js'

/** Days a pre-partition store's history may bring as partitions of their own; older days stay in the default. */
const MIGRATED_DAYS = 1000

/** A forward-only schema step, in step with the SQLite one of the same id. */
export interface PostgresMigration {
  id: string
  up(client: PgQueryable): Promise<void>
}

/**
 * The same schema as SQLite's, with these PostgreSQL choices:
 * - integer keys throughout; `at` (the run's start, epoch ms) is copied into results so that the scan needs no join;
 * - results are keyed `(run, test)`, which is also how they arrive (a run at a time) and how run summaries read
 *   them; since 0017 results and attempts are partitioned by day of `at` (see partitions.ts), and their keys
 *   carry `at`, which every row of a run shares;
 * - a heap has no order, so the scan index `(test, at, run)` INCLUDEs every column the scan reads: the analysis
 *   scan is an index-only scan in test order. `runs.at` never changes (a trigger refuses it) but in the one move
 *   a writer makes with the run's rows (0008), since results carry a copy;
 * - columns are ordered widest first so that rows carry no alignment padding;
 * - ISO timestamps stay text, so that what was given is what is read back, as in SQLite.
 */
export const POSTGRES_MIGRATIONS: PostgresMigration[] = [
  {
    id: '0001-initial',
    async up(client) {
      await client.query(`
        CREATE TABLE tests (
          id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          test_id text NOT NULL UNIQUE,
          suite text NOT NULL,
          module text NOT NULL,
          name text NOT NULL,
          file text
        );
        CREATE TABLE runs (
          id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          run_id text NOT NULL UNIQUE,
          suite text NOT NULL,
          branch text,
          revision text,
          pipeline_id text,
          pipeline_url text,
          job_id text,
          job_url text,
          artifacts_url text,
          job_status text,
          pipeline_status text,
          runner_id text,
          env jsonb NOT NULL DEFAULT '{}',
          started_at text,
          finished_at text,
          duration_ms double precision,
          status text NOT NULL CHECK (status IN ('complete', 'interrupted', 'unknown')),
          uploaded_at text NOT NULL,
          at bigint NOT NULL,
          -- Per-run counts, kept up to date by each ingest: the infra-failure guard and the run views read them
          -- without touching the results table.
          total integer NOT NULL DEFAULT 0,
          passed integer NOT NULL DEFAULT 0,
          failed integer NOT NULL DEFAULT 0,
          skipped integer NOT NULL DEFAULT 0,
          flaky integer NOT NULL DEFAULT 0
        );
        CREATE INDEX runs_at ON runs (at);
        CREATE TABLE reports (
          run integer NOT NULL,
          content_hash text NOT NULL,
          file text NOT NULL,
          ingested_at text NOT NULL,
          PRIMARY KEY (run, content_hash)
        );
        CREATE TABLE messages (
          id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          key text NOT NULL UNIQUE,
          text text NOT NULL
        );
        CREATE TABLE results (
          at bigint NOT NULL,
          duration_ms double precision,
          failed_ms double precision NOT NULL,
          test integer NOT NULL,
          run integer NOT NULL,
          attempts integer NOT NULL,
          failed_attempts integer NOT NULL,
          message integer,
          status smallint NOT NULL,
          flaky boolean NOT NULL,
          healing boolean NOT NULL,
          error_type text,
          PRIMARY KEY (run, test)
        );
        CREATE INDEX results_scan ON results (test, at, run)
          INCLUDE (status, flaky, duration_ms, attempts, failed_attempts, failed_ms, error_type, message, healing);
        CREATE TABLE attempts (
          duration_ms double precision,
          run integer NOT NULL,
          test integer NOT NULL,
          retry integer NOT NULL,
          message integer,
          stack integer,
          status smallint NOT NULL,
          PRIMARY KEY (run, test, retry)
        );
        CREATE TABLE quarantine (
          test_id text PRIMARY KEY,
          reason text NOT NULL,
          owner text,
          issue_url text,
          created_at text NOT NULL,
          created_by text NOT NULL,
          expires_at text,
          source text NOT NULL CHECK (source IN ('auto', 'manual'))
        );
        CREATE TABLE quarantine_audit (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          test_id text NOT NULL,
          action text NOT NULL,
          actor text NOT NULL,
          at text NOT NULL,
          reason text NOT NULL,
          source text,
          record jsonb
        );
        CREATE INDEX quarantine_audit_test ON quarantine_audit (test_id, id);
        CREATE TABLE fingerprints (
          test_id text NOT NULL,
          locator text NOT NULL,
          data jsonb NOT NULL,
          updated_at text NOT NULL,
          PRIMARY KEY (test_id, locator)
        );
        CREATE TABLE heal_log (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          test_id text NOT NULL,
          old_locator text NOT NULL,
          new_locator text NOT NULL,
          score double precision NOT NULL,
          breakdown jsonb NOT NULL,
          url text,
          at text NOT NULL,
          run_id text
        );
        CREATE INDEX heal_log_test ON heal_log (test_id, id);

        -- The audit log and the heal log are append-only: the database itself refuses edits, TRUNCATE included.
        CREATE FUNCTION fw_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
        END $$;
        CREATE TRIGGER quarantine_audit_append_only BEFORE UPDATE OR DELETE ON quarantine_audit
          FOR EACH ROW EXECUTE FUNCTION fw_append_only();
        CREATE TRIGGER quarantine_audit_no_truncate BEFORE TRUNCATE ON quarantine_audit
          FOR EACH STATEMENT EXECUTE FUNCTION fw_append_only();
        CREATE TRIGGER heal_log_append_only BEFORE UPDATE OR DELETE ON heal_log
          FOR EACH ROW EXECUTE FUNCTION fw_append_only();
        CREATE TRIGGER heal_log_no_truncate BEFORE TRUNCATE ON heal_log
          FOR EACH STATEMENT EXECUTE FUNCTION fw_append_only();

        -- results copy runs.at into their key; a run that moved in time would orphan its results from the scan order.
        CREATE FUNCTION fw_run_at_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'runs.at cannot change (run %)', OLD.run_id USING ERRCODE = 'restrict_violation';
        END $$;
        CREATE TRIGGER runs_at_fixed BEFORE UPDATE OF at ON runs
          FOR EACH ROW WHEN (OLD.at IS DISTINCT FROM NEW.at) EXECUTE FUNCTION fw_run_at_fixed();
      `)
    },
  },
  {
    // The audit trail becomes tamper-evident: each entry carries a hash chained to the previous one. Only the
    // table's owner (the migration role) can disable the append-only triggers; see postgresAppRoleGrants.
    id: '0003-server',
    async up(client) {
      await client.query(`
        ALTER TABLE quarantine_audit ADD COLUMN prev_hash text, ADD COLUMN hash text;
        ALTER TABLE quarantine_audit DISABLE TRIGGER quarantine_audit_append_only;
      `)
      // Entries written before this migration are chained as they stand: from here on, any change shows.
      const { rows } = await client.query<LegacyQuarantineAuditRow>('SELECT * FROM quarantine_audit ORDER BY id')
      let prev = AUDIT_GENESIS
      for (const row of rows) {
        const hash = legacyAuditHash(prev, legacyFields(row))
        await client.query('UPDATE quarantine_audit SET prev_hash = $1, hash = $2 WHERE id = $3', [prev, hash, row.id])
        prev = hash
      }
      await client.query(`
        ALTER TABLE quarantine_audit ENABLE TRIGGER quarantine_audit_append_only;
        -- Appends are serialised per schema (an advisory lock in the store), so a chain never forks; an insert
        -- that reuses or precedes an existing id is refused outright.
        CREATE FUNCTION fw_no_backfill() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.id <= (SELECT coalesce(max(id), 0) FROM quarantine_audit) THEN
            RAISE EXCEPTION 'quarantine_audit is append-only: an entry cannot be inserted before others'
              USING ERRCODE = 'restrict_violation';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER quarantine_audit_no_backfill BEFORE INSERT ON quarantine_audit
          FOR EACH ROW EXECUTE FUNCTION fw_no_backfill();
      `)
    },
  },
  {
    // Quarantine by pattern (issue 18): the rules, and their own append-only audit trail.
    id: '0005-quarantine-rules',
    async up(client) {
      await client.query(`
        CREATE TABLE quarantine_rules (
          id text PRIMARY KEY,
          match text NOT NULL,
          reason text NOT NULL,
          owner text,
          issue_url text,
          created_at text NOT NULL,
          created_by text NOT NULL,
          expires_at text
        );
        CREATE TABLE quarantine_rule_audit (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          rule_id text NOT NULL,
          action text NOT NULL,
          actor text NOT NULL,
          at text NOT NULL,
          reason text NOT NULL,
          rule text
        );
        CREATE INDEX quarantine_rule_audit_rule ON quarantine_rule_audit (rule_id, id);
        CREATE TRIGGER quarantine_rule_audit_append_only BEFORE UPDATE OR DELETE ON quarantine_rule_audit
          FOR EACH ROW EXECUTE FUNCTION fw_append_only();
        CREATE TRIGGER quarantine_rule_audit_no_truncate BEFORE TRUNCATE ON quarantine_rule_audit
          FOR EACH STATEMENT EXECUTE FUNCTION fw_append_only();
      `)
    },
  },
  {
    // A streamed report may learn its run's start only after its first results are written; the writer then moves
    // the run and all its results together, in the report's transaction, saying so for that one run. Every other
    // change of runs.at is still refused. (PostgreSQL only: SQLite has no such guard.)
    id: '0008-ingest-run-at',
    async up(client) {
      await client.query(`
        CREATE OR REPLACE FUNCTION fw_run_at_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF current_setting('flakewatch.moving_run', true) = OLD.id::text THEN RETURN NEW; END IF;
          RAISE EXCEPTION 'runs.at cannot change (run %)', OLD.run_id USING ERRCODE = 'restrict_violation';
        END $$;
      `)
    },
  },
  {
    // Notifications (issue 17): what was last said of each test, and the webhook outbox with its delivery log.
    id: '0009-beyond',
    async up(client) {
      await client.query(`
        CREATE TABLE notification_state (
          test_id text PRIMARY KEY,
          verdict text NOT NULL,
          quarantined boolean NOT NULL,
          expiry_warned_for text,
          updated_at text NOT NULL
        );
        CREATE TABLE webhook_deliveries (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          event_id text NOT NULL,
          webhook text NOT NULL,
          event text NOT NULL,
          test_id text NOT NULL,
          body text NOT NULL,
          status text NOT NULL,
          attempts integer NOT NULL,
          created_at text NOT NULL,
          next_attempt_at bigint NOT NULL,
          last_attempt_at text,
          last_status integer,
          last_error text,
          delivered_at text,
          UNIQUE (webhook, event_id)
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      `)
    },
  },
  {
    // Root-cause hints (issue 19): each result's place in its run's execution order, for order dependency. The
    // scan reads it, so the scan index carries it too and the scan stays index-only.
    id: '0010-order',
    async up(client) {
      await client.query(`
        ALTER TABLE results ADD COLUMN position integer;
        DROP INDEX results_scan;
        CREATE INDEX results_scan ON results (test, at, run)
          INCLUDE (status, flaky, duration_ms, attempts, failed_attempts, failed_ms, error_type, message, healing,
            position);
      `)
    },
  },
  {
    // Notifications of quarantine rules (issue 17): what was last said of each rule, to tell created, replaced and
    // deleted rules apart at the next look.
    id: '0011-rule-notifications',
    async up(client) {
      await client.query(`
        CREATE TABLE notification_rule_state (
          rule_id text PRIMARY KEY,
          digest text NOT NULL,
          updated_at text NOT NULL
        );
      `)
    },
  },
  {
    // Several servers on one store: when each run was last written (epoch ms, by the database's clock, so that
    // instances with different clocks agree), so that an instance can ask which runs another one wrote since it
    // last looked and re-analyse only those. Existing runs count as written when uploaded.
    id: '0012-written-at',
    async up(client) {
      await client.query(`
        ALTER TABLE runs ADD COLUMN written_at bigint NOT NULL DEFAULT 0;
        UPDATE runs SET written_at = CASE WHEN uploaded_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T'
          THEN (extract(epoch FROM uploaded_at::timestamptz) * 1000)::bigint ELSE 0 END;
        CREATE INDEX runs_written ON runs (written_at, id);
      `)
    },
  },
  {
    // One tamper-evident chain for everything audited (issue 33): quarantines and rules (whose trail had no hash)
    // move into audit_log in the order they happened, with a head (count and last hash) that the triggers keep,
    // so that entries removed from the end show. The old quarantine chain is checked once more on the way.
    id: '0013-audit-chain',
    async up(client) {
      await client.query(POSTGRES_AUDIT_SCHEMA)
      const quarantine = await client.query<LegacyQuarantineAuditRow>('SELECT * FROM quarantine_audit ORDER BY id')
      const rules = await client.query<LegacyRuleAuditRow>('SELECT * FROM quarantine_rule_audit ORDER BY id')
      for (const e of legacyAuditEntries(quarantine.rows, rules.rows, new Date().toISOString())) {
        await appendPostgresAudit(client, e)
      }
      await client.query(`
        DROP TABLE quarantine_audit;
        DROP TABLE quarantine_rule_audit;
        DROP FUNCTION fw_no_backfill();
      `)
    },
  },
  {
    // Tickets in trackers (issue 31): see the SQLite migration of the same id.
    id: '0014-tickets',
    async up(client) {
      await client.query(`
        CREATE TABLE ticket_state (
          test_id text PRIMARY KEY,
          verdict text NOT NULL,
          quarantined boolean NOT NULL,
          expiry_warned_for text,
          updated_at text NOT NULL
        );
        CREATE TABLE tickets (
          test_id text PRIMARY KEY,
          tracker text NOT NULL,
          marker text NOT NULL,
          key text,
          url text,
          wanted text NOT NULL,
          actual text,
          reason text NOT NULL,
          pending_comment text,
          last_failure_at bigint,
          attempts integer NOT NULL,
          next_attempt_at bigint NOT NULL,
          last_error text,
          lease_owner text,
          lease_until bigint NOT NULL,
          updated_at text NOT NULL
        );
      `)
    },
  },
  {
    // The names tests were seen under (see store/test-names.ts).
    id: '0015-test-names',
    async up(client) {
      await client.query(`
        CREATE TABLE test_names (
          name_id text PRIMARY KEY,
          suite text NOT NULL,
          test_id text NOT NULL,
          module_is_label boolean NOT NULL,
          source text NOT NULL CHECK (source IN ('ingest', 'merge', 'split')),
          at text NOT NULL
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
    async up(client) {
      await client.query(POSTGRES_ANALYSES_SCHEMA)
    },
  },
  {
    // Time partitions (issue 32, docs/scaling.md): results and attempts become partitioned by day of `at`, so
    // that prune drops whole days. Attempts gain the run's `at` (their partition key). Rows are copied into the new
    // tables with the keys and the scan index built afterwards, in one pass each. Every day the history has (up to
    // MIGRATED_DAYS, newest first) and the days ahead get partitions; older days go to the default partition.
    id: '0017-partitions',
    async up(client) {
      await client.query(`
        ALTER TABLE results RENAME TO results_0016;
        ALTER INDEX results_pkey RENAME TO results_0016_pkey;
        ALTER INDEX results_scan RENAME TO results_0016_scan;
        ALTER TABLE attempts RENAME TO attempts_0016;
        ALTER INDEX attempts_pkey RENAME TO attempts_0016_pkey;
        -- The same columns (attempts gain the run's time, first, as the widest), with the keys and the scan
        -- index made once the rows are in. Every result of a run shares the run's at, so a key with it is still
        -- one row per test per run.
        CREATE TABLE results (LIKE results_0016) PARTITION BY RANGE (at);
        CREATE TABLE attempts (at bigint NOT NULL, LIKE attempts_0016) PARTITION BY RANGE (at);
        CREATE TABLE results_default PARTITION OF results DEFAULT;
        CREATE TABLE attempts_default PARTITION OF attempts DEFAULT;
      `)
      // runs is the small table, and a run's results share its `at`.
      const { rows } = await client.query<{ day: number }>(
        `SELECT DISTINCT floor(at / ${DAY_MS}::numeric)::bigint AS day FROM runs ORDER BY day DESC LIMIT $1`,
        [MIGRATED_DAYS],
      )
      const days = new Set([...rows.map((r) => r.day), ...daysAhead(Date.now())].filter(partitionable))
      if (days.size) await client.query([...days].map(dayPartitionsDdl).join('\n'))
      await client.query(`
        INSERT INTO results (at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky,
          healing, error_type, position)
        SELECT at, duration_ms, failed_ms, test, run, attempts, failed_attempts, message, status, flaky, healing,
          error_type, position FROM results_0016;
        -- An attempt whose run is gone (none should be) is kept, in the default partition.
        INSERT INTO attempts (at, duration_ms, run, test, retry, message, stack, status)
        SELECT coalesce(r.at, -1), a.duration_ms, a.run, a.test, a.retry, a.message, a.stack, a.status
        FROM attempts_0016 a LEFT JOIN runs r ON r.id = a.run;
        ${PARTITIONED_INDEXES}
        DROP TABLE results_0016, attempts_0016;
      `)
    },
  },
  {
    // Suite or package timings of a run (issue 29: `go test -json` package events), apart from the run row: a
    // `go test ./...` run has one per package. Keyed by the run's integer id; prune deletes them with the run.
    id: '0018-run-timings',
    async up(client) {
      await client.query(`
        CREATE TABLE run_timings (
          run integer NOT NULL,
          name text NOT NULL,
          duration_ms double precision NOT NULL,
          status text NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
          PRIMARY KEY (run, name)
        );
      `)
    },
  },
  {
    // What the server's reads need of a persisted analysis besides its JSON (issue 32, docs/scaling.md): every row
    // is analysed again to fill them.
    id: '0019-analysis-reads',
    async up(client) {
      await client.query(POSTGRES_ANALYSES_READS)
    },
  },
  {
    // The default leaderboard order and the window's verdict counts read by index (issue 32: under uploads, their
    // sorts and scans kept the database busy and every read waited).
    id: '0020-read-indexes',
    async up(client) {
      await client.query(POSTGRES_READ_INDEXES)
    },
  },
  {
    // A suite's runs in the analysis window by index (issue 32): `?suite=` is answered from the persisted
    // analyses, and its run counts, heatmap columns and trends read that suite's runs only.
    id: '0021-suite-runs',
    async up(client) {
      await client.query(RUNS_SUITE_INDEX)
    },
  },
]

/**
 * Which migrations the schema still needs, found with plain reads: no advisory lock and no write, so that opening
 * for reads (or as an application role without DDL rights) never waits behind a writer or a migration.
 */
export async function pendingPostgresMigrations(
  client: PgQueryable,
  migrations = POSTGRES_MIGRATIONS,
): Promise<string[]> {
  const exists = await client.query(`SELECT to_regclass('schema_meta') IS NOT NULL AS present`)
  if (!(exists.rows[0] as { present: boolean }).present) return migrations.map((m) => m.id)
  const rows = await client.query(`SELECT key FROM schema_meta WHERE key LIKE 'migration:%'`)
  const applied = new Set((rows.rows as { key: string }[]).map((r) => r.key.slice('migration:'.length)))
  return migrations.filter((m) => !applied.has(m.id)).map((m) => m.id)
}

/** Any 32-bit constant, so that flakewatch's advisory locks do not collide with an application's own. */
const LOCK_NAMESPACE = 0x666c6b77

/**
 * Applies pending migrations in order, each in its own transaction under a transaction-level advisory lock keyed
 * by the schema, so that many processes starting at once migrate exactly once and the others wait, then skip.
 * Creates the schema when one is named.
 */
export async function migratePostgres(
  client: PgClient,
  schema: string | null,
  migrations = POSTGRES_MIGRATIONS,
): Promise<MigrationResultSet> {
  const results: MigrationResultSet['results'] = []
  try {
    if ((await pendingPostgresMigrations(client, migrations)).length === 0) {
      return { results: migrations.map((m) => ({ id: m.id, status: 'skipped' as const })) }
    }
  } catch (error) {
    return { error: error as Error, results }
  }
  const lockKey = schema ?? 'default'
  const inTransaction = async <T>(fn: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN')
    try {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_NAMESPACE, lockKey])
      const value = await fn()
      await client.query('COMMIT')
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    }
  }
  try {
    await inTransaction(async () => {
      // IF NOT EXISTS alone is not race-free (two creators can both pass the check); the lock makes it so.
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`)
      await client.query('CREATE TABLE IF NOT EXISTS schema_meta (key text PRIMARY KEY, value text NOT NULL)')
    })
  } catch (error) {
    return { error: error as Error, results }
  }
  for (const m of migrations) {
    const key = `migration:${m.id}`
    try {
      const ran = await inTransaction(async () => {
        const seen = await client.query('SELECT 1 FROM schema_meta WHERE key = $1', [key])
        if (seen.rows.length > 0) return false
        await m.up(client)
        await client.query('INSERT INTO schema_meta (key, value) VALUES ($1, $2)', [key, new Date().toISOString()])
        return true
      })
      results.push({ id: m.id, status: ran ? 'applied' : 'skipped' })
    } catch (error) {
      return { error: error as Error, results }
    }
  }
  try {
    await inTransaction(() =>
      client.query(
        `INSERT INTO schema_meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [String(migrations.length)],
      ),
    )
  } catch (error) {
    return { error: error as Error, results }
  }
  return { results }
}

/** Schema names come from a URL: only plain identifiers are accepted, and they are quoted anyway. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
