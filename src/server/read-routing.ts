import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseLsn } from '../store/postgres/replication.js'
import type { Store } from '../store/store.js'
import { API_PREFIX } from './api-types.js'
import type { ReadChoice, ReadReplica } from './read-replica.js'

/** The header a write's answer carries its WAL position in, and a read presents it back in. */
export const WRITTEN_HEADER = 'x-flakewatch-written'
/** The cookie that carries the same position for browsers. */
export const WRITTEN_COOKIE = 'flakewatch_written'
/** On every answer read from the replica: how far it trails the primary, in ms. */
export const LAG_HEADER = 'x-flakewatch-replica-lag-ms'
/** On every routed read: `replica` or `primary`, where its store reads went. */
export const READ_FROM_HEADER = 'x-flakewatch-read-from'

/**
 * How long the cookie lives. A replica that has not replayed a write within it is far behind, and its lag header
 * says so; the cookie is for a user's next page, not a permanent pin to the primary.
 */
export const WRITTEN_COOKIE_SECONDS = 300

/**
 * Store methods that only read, and may be answered by the replica. Anything else (every write, and the reads
 * the analysis cache makes to follow writes) goes to the primary: a method missing here is slower, never wrong.
 */
const REPLICA_READS = new Set<string>([
  'getTestHistory',
  'heatCells',
  'getAttempts',
  'listRuns',
  'getRun',
  'runSummaries',
  'listTests',
  'getTest',
  'stats',
  'listQuarantines',
  'getQuarantine',
  'listAudit',
  'listQuarantineRules',
  'listRuleAudit',
  'listAuditLog',
  'listHeals',
  'getFingerprint',
])

/**
 * Reads of the persisted analyses (`store.analyses()`) that the replica may answer: the server's leaderboard,
 * kiosk, heatmap, trends and test detail (docs/server.md). Claims and writes of rows go to the primary.
 */
const REPLICA_ANALYSIS_READS = new Set<string>([
  'pageAnalyses',
  'countAnalyses',
  'dueAnalyses',
  'otherConfigAnalyses',
  'suiteHealth',
  'brokenSuites',
  'trendDays',
  'windowRuns',
  'windowTests',
  'countWindowTests',
  'windowFiles',
])

declare module 'fastify' {
  interface FastifyRequest {
    /** Where this request's reads go, for an API read on a server with a replica. */
    flakewatchRead: ReadChoice | null
    /** The primary's WAL position after this request's write, once a route has asked for it. */
    flakewatchWritten: string | null
  }
}

/**
 * The write position a request presents, in the header or the cookie (the later of the two); null when it
 * presents none, or nothing that reads as one.
 */
export function presentedPosition(headers: Record<string, string | string[] | undefined>): bigint | null {
  const candidates: string[] = []
  const header = headers[WRITTEN_HEADER]
  if (typeof header === 'string') candidates.push(header)
  const cookie = headers.cookie
  if (typeof cookie === 'string' && cookie.length <= 8192) {
    for (const part of cookie.split(';')) {
      const eq = part.indexOf('=')
      if (eq > 0 && part.slice(0, eq).trim() === WRITTEN_COOKIE) candidates.push(part.slice(eq + 1))
    }
  }
  let latest: bigint | null = null
  for (const c of candidates) {
    const lsn = parseLsn(c)
    if (lsn !== null && (latest === null || lsn > latest)) latest = lsn
  }
  return latest
}

/** The Set-Cookie value that hands a write position to a browser. */
export function writtenCookie(lsn: string): string {
  return `${WRITTEN_COOKIE}=${lsn}; Path=/; Max-Age=${WRITTEN_COOKIE_SECONDS}; SameSite=Lax; HttpOnly`
}

/**
 * The store the routes see. Reads named in {@link REPLICA_READS} go where the current request's choice says;
 * a replica read that fails is answered by the primary instead. Every other call goes to the primary, as does
 * every call made outside a routed request (the analysis cache's builds and probes, which follow writes).
 */
