import type { AuditLogInput } from './audit-chain.js'
import { quarantineAuditInput, quarantineFromRow, type QuarantineRow } from './rows.js'
import type { NameAudit } from './test-names.js'

/**
 * What a test carries besides its results when `tests merge` makes it part of another (issue 27): its quarantine,
 * its ticket and what the ticket sync last saw of it, and its heal fingerprints. Written once for both backends as
 * a sequence of steps that each backend runs inside the merge's own transaction (SQLite synchronously, PostgreSQL
 * with awaits), so the two cannot drift apart. SQL uses `$n` placeholders (named parameters to SQLite).
 */
export type CarryStep = { sql: string; params: (string | number)[] } | { audit: AuditLogInput }

/** A step's answer: the rows a SELECT gave, or the rows a write changed. */
export interface CarryAnswer {
  rows: Record<string, unknown>[]
  changes: number
}

export interface CarryOutcome {
  /**
   * `moved`: the merged test's quarantine is the target's now; `released`: the target kept its own quarantine and
   * the merged test's ended; null: the merged test had none.
   */
  quarantine: 'moved' | 'released' | null
  /**
   * `moved`: the merged test's ticket is the target's now; `closing`: the target has a ticket of its own, so the
   * merged test's is to be closed by the next ticket sync as a duplicate; null: it had none.
   */
  ticket: 'moved' | 'closing' | null
  /** Heal fingerprints moved (a locator both tests had keeps the newer fingerprint). */
  fingerprints: number
}

/**
 * The steps that carry `from`'s state to `into`, and what they did. Each `quarantine` change has its line in the
 * audit chain (kind `quarantine`) beside the merge's own (kind `test`); the heal log is append-only and keeps its
 * lines under the old id. `now` is epoch ms (a ticket to close is due from then).
 * @example const steps = carryTestState('unit::a::x', 'unit::b::x', audit, Date.now())
 */
export function* carryTestState(
  from: string,
  into: string,
  a: NameAudit,
  now: number,
): Generator<CarryStep, CarryOutcome, CarryAnswer> {
  const outcome: CarryOutcome = { quarantine: null, ticket: null, fingerprints: 0 }
  const source = { actor: a.actor, at: a.at, source: 'manual' as const }

  const q = yield { sql: 'SELECT * FROM quarantine WHERE test_id IN ($1, $2)', params: [from, into] }
  const rows = q.rows as unknown as QuarantineRow[]
  const fromQ = rows.find((r) => r.test_id === from)
  if (fromQ) {
    const intoHas = rows.some((r) => r.test_id === into)
    if (intoHas) {
      yield { sql: 'DELETE FROM quarantine WHERE test_id = $1', params: [from] }
      outcome.quarantine = 'released'
    } else {
      yield { sql: 'UPDATE quarantine SET test_id = $1 WHERE test_id = $2', params: [into, from] }
      const moved = { ...quarantineFromRow(fromQ), testId: into }
      const why = `moved from "${from}" by tests merge: ${a.reason}`
      yield { audit: quarantineAuditInput(into, { ...source, action: 'quarantine', reason: why }, moved) }
      outcome.quarantine = 'moved'
    }
    const why = `merged into "${into}"${intoHas ? ', which keeps its own quarantine' : ''}: ${a.reason}`
    yield { audit: quarantineAuditInput(from, { ...source, action: 'release', reason: why }, null) }
  }

  const t = yield { sql: 'SELECT test_id FROM tickets WHERE test_id IN ($1, $2)', params: [from, into] }
  if (t.rows.some((r) => r.test_id === from)) {
    if (t.rows.some((r) => r.test_id === into)) {
      // Two tickets for one test: the target's stays, and the other is closed in its tracker as a duplicate.
      yield {
        sql: `UPDATE tickets SET wanted = 'closed', reason = $1, attempts = 0, next_attempt_at = $2, updated_at = $3
              WHERE test_id = $4`,
        params: [`merged into ${into}`, now, a.at, from],
      }
      outcome.ticket = 'closing'
    } else {
      yield { sql: 'UPDATE tickets SET test_id = $1, updated_at = $2 WHERE test_id = $3', params: [into, a.at, from] }
      outcome.ticket = 'moved'
    }
  }
  // What the ticket sync last saw: the target's own stands; else the merged test's is the target's.
  const s = yield { sql: 'SELECT test_id FROM ticket_state WHERE test_id = $1', params: [into] }
  if (s.rows.length === 0) {
    yield { sql: 'UPDATE ticket_state SET test_id = $1 WHERE test_id = $2', params: [into, from] }
  } else {
    yield { sql: 'DELETE FROM ticket_state WHERE test_id = $1', params: [from] }
  }

  const f = yield {
    sql: `INSERT INTO fingerprints (test_id, locator, data, updated_at)
          SELECT $1, locator, data, updated_at FROM fingerprints WHERE test_id = $2
          ON CONFLICT (test_id, locator) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
          WHERE excluded.updated_at > fingerprints.updated_at`,
    params: [into, from],
  }
  outcome.fingerprints = f.changes
  yield { sql: 'DELETE FROM fingerprints WHERE test_id = $1', params: [from] }
  return outcome
}
