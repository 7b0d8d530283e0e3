import { markRunsStaleSqlite } from './analyses.js'
import type { MaintenanceOutcome, RetentionStore } from '../store.js'
import type { SqliteConnection } from './connection.js'

/** Retention in a SQLite store: old runs deleted in batches. */
export class SqliteRetention implements RetentionStore {
  constructor(private readonly conn: SqliteConnection) {}

  prune(before: number, opts: { batchSize?: number } = {}): Promise<{ runs: number; results: number }> {
    return this.conn.serial(() => this.pruneNow(before, opts))
  }

  /** One table per concern, with nothing partitioned: nothing to keep up. */
  maintain(): Promise<MaintenanceOutcome> {
    return Promise.resolve({ days: 0, moved: 0, failed: 0, error: null })
  }

  private async pruneNow(before: number, opts: { batchSize?: number }): Promise<{ runs: number; results: number }> {
    const batch = opts.batchSize ?? 50
    const pick = this.conn.db.prepare('SELECT id FROM runs WHERE at < ? ORDER BY at LIMIT ?').pluck()
    const stmts = [
      this.conn.db.prepare('DELETE FROM attempts WHERE run = ?'),
      this.conn.db.prepare('DELETE FROM reports WHERE run = ?'),
      this.conn.db.prepare('DELETE FROM run_timings WHERE run = ?'),
      this.conn.db.prepare('DELETE FROM runs WHERE id = ?'),
    ]
    const delResults = this.conn.db.prepare('DELETE FROM results WHERE run = ?')
    let runs = 0
    let results = 0
    for (;;) {
      const ids = pick.all(before, batch) as number[]
      if (ids.length === 0) break
      this.conn.db
        .transaction(() => {
          // Before the delete, in its transaction: the rows of the tests that lose results are analysed again.
          markRunsStaleSqlite(this.conn.db, ids)
          for (const id of ids) {
            results += delResults.run(id).changes
            for (const s of stmts) s.run(id)
          }
        })
        .immediate()
      runs += ids.length
      // Yield between batches so that other work (and other processes' writers) get a turn.
      await new Promise((r) => setImmediate(r))
    }
    return { runs, results }
  }
}
