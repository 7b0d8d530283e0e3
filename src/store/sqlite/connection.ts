import { FlakewatchError, StoreError } from '../../errors.js'
import type { SqliteDb, SqliteStatement } from './driver.js'

/** Message texts kept in memory between reads: failure messages repeat, so a few thousand cover most scans. */
const MESSAGE_CACHE = 50_000

/**
 * One SQLite connection and what every concern of the store shares on it: the queue of this process's writes,
 * the prepared small reads, the message texts read so far, and how failures are named.
 */
export class SqliteConnection {
  private writing: Promise<unknown> = Promise.resolve()
  /** The server's small reads, prepared once: preparing costs more than running them. */
  private readonly reads = new Map<string, SqliteStatement>()
  private readonly messageCache = new Map<number, string>()
  private readonly messageText: SqliteStatement

  constructor(
    readonly db: SqliteDb,
    readonly location: string,
    /** Opened read-only: every write fails in the driver. */
    readonly readOnly = false,
  ) {
    this.messageText = db.prepare('SELECT text FROM messages WHERE id = ?').pluck()
  }

  /** Write operations of this process, one after another: an open ingest transaction spans awaits. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.writing.then(fn, fn)
    this.writing = next.catch(() => undefined)
    return next
  }

  wrap(what: string, error: unknown): Error {
    // Parse and limit errors raised while the stream was read keep their code (exit 2, HTTP 422).
    if (error instanceof FlakewatchError) return error
    return new StoreError(`${what} failed on ${this.location}: ${(error as Error).message}`, { cause: error })
  }

  /** A prepared statement kept for reuse; only for `get`/`all` (a statement being iterated cannot run again). */
  read(sql: string): SqliteStatement {
    let stmt = this.reads.get(sql)
    if (!stmt) {
      stmt = this.db.prepare(sql)
      // Bounded: the SQL varies only with which filters are set.
      if (this.reads.size < 200) this.reads.set(sql, stmt)
    }
    return stmt
  }

  /** The text of a stored message, from the cache or one read. */
  messageById(id: number | null): string | null {
    if (id === null) return null
    let text = this.messageCache.get(id)
    if (text === undefined) {
      text = (this.messageText.get(id) as string | undefined) ?? ''
      if (this.messageCache.size > MESSAGE_CACHE) this.messageCache.clear()
      this.messageCache.set(id, text)
    }
    return text
  }
}
