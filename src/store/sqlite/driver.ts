/**
 * The slice of better-sqlite3 that flakewatch uses, typed structurally so that the driver is loaded with
 * `await import()` only when SQLite is the chosen backend.
 */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint }
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  iterate(...params: unknown[]): IterableIterator<unknown>
  raw(toggle?: boolean): SqliteStatement
  pluck(toggle?: boolean): SqliteStatement
}

export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R
  immediate(...args: A): R
}

export interface SqliteDb {
  prepare(sql: string): SqliteStatement
  exec(sql: string): void
  pragma(sql: string, opts?: { simple?: boolean }): unknown
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>
  close(): void
  readonly open: boolean
  readonly inTransaction: boolean
}

export type SqliteConstructor = new (
  file: string,
  opts?: { timeout?: number; readonly?: boolean; fileMustExist?: boolean },
) => SqliteDb

export async function loadSqlite(): Promise<SqliteConstructor> {
  const mod = (await import('better-sqlite3')) as unknown as { default: SqliteConstructor }
  return mod.default
}
