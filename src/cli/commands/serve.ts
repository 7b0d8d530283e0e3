import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { loadConfig, type ResolvedConfig } from '../../config/load.js'
import { printConfigWarnings } from '../project-option.js'
import { InputError } from '../../errors.js'
import { createApp } from '../../server/app.js'
import { SERVER_CACHE_MB } from '../../server/memory-settings.js'
import { DEFAULT_DB, isPostgresUrl, openStore } from '../../store/open.js'
import type { ReadReplica } from '../../server/read-replica.js'
import type { PostgresStore } from '../../store/postgres/postgres-store.js'
import type { Store } from '../../store/store.js'
import type { Io } from '../output.js'
import { printLook } from './notify.js'

export interface ServeOptions {
  db?: string
  host?: string
  port?: string | number
  config?: string
  /** Days after which a run's CI artifacts are assumed gone (the heatmap dims them). Default 30. */
  artifactDays?: string | number
  /** Start an empty store when the default one does not exist (without it, that is an error). */
  init?: boolean
  /** Log every request at `info` (default: at `debug`). */
  logRequests?: boolean
  /** A streaming replica's postgres:// URL: API reads go there (default: `FLAKEWATCH_READ_DB`, else none). */
  readDb?: string
}

export interface ServeHooks {
  /** Stops the server, as a signal would (for tests and embedding). */
  signal?: AbortSignal
  onListening?: (url: string) => void
}

export interface ServeResult {
  url: string
  /** What stopped the server. */
  stoppedBy: 'SIGINT' | 'SIGTERM' | 'abort'
}

function parsePort(value: string | number): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InputError(`--port must be 0–65535, got "${value}"`)
  }
  return port
}

function parseDays(value: string | number | undefined): number {
  if (value === undefined) return 30
  const days = Number(value)
  if (!Number.isFinite(days) || days <= 0) {
    throw new InputError(`--artifact-days must be a positive number, got "${value}"`)
  }
  return days
}

/** pino's levels, quietest last; `FLAKEWATCH_LOG_LEVEL` takes one of them. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

/**
 * The server's logger: pino's JSON lines on stderr at `FLAKEWATCH_LOG_LEVEL` (default `info`), one shape for every
 * line, requests included (at `debug`, or at `info` with `--log-requests`).
 */
