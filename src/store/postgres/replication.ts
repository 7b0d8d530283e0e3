import type { PgConnection } from './connection.js'

/**
 * A WAL position as PostgreSQL prints it (`16/B374D848`: the high and low 32 bits in hex), at most 8 hex digits
 * each side; anything else is not one (this text arrives in request headers and cookies).
 */
const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/

/** The byte offset a WAL position names, or null when the text is not a WAL position. */
export function parseLsn(text: string): bigint | null {
  const m = LSN_TEXT.exec(text.trim())
  if (!m) return null
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`)
}

/** A byte offset printed the way PostgreSQL prints WAL positions. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`
}

/** Where a standby's replay stands. */
export interface ReplayState {
  /** False when this server is not a standby at all (a primary given as the replica). */
  standby: boolean
  /** The last WAL position replayed (null when none yet, or not a standby). */
  replayed: bigint | null
  /**
   * How long the replayed state trails the primary, in ms: 0 when everything received is replayed, else the time
   * since the last replayed commit was made on the primary. Null when it cannot be told yet.
   */
  lagMs: number | null
}

/** The WAL positions of one PostgreSQL server, as primary or standby. */
export class PgReplication {
  constructor(private readonly conn: PgConnection) {}

  /** The primary's WAL position now: every transaction committed before this call lies at or before it. */
  async walPosition(): Promise<bigint> {
    const { rows } = await this.conn.db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')
    return parseLsn(rows[0]!.lsn)!
  }

  /** How far this standby has replayed its primary's WAL. */
  async replayState(): Promise<ReplayState> {
    const { rows } = await this.conn.db.query<{ standby: boolean; replayed: string | null; lag_ms: number | null }>(
      `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed,
              CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                   ELSE (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8
              END AS lag_ms`,
    )
    const row = rows[0]!
    return {
      standby: row.standby,
      replayed: row.replayed === null ? null : parseLsn(row.replayed),
      lagMs: row.standby && row.lag_ms !== null ? Math.max(0, Math.round(row.lag_ms)) : row.standby ? null : 0,
    }
  }
}
