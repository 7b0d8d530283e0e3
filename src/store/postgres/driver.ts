/**
 * The slice of `pg` and `pg-copy-streams` that flakewatch uses, typed structurally so that both are loaded with
 * `await import()` only when PostgreSQL is the chosen backend.
 */

export interface PgQueryConfig {
  text: string
  values?: unknown[]
  rowMode?: 'array'
}

export interface PgResult<R> {
  rows: R[]
  rowCount: number | null
}

/** A COPY stream: pg hands it the connection instead of running it as a query. */
export interface PgSubmittable {
  submit(connection: unknown): void
}

export interface PgCopyInStream extends NodeJS.WritableStream, PgSubmittable {
  rowCount: number
}

export interface PgQueryable {
  query<R = Record<string, unknown>>(query: string | PgQueryConfig, values?: unknown[]): Promise<PgResult<R>>
}

export interface PgClient extends PgQueryable {
  query<S extends PgSubmittable>(stream: S): S
  query<R = Record<string, unknown>>(query: string | PgQueryConfig, values?: unknown[]): Promise<PgResult<R>>
  /** Returns the client to its pool; passing an error (or true) destroys it instead. */
  release(destroy?: boolean | Error): void
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}

export type PgTypeParser = (value: string) => unknown

export interface PgPoolConfig {
  connectionString: string
  /** Server options sent at connection start, e.g. `-c search_path=x`. */
  options?: string
  max?: number
  idleTimeoutMillis?: number
  connectionTimeoutMillis?: number
  application_name?: string
  types?: { getTypeParser(oid: number, format?: string): PgTypeParser }
}

export interface PgDriver {
  Pool: new (config: PgPoolConfig) => PgPool
  getTypeParser: (oid: number, format?: string) => PgTypeParser
  copyFrom: (sql: string) => PgCopyInStream
}

interface PgModule {
  Pool: PgDriver['Pool']
  types: { getTypeParser(oid: number, format?: string): PgTypeParser }
}

export async function loadPg(): Promise<PgDriver> {
  const [pg, copy] = await Promise.all([
    import('pg') as unknown as Promise<{ default: PgModule }>,
    import('pg-copy-streams') as unknown as Promise<{ default: { from(sql: string): PgCopyInStream } }>,
  ])
  return {
    Pool: pg.default.Pool,
    getTypeParser: (oid, format) => pg.default.types.getTypeParser(oid, format),
    copyFrom: (sql) => copy.default.from(sql),
  }
}
