import { markRunsStalePg } from './analyses.js'
import type { RetentionStore } from '../store.js'
import type { PgConnection } from './connection.js'

/** Retention in a PostgreSQL store: old runs deleted in batches. */
export class PgRetention implements RetentionStore {
  constructor(private readonly conn: PgConnection) {}

  async prune(before: number, opts: { batchSize?: number } = {}): Promise<{ runs: number; results: number }> {
    const batchSize = opts.batchSize ?? 50
    let runs = 0
    let results = 0
    try {
      for (;;) {
        const removed = await this.conn.transaction(async (client) => {
          // SKIP LOCKED: a run being merged right now is left for the next prune instead of blocking on it.
          const { rows } = await client.query<{ id: number }>(
            'SELECT id FROM runs WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED',
            [before, batchSize],
          )
          const ids = rows.map((r) => r.id)
          if (ids.length === 0) return null
          // Before the delete, in its transaction: the rows of the tests that lose results are analysed again.
          await markRunsStalePg(client, ids)
          const res = await client.query('DELETE FROM results WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM attempts WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM reports WHERE run = ANY($1::integer[])', [ids])
          await client.query('DELETE FROM runs WHERE id = ANY($1::integer[])', [ids])
          return { runs: ids.length, results: res.rowCount ?? 0 }
        })
        if (!removed) break
        runs += removed.runs
        results += removed.results
      }
    } catch (error) {
      throw this.conn.wrap('prune', error)
    }
    return { runs, results }
  }
}