export function serverLogger(opts: ServeOptions, io: Io) {
  const level = io.env.FLAKEWATCH_LOG_LEVEL || 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new InputError(`FLAKEWATCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`)
  }
  return {
    logger: { level, stream: io.stderr },
    requestLogLevel: opts.logRequests ? ('info' as const) : ('debug' as const),
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/**
 * `serve` in the wrong folder must not quietly start an empty dashboard on a new `.flakewatch.db`: the default
 * store is created only with `--init`. A path the user named (`--db`, `FLAKEWATCH_DB`, the config's `db`) is theirs
 * to create.
 */
function refuseImplicitCreate(db: string, opts: ServeOptions, env: NodeJS.ProcessEnv): void {
  const named = opts.db !== undefined || env.FLAKEWATCH_DB !== undefined || db !== DEFAULT_DB
  if (opts.init || named || existsSync(db)) return
  throw new InputError(
    `${db}: no flakewatch database here. Serve the store your CI writes (--db <file>), store reports first ` +
      '(flakewatch ingest <files>), or start an empty one with --init',
  )
}

/**
 * Serves the REST API and the dashboard until SIGINT or SIGTERM (or `hooks.signal`), then closes the server and
 * the store cleanly. Prints the URL on stdout, notes on stderr, and request logs (JSON) on stderr.
 * @example const { stoppedBy } = await serve({ port: 8080 }, processIo())
 */
export async function serve(opts: ServeOptions, io: Io, hooks: ServeHooks = {}): Promise<ServeResult> {
  const config = loadConfig({ file: opts.config, env: io.env })
  printConfigWarnings(config, io)
  const db = opts.db ?? config.db
  const host = opts.host ?? config.server.host
  const port = parsePort(opts.port ?? config.server.port)
  const artifactExpiryDays = parseDays(opts.artifactDays)
  const readDb = opts.readDb ?? (io.env.FLAKEWATCH_READ_DB || undefined)
  if (Object.keys(config.projects).length > 0) {
    if (readDb) throw new InputError('--read-db serves one store; a server with projects has one per project')
    return serveProjects(config, { host, port }, opts, io, hooks)
  }
  if (readDb && !(isPostgresUrl(db) && isPostgresUrl(readDb))) {
    throw new InputError('--read-db needs PostgreSQL: both --db and --read-db must be postgres:// URLs')
  }
  refuseImplicitCreate(db, opts, io.env)
  const store = await openStore({ db, env: {}, cacheMb: SERVER_CACHE_MB.serving })
  const replica = readDb ? await openReplica(store, readDb, io) : undefined
  // Long scans on this thread (the bundle download) get their own connection; analysis runs in a worker with its own.
  const scanStore = db === ':memory:' ? undefined : await openStore({ db, env: {}, cacheMb: SERVER_CACHE_MB.serving })
  const closeStores = async () => {
    await scanStore?.close()
    await store.close()
  }
  let app
  try {
    app = await createApp({
      store,
      db,
      scanStore,
      config,
      artifactExpiryDays,
      replica,
      ...serverLogger(opts, io),
      notify: { env: io.env, onReport: printLook(io) },
    })
    await app.listen({ host, port })
  } catch (error) {
    if (app) await app.close()
    else await replica?.close()
    await closeStores()
    throw new InputError(`cannot serve on ${host}:${port}: ${(error as Error).message}`)
  }
  const bound = (app.server.address() as AddressInfo).port
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`
  io.stdout.write(`${url}\n`)
  io.stderr.write(`flakewatch: serving ${store.location} at ${url}\n`)
  if (!config.server.writeToken && Object.keys(config.server.writeTokens).length === 0) {
    io.stderr.write(
      'flakewatch: uploads and quarantine changes are refused: set FLAKEWATCH_WRITE_TOKENS (name:token,…) or ' +
        'FLAKEWATCH_WRITE_TOKEN\n',
    )
  }
  if (!config.server.readToken && !LOOPBACK.has(host)) {
    io.stderr.write(
      `flakewatch: reads are open to anyone who can reach ${host}; set FLAKEWATCH_READ_TOKEN to restrict them\n`,
    )
  }
  hooks.onListening?.(url)

  const stoppedBy = await waitForStop(hooks)
  io.stderr.write(`flakewatch: ${stoppedBy === 'abort' ? 'stopping' : `${stoppedBy}, stopping`}\n`)
  await app.close()
  await closeStores()
  return { url, stoppedBy }
}

/**
 * The replica beside the primary `store`. One look at it now, so that a wrong URL is said at start; a replica that
 * cannot be reached does not stop the server (reads go to the primary until it answers).
 */
async function openReplica(store: Store, url: string, io: Io): Promise<ReadReplica> {
  const [{ ReadReplica }, { openPostgresStore, resolvePostgresUrl }] = await Promise.all([
    import('../../server/read-replica.js'),
    import('../../store/postgres/postgres-store.js'),
  ])
  const location = resolvePostgresUrl(url).location
  const replica = new ReadReplica({
    primary: store as PostgresStore,
    location,
    // Its schema is the primary's, replayed: the open only checks it (a standby cannot migrate).
    open: () => openPostgresStore(url, { readOnly: true, connectTimeoutMs: 3000 }),
  })
  const health = await replica.health()
  io.stderr.write(
    health.reachable
      ? `flakewatch: reads from the replica ${location} (${health.lag_ms ?? '?'} ms behind)\n`
      : `flakewatch: the replica ${location} is not used for now (${health.error}); reads go to the primary\n`,
  )
  return replica
}

/** Until SIGINT, SIGTERM or the hooks' abort signal. */
function waitForStop(hooks: ServeHooks): Promise<ServeResult['stoppedBy']> {
  return new Promise<ServeResult['stoppedBy']>((resolve) => {
    const onInt = () => done('SIGINT')
    const onTerm = () => done('SIGTERM')
    const onAbort = () => done('abort')
    function done(why: ServeResult['stoppedBy']) {
      process.off('SIGINT', onInt)
      process.off('SIGTERM', onTerm)
      hooks.signal?.removeEventListener('abort', onAbort)
      resolve(why)
    }
    process.once('SIGINT', onInt)
    process.once('SIGTERM', onTerm)
    if (hooks.signal?.aborted) done('abort')
    else hooks.signal?.addEventListener('abort', onAbort)
  })
}

/**
 * Many repositories on one server (docs/projects.md): one store and one app per project, behind a front that routes
 * each request by its project and checks nothing itself but the organisation token.
 */
async function serveProjects(
  config: ResolvedConfig,
  where: { host: string; port: number },
  opts: ServeOptions,
  io: Io,
  hooks: ServeHooks,
): Promise<ServeResult> {
  const { createProjectEntry, createProjectsApp } = await import('../../server/projects.js')
  const stores: Store[] = []
  const closeStores = async () => {
    for (const s of stores) await s.close()
  }
  let app
  try {
    const entries = []
    for (const [key, project] of Object.entries(config.projects)) {
      const store = await openStore({ db: project.db, env: {}, cacheMb: SERVER_CACHE_MB.serving })
      stores.push(store)
      const deps = {
        ...serverLogger(opts, io),
        notify: { env: io.env, project: key, onReport: printLook(io, key) },
      }
      entries.push(await createProjectEntry({ key, project, store, config, app: deps }))
    }
    app = await createProjectsApp({
      projects: entries,
      defaultProject: config.server.defaultProject,
      orgToken: config.server.orgToken,
      bodyLimitMb: config.server.bodyLimitMb,
      logger: serverLogger(opts, io).logger,
    })
    await app.listen(where)
  } catch (error) {
    await app?.close()
    await closeStores()
    throw new InputError(`cannot serve on ${where.host}:${where.port}: ${(error as Error).message}`)
  }
  const bound = (app.server.address() as AddressInfo).port
  const url = `http://${where.host.includes(':') ? `[${where.host}]` : where.host}:${bound}/`
  io.stdout.write(`${url}\n`)
  io.stderr.write(`flakewatch: serving ${stores.length} projects at ${url}\n`)
  hooks.onListening?.(url)
  const stoppedBy = await waitForStop(hooks)
  io.stderr.write(`flakewatch: ${stoppedBy === 'abort' ? 'stopping' : `${stoppedBy}, stopping`}\n`)
  await app.close()
  await closeStores()
  return { url, stoppedBy }
}
