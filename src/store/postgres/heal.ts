import type { Fingerprint, HealFilter, HealRecord, HealStore } from '../store.js'
import type { PgConnection } from './connection.js'
import { Params } from './sql.js'

/** Fingerprints and the heal log of a PostgreSQL store. */
export class PgHeal implements HealStore {
  constructor(private readonly conn: PgConnection) {}

  async putFingerprint(fp: Fingerprint): Promise<void> {
    await this.conn.db.query(
      `INSERT INTO fingerprints (test_id, locator, data, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (test_id, locator) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at`,
      [fp.testId, fp.locator, JSON.stringify(fp.data), fp.updatedAt],
    )
  }

  async getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    const { rows } = await this.conn.db.query<{ data: unknown; updated_at: string }>(
      'SELECT data, updated_at FROM fingerprints WHERE test_id = $1 AND locator = $2',
      [testId, locator],
    )
    const row = rows[0]
    return row ? { testId, locator, data: row.data, updatedAt: row.updated_at } : null
  }

  async appendHeal(heal: HealRecord): Promise<void> {
    await this.conn.db.query(
      `INSERT INTO heal_log (test_id, old_locator, new_locator, score, breakdown, url, at, run_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        heal.testId,
        heal.oldLocator,
        heal.newLocator,
        heal.score,
        JSON.stringify(heal.breakdown),
        heal.url,
        heal.at,
        heal.runId,
      ],
    )
  }

  async listHeals(filter: HealFilter = {}): Promise<HealRecord[]> {
    const p = new Params()
    const where: string[] = []
    if (filter.testId) where.push(`test_id = ${p.add(filter.testId)}`)
    if (filter.since) where.push(`at >= ${p.add(filter.since)}`)
    const { rows } = await this.conn.db.query<{
      id: number
      test_id: string
      old_locator: string
      new_locator: string
      score: number
      breakdown: Record<string, number>
      url: string | null
      at: string
      run_id: string | null
    }>(
      `SELECT * FROM heal_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY id DESC LIMIT ${p.add(filter.limit ?? null)}`,
      p.values,
    )
    return rows.map((r) => ({
      id: r.id,
      testId: r.test_id,
      oldLocator: r.old_locator,
      newLocator: r.new_locator,
      score: r.score,
      breakdown: r.breakdown,
      url: r.url,
      at: r.at,
      runId: r.run_id,
    }))
  }
}
