import type { Fingerprint, HealFilter, HealRecord, HealStore } from '../store.js'
import type { SqliteConnection } from './connection.js'

/** Fingerprints and the heal log of a SQLite store. */
export class SqliteHeal implements HealStore {
  constructor(private readonly conn: SqliteConnection) {}

  putFingerprint(fp: Fingerprint): Promise<void> {
    return this.conn.serial(() => this.putFingerprintNow(fp))
  }

  private putFingerprintNow(fp: Fingerprint): Promise<void> {
    this.conn.db
      .prepare('INSERT OR REPLACE INTO fingerprints (test_id, locator, data, updated_at) VALUES (?, ?, ?, ?)')
      .run(fp.testId, fp.locator, JSON.stringify(fp.data), fp.updatedAt)
    return Promise.resolve()
  }

  getFingerprint(testId: string, locator: string): Promise<Fingerprint | null> {
    const row = this.conn.db
      .prepare('SELECT data, updated_at FROM fingerprints WHERE test_id = ? AND locator = ?')
      .get(testId, locator) as { data: string; updated_at: string } | undefined
    return Promise.resolve(
      row ? { testId, locator, data: JSON.parse(row.data) as unknown, updatedAt: row.updated_at } : null,
    )
  }

  appendHeal(heal: HealRecord): Promise<void> {
    return this.conn.serial(() => this.appendHealNow(heal))
  }

  private appendHealNow(heal: HealRecord): Promise<void> {
    this.conn.db
      .prepare(
        `INSERT INTO heal_log (test_id, old_locator, new_locator, score, breakdown, url, at, run_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        heal.testId,
        heal.oldLocator,
        heal.newLocator,
        heal.score,
        JSON.stringify(heal.breakdown),
        heal.url,
        heal.at,
        heal.runId,
      )
    return Promise.resolve()
  }

  listHeals(filter: HealFilter = {}): Promise<HealRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.testId) {
      where.push('test_id = ?')
      params.push(filter.testId)
    }
    if (filter.since) {
      where.push('at >= ?')
      params.push(filter.since)
    }
    const rows = this.conn.db
      .prepare(`SELECT * FROM heal_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`)
      .all(...params, filter.limit ?? -1) as {
      id: number
      test_id: string
      old_locator: string
      new_locator: string
      score: number
      breakdown: string
      url: string | null
      at: string
      run_id: string | null
    }[]
    return Promise.resolve(
      rows.map((r) => ({
        id: r.id,
        testId: r.test_id,
        oldLocator: r.old_locator,
        newLocator: r.new_locator,
        score: r.score,
        breakdown: JSON.parse(r.breakdown) as Record<string, number>,
        url: r.url,
        at: r.at,
        runId: r.run_id,
      })),
    )
  }
}