export class ReadRouting {
  private readonly current = new AsyncLocalStorage<ReadChoice>()
  readonly store: Store

  constructor(
    private readonly primary: Store,
    private readonly replica: ReadReplica,
  ) {
    const analyses = new Proxy(primary.analyses(), {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        if (typeof prop === 'string' && REPLICA_ANALYSIS_READS.has(prop)) {
          return (...args: unknown[]) => this.route((store) => call(store.analyses(), prop, args))
        }
        return (value as (...a: unknown[]) => unknown).bind(target)
      },
    })
    this.store = new Proxy(primary, {
      get: (target, prop) => {
        if (prop === 'analyses') return () => analyses
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        if (typeof prop === 'string' && REPLICA_READS.has(prop)) return (...args: unknown[]) => this.read(prop, args)
        return (value as (...a: unknown[]) => unknown).bind(target)
      },
    })
  }

  /** Runs `fn` (the rest of a request) with its reads going where `choice` says. */
  run<T>(choice: ReadChoice, fn: () => T): T {
    return this.current.run(choice, fn)
  }

  /** The current request's choice, if it is a routed one. */
  choice(): ReadChoice | undefined {
    return this.current.getStore()
  }

  private read(method: string, args: unknown[]): Promise<unknown> {
    return this.route((store) => call(store, method, args))
  }

  private route(read: (store: Store) => Promise<unknown>): Promise<unknown> {
    const choice = this.choice()
    const replica = this.replica.store
    if (choice?.from !== 'replica' || !replica) return read(this.primary)
    return read(replica).catch((error: unknown) => {
      // Reads are safe to repeat; the answer then says where it really came from.
      this.replica.failed(error)
      choice.from = 'primary'
      choice.lagMs = null
      return read(this.primary)
    })
  }
}

function call(target: object, method: string, args: unknown[]): Promise<unknown> {
  return (target[method as keyof typeof target] as (...a: unknown[]) => Promise<unknown>).apply(target, args)
}

function isApi(request: FastifyRequest): boolean {
  return request.url.startsWith(`${API_PREFIX}/`) || request.url === API_PREFIX
}

function isRead(request: FastifyRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD'
}

/**
 * Routes the app's API reads through a replica: each GET under the API chooses where its reads go (the replica,
 * unless the write position it presents is not replayed there yet), and says so in its answer; each successful
 * write answers the primary's WAL position, in a header and a cookie, for the client's next reads to present.
 */
export function installReadRouting(app: FastifyInstance, primary: Store, replica: ReadReplica): ReadRouting {
  const routing = new ReadRouting(primary, replica)
  app.decorateRequest('flakewatchRead', null)
  app.decorateRequest('flakewatchWritten', null)
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isApi(request) || !isRead(request)) {
      done()
      return
    }
    replica.choose(presentedPosition(request.headers)).then(
      (choice) => {
        request.flakewatchRead = choice
        // The rest of the request (its handler included) runs inside the choice.
        routing.run(choice, () => done())
      },
      (error: Error) => done(error),
    )
  })
  app.addHook('onSend', async (request, reply, payload) => {
    const choice = request.flakewatchRead
    if (choice) {
      void reply.header(READ_FROM_HEADER, choice.from)
      if (choice.from === 'replica')
        void reply.header(LAG_HEADER, choice.lagMs === null ? 'unknown' : String(choice.lagMs))
    } else if (isApi(request) && !isRead(request) && request.method !== 'OPTIONS' && reply.statusCode < 300) {
      const written = request.flakewatchWritten ?? (await replica.writtenPosition().catch(() => null))
      if (written) {
        void reply.header(WRITTEN_HEADER, written)
        void reply.header('set-cookie', writtenCookie(written))
      }
    }
    return payload
  })
  app.addHook('onClose', () => replica.close())
  return routing
}
