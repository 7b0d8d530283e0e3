import { FlakewatchError, StoreError } from '../../errors.js'
import type { PgClient, PgDriver, PgPool, PgQueryable, PgQueryConfig } from './driver.js'

/** Registers work to do only once the current transaction has committed. */
export type OnCommit = (f: () => void) => void

/**
 * One PostgreSQL pool and what every concern of the store shares on it: transactions, and how failures are
 * named.
 */
export class PgConnection {
  /** The pool, with its errors turned into StoreErrors that name the database, as every other failure here is. */
  readonly db: PgQueryable

  constructor(
    readonly driver: PgDriver,
    readonly pool: PgPool,
    readonly location: string,
  ) {
    this.db = {
      query: async <R>(query: string | PgQueryConfig, values?: unknown[]) => {
        try {
          return await pool.query<R>(query, values)
        } catch (error) {
          throw this.wrap('query', error)
        }
      },
    }
  }

  async transaction<T>(fn: (client: PgClient, onCommit: OnCommit) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    const committed: (() => void)[] = []
    try {
      await client.query('BEGIN')
      const value = await fn(client, (f) => committed.push(f))
      await client.query('COMMIT')
      client.release()
      for (const f of committed) f()
      return value
    } catch (error) {
      try {
        await client.query('ROLLBACK')
        client.release()
      } catch {
        client.release(true)
      }
      throw error
    }
  }

  wrap(what: string, error: unknown): Error {
    // Parse and limit errors raised while the stream was read keep their code (exit 2, HTTP 422).
    if (error instanceof FlakewatchError) return error
    return new StoreError(`${what} failed on ${this.location}: ${(error as Error).message}`, { cause: error })
  }
}
