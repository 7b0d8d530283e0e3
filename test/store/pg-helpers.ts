import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { quoteIdent } from '../../src/store/postgres/migrations.js'

/**
 * Where the PostgreSQL tests find their server. Locally, an unset or unreachable server skips them with the reason
 * in the test name; under CI it fails the run, because a silently skipped backend is an untested backend.
 */
export type TestPg = { url: string; skip?: undefined } | { url?: undefined; skip: string }

export async function resolveTestPg(env = process.env): Promise<TestPg> {
  const url = env.FLAKEWATCH_TEST_PG
  const ci = env.CI === 'true' || env.CI === '1'
  if (!url) {
    const reason = 'FLAKEWATCH_TEST_PG is not set (e.g. postgres://postgres@127.0.0.1:5432/test)'
    if (ci) throw new Error(`PostgreSQL tests cannot run under CI: ${reason}`)
    return { skip: reason }
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return { url }
  } catch (error) {
    const reason = `PostgreSQL at ${url.replace(/:[^:@/]*@/, '@')} is unreachable: ${(error as Error).message}`
    if (ci) throw new Error(`PostgreSQL tests cannot run under CI: ${reason}`, { cause: error })
    return { skip: reason }
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * Where the read-replica tests find a streaming replica of the test server (`.ci/run` starts one with
 * `.ci/pg-replica` and sets `FLAKEWATCH_TEST_PG_REPLICA`). As for the primary: skipped locally when unset or
 * unreachable, a failure under CI. A server that is not a standby is not a replica, and is refused the same way.
 */
export async function resolveTestPgReplica(env = process.env): Promise<TestPg> {
  const url = env.FLAKEWATCH_TEST_PG_REPLICA
  const ci = env.CI === 'true' || env.CI === '1'
  const refuse = (reason: string, cause?: unknown): TestPg => {
    if (ci) throw new Error(`read-replica tests cannot run under CI: ${reason}`, { cause })
    return { skip: reason }
  }
  if (!url) return refuse('FLAKEWATCH_TEST_PG_REPLICA is not set (e.g. postgres://postgres@127.0.0.1:5433/test)')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')
    if (!rows[0]!.standby)
      return refuse(`${url.replace(/:[^:@/]*@/, '@')} is not a standby (pg_is_in_recovery() is false)`)
    return { url }
  } catch (error) {
    return refuse(`the replica at ${url.replace(/:[^:@/]*@/, '@')} is unreachable: ${(error as Error).message}`, error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** Hands out fresh schema names on one server and drops them all at the end. */
export function schemas(url: string) {
  const made: string[] = []
  return {
    /** A URL whose store lives in its own new schema `fw_test_<random>`. */
    fresh(): string {
      const name = `fw_test_${randomBytes(6).toString('hex')}`
      made.push(name)
      const u = new URL(url)
      u.searchParams.set('schema', name)
      return u.toString()
    },
    async dropAll(): Promise<void> {
      if (made.length === 0) return
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        // One transaction per schema: each holds a lock per table, index and partition it drops until it commits,
        // and all of a file's schemas at once could fill the server's lock table for every other connection.
        for (const s of made) await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(s)} CASCADE`)
      } finally {
        await client.end()
      }
      made.length = 0
    },
  }
}

/** A plain connection (outside any store) on the schema a flakewatch URL names; the caller ends it. */
export async function connectTo(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: withoutSchema(url), options: searchPath(url) })
  await client.connect()
  return client
}

/** One query on a plain connection (outside any store), for assertions against the schema itself. */
export async function sql<R = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = await connectTo(url)
  try {
    return (await client.query<R & pg.QueryResultRow>(text, values)).rows
  } finally {
    await client.end()
  }
}

/** The URL `pg` itself may be given: flakewatch's `?schema=` is not a libpq parameter. */
export function withoutSchema(url: string): string {
  const u = new URL(url)
  u.searchParams.delete('schema')
  return u.toString()
}

export function searchPath(url: string): string | undefined {
  const schema = new URL(url).searchParams.get('schema')
  return schema ? `-c search_path=${schema}` : undefined
}

const root = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)

/**
 * Compiles the PostgreSQL store (and only what it imports) to `test/.tmp/pg-dist`, for tests that run it in child
 * processes. Building just this slice keeps the test independent of unfinished work elsewhere in `src/` and of
 * other test files writing `dist/` at the same time.
 */
export async function buildPgStore(): Promise<string> {
  const out = join(root, 'test', '.tmp', 'pg-dist')
  await run(
    process.execPath,
    [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--outDir',
      out,
      '--rootDir',
      join(root, 'src'),
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--strict',
      '--skipLibCheck',
      '--types',
      'node',
      join(root, 'src', 'store', 'postgres', 'postgres-store.ts'),
    ],
    { cwd: root },
  )
  const entry = join(out, 'store', 'postgres', 'postgres-store.js')
  if (!existsSync(entry)) throw new Error(`build did not produce ${entry}`)
  return entry
}
