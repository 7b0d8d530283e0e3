import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { resolveAnalysisConfig } from '../analysis/index.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import { NotFoundError } from '../errors.js'
import { createQuarantineManager } from '../quarantine/manager.js'
import type { Store } from '../store/store.js'
import { API_PREFIX, type ProjectListResponse, type ProjectOverview } from './api-types.js'
import { readHook, resolveAuthTokens } from './auth.js'
import type { ServerContext } from './context.js'
import { ownerLookupFromConfig } from '../owners/read-codeowners.js'
import { dashboardRoutes, findWebRoot } from './dashboard.js'
import { handleError } from './error-handler.js'
import { bundleStreamKind } from './bundle-stream.js'
import { answerClientError, SECURITY_HEADERS } from './security-headers.js'
import { bundleRoutes } from './routes/bundle.js'
import { healthRoutes } from './routes/health.js'
import { heatmapRoutes } from './routes/heatmap.js'
import { impactRoutes } from './routes/impact.js'
import { kioskRoutes } from './routes/kiosk.js'
import { mcpRoutes } from './routes/mcp.js'
import { leaderboardRoutes } from './routes/leaderboard.js'
import { policyRoutes } from './routes/policy.js'
import { quarantineRoutes } from './routes/quarantine.js'
import { ruleRoutes } from './routes/rules.js'
import { reportRoutes } from './routes/reports.js'
import { runRoutes } from './routes/runs.js'
import { testRoutes } from './routes/tests.js'
import { trendRoutes } from './routes/trends.js'
import type { LookReport, LookRequest } from '../notify/look.js'
import { startAnalysisSweep } from './analysis-sweep.js'
import { startMaintenance } from './maintenance.js'
import { startNotifier, type Notifier } from './notifier.js'
import { AnalysisStoppedError, createSnapshotBuilder } from './snapshot-builder.js'
import { createSnapshotCache, type SnapshotCacheOptions } from './snapshot-cache.js'
import { UploadPool } from './upload-pool.js'
import { drainUnreadBody } from './unread-body.js'
import { installReadRouting } from './read-routing.js'
import { PersistedReads } from './persisted-reads.js'
import { projectOverview } from './project-overview.js'
import type { ReadReplica } from './read-replica.js'

export interface AppDeps {
  store: Store
  config: ResolvedConfig
  /** Fastify's pino logger: `true`, options, or `false` (the default: quiet, as tests want). */
  logger?: FastifyServerOptions['logger']
  /**
   * The level of the one log line per answered request (method, url, status, ms), instead of Fastify's two (request
   * in, response out) at info. Default `debug`: a page tour is dozens of requests, so they show only when asked for
   * (`FLAKEWATCH_LOG_LEVEL=debug`, or `serve --log-requests`, which logs them at `info`).
   */
  requestLogLevel?: 'debug' | 'info'
  /**
   * The store's location (SQLite file or postgres:// URL). With it, analysis snapshots are built in a worker
   * thread on a connection of their own, so that a rebuild never stalls the API.
   */
  db?: string
  /** Build snapshots in a worker thread when `db` allows it. Default true. */
  analysisWorker?: boolean
  /** Parse and store uploads in worker threads when `db` allows it. Default true. */
  uploadWorkers?: boolean
  /** A second connection for long scans on this thread (the bundle, in-process builds). */
  scanStore?: Store
  /**
   * The clock. Without it, analysis windows end at the newest stored run of each selection (as the CLI's do), and
   * wall-clock time serves for quarantine expiry, artifact retention and days without failures.
   */
  now?: () => number
  /** The built dashboard folder; `null` serves none. Default: `dist/web`, when built. */
  webRoot?: string | null
  /** Runs older than this have probably lost their CI artifacts; the heatmap dims them. Default 30. */
  artifactExpiryDays?: number
  cache?: Pick<SnapshotCacheOptions, 'ttlMs' | 'probeMs' | 'maxAgeMs' | 'maxEntries' | 'clock'>
  /**
   * Look for notification state changes every `notifications.intervalSeconds` while the app runs, as `serve` does
   * (docs/notifications.md), where analysis snapshots are built: in the worker thread when there is one, so that
   * the whole-store analysis of a look never blocks a request. Without it, or without webhooks, the app never looks.
   */
  /** The project key on a multi-project server (links in MCP answers and tickets); null or absent otherwise. */
  project?: string | null
  /**
   * The background sweep of the persisted analyses (`analysis-sweep.ts`): on unless false; its timing can be set
   * (tests). A read-only instance has nothing to sweep with.
   */
  analysisSweep?: false | { intervalMs?: number; firstAfterMs?: number }
  /**
   * A streaming replica for reads (`serve --read-db`): API reads go there, writes and the analysis cache's own reads
   * to `store`, the primary (docs/scaling.md#read-replicas). The app closes it.
   */
  replica?: ReadReplica
  notify?: {
    /** Where the webhooks' `urlEnv` and `secretEnv` are read. */
    env: Record<string, string | undefined>
    /** The project key every payload carries (multi-project servers). */
    project?: string | null
    onReport?: (report: LookReport) => void
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where analysis snapshots are built: a worker thread, or this one. */
    flakewatchAnalysis: 'worker' | 'in-process'
    /** Where uploads are parsed and stored: worker threads, or this one. */
    flakewatchUploads: 'worker' | 'in-process'
    /** This store's figures for the organisation overview, from its persisted analyses. */
    flakewatchOverview: () => Promise<ProjectOverview>
    /** Where bundle downloads are written: a worker thread each, or this one. */
    flakewatchBundles: 'worker' | 'in-process'
  }
}

/**
 * The HTTP server: the REST API under `/api/v1`, `/healthz`, and the dashboard. Not listening yet: call
 * `listen()`, or `inject()` in tests. Holds no state that changes answers besides the analysis cache, so
 * several instances can serve one store.
 * @example const app = await createApp({ store, config: loadConfig() }); await app.listen({ port: 8080 })
 */
export async function createApp(deps: AppDeps): Promise<FastifyInstance> {
  const { store, config } = deps
  const bodyLimit = Math.round(config.server.bodyLimitMb * 1024 * 1024)
  const app = Fastify({
    logger: deps.logger ?? false,
    // Through a controller: fastify 5.12 deprecates the top-level option and warns on every `flakewatch serve`.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    // Test ids are long and carry any character; the default 100-character parameter limit would cut them.
    routerOptions: { maxParamLength: 2000, ignoreTrailingSlash: true },
    // Errors raised before routing (a malformed URL) skip the error handler and the hooks unless routed here.
    frameworkErrors: (error, request, reply) => {
      handleError(error, request, reply)
    },
    clientErrorHandler: answerClientError,
  })
  const now = deps.now ?? Date.now
  const analysis = resolveAnalysisConfig(analysisOptions(config))
  const builder = createSnapshotBuilder({
    store,
    scanStore: deps.scanStore,
    cfg: analysis,
    db: deps.db,
    worker: deps.analysisWorker,
  })
  const uploads = new UploadPool({
    store,
    db: deps.db,
    capacity: config.server.uploadQueue,
    workers: config.server.uploadWorkers,
    worker: deps.uploadWorkers,
    refresh: (runIds, maxRows) => builder.refresh({ runIds, maxRows }),
  })
  const notifier = startAppNotifier(deps, (request) => builder.look(request))
  const maintenance = startMaintenance({
    store,
    now,
    onReport: (o) => {
      if (o.failed) app.log.warn({ days: o.failed, error: o.error }, 'store maintenance left days for the next try')
    },
  })
  app.addHook('onClose', () => maintenance.stop())
  const sweep =
    deps.analysisSweep === false
      ? null
      : startAnalysisSweep({
          // In the analysis worker thread, beside builds: never on the thread that answers requests.
          refresh: (chunk) => builder.refresh(deps.now ? { ...chunk, clock: deps.now() } : chunk),
          ...deps.analysisSweep,
          onReport: (r) => {
            if (r.error instanceof AnalysisStoppedError) return
            if (r.error !== null)
              app.log.warn({ error: r.error.message }, 'the analysis sweep failed; it will try again')
            else app.log.debug({ claimed: r.claimed, written: r.written }, 'analysis sweep')
          },
        })
  // Every accepted upload is stored before the app reports closed; it, a look or a sweep in flight may use the
  // builder's worker (an upload stored on this thread has its tests re-analysed there): they end first.
  app.addHook('onClose', async () => {
    await uploads.close()
    await sweep?.stop()
    await notifier?.stop()
    await builder.close()
  })
  const requestLevel = deps.requestLogLevel ?? 'debug'
  app.addHook('onResponse', (request, reply, done) => {
    const ms = Math.round(reply.elapsedTime)
    request.log[requestLevel]({ method: request.method, url: request.url, status: reply.statusCode, ms }, 'request')
    done()
  })
  app.decorate('flakewatchAnalysis', builder.kind)
  app.decorate('flakewatchUploads', uploads.kind)
  app.decorate('flakewatchOverview', () => projectOverview(ctx))
  app.decorate('flakewatchBundles', bundleStreamKind(deps.db))
  const routing = deps.replica ? installReadRouting(app, store, deps.replica) : null
  const ctx: ServerContext = {
    store: routing?.store ?? store,
    scanStore: deps.scanStore ?? store,
    db: deps.db,
    config,
    analysis,
    tokens: resolveAuthTokens(config.server),
    cache: createSnapshotCache({
      store,
      builder,
      now: deps.now,
      ...deps.cache,
      fresh: routing ? () => routing.choice()?.pinned === true : undefined,
      onError: (error) => {
        if (!(error instanceof AnalysisStoppedError)) app.log.error({ err: error }, 'background analysis failed')
      },
    }),
    reads: new PersistedReads({
      store: () => routing?.store ?? store,
      cfg: analysis,
      now: deps.now,
      refresh: (ask) => builder.refresh(ask),
      ttlMs: deps.cache?.ttlMs,
      fresh: routing ? () => routing.choice()?.pinned === true : undefined,
      onError: (error) => {
        if (!(error instanceof AnalysisStoppedError)) app.log.warn({ err: error }, 'a read could not refresh analyses')
      },
    }),
    quarantine: createQuarantineManager({
      // Its reads follow the request's choice too; its writes always reach the primary.
      store: routing?.store ?? store,
      policy: config.quarantine,
      now,
      defaultOwner: config.quarantine.owner,
    }),
    now,
    artifactExpiryDays: deps.artifactExpiryDays ?? 30,
    bodyLimit,
    uploads,
    owners: ownerLookupFromConfig(config, process.cwd(), (m) => app.log.warn(m)),
    notifier: notifier ? () => notifier.status() : null,
    project: deps.project ?? deps.notify?.project ?? null,
    replica: deps.replica ?? null,
  }

  app.decorateRequest('flakewatchActor', null)
  app.setErrorHandler(handleError)
  const webRoot = deps.webRoot === undefined ? findWebRoot() : deps.webRoot
  app.setNotFoundHandler((request, reply) => {
    // A person who mistypes a dashboard address gets the dashboard's own "no such page", with a 404 status;
    // API clients and everything that does not ask for HTML keep the JSON error.
    const path = request.url.split('?')[0]!
    if (webRoot && request.method === 'GET' && !path.startsWith(API_PREFIX) && acceptsHtml(request.headers.accept)) {
      return reply.code(404).header('cache-control', 'no-cache').sendFile('index.html')
    }
    throw new NotFoundError(`no route ${request.method} ${path}`)
  })
  app.addHook('onSend', async (request, reply, payload) => {
    drainUnreadBody(request, reply)
    void reply.headers(SECURITY_HEADERS)
    if (request.url.startsWith(API_PREFIX) && !reply.hasHeader('cache-control')) {
      void reply.header('cache-control', 'no-store')
    }
    return payload
  })

  healthRoutes(app, ctx)
  // A single-project server has no projects: said openly, so that the dashboard shows no switcher and asks for
  // no token to learn it. A multi-project server answers this path itself (server/projects.ts).
  app.get(`${API_PREFIX}/projects`, (): ProjectListResponse => ({ default: null, projects: [] }))
  await app.register(
    async (api) => {
      api.addHook('onRequest', readHook(ctx.tokens))
      leaderboardRoutes(api, ctx)
      heatmapRoutes(api, ctx)
      trendRoutes(api, ctx)
      impactRoutes(api, ctx)
      kioskRoutes(api, ctx)
      runRoutes(api, ctx)
      testRoutes(api, ctx)
      quarantineRoutes(api, ctx)
      ruleRoutes(api, ctx)
      policyRoutes(api, ctx)
      bundleRoutes(api, ctx)
      await api.register(async (scope) => reportRoutes(scope, ctx))
    },
    { prefix: API_PREFIX },
  )
  mcpRoutes(app, ctx)
  await dashboardRoutes(app, webRoot)
  return app
}

function startAppNotifier(deps: AppDeps, look: (request: LookRequest) => Promise<LookReport>): Notifier | null {
  const { config, notify } = deps
  const intervalMs = config.notifications.intervalSeconds * 1000
  if (!notify || (config.notifications.webhooks.length === 0 && !config.tickets) || intervalMs === 0) return null
  // Plain data only: the request crosses to the worker thread.
  const request: LookRequest = { config, env: { ...notify.env }, project: notify.project ?? null, cwd: process.cwd() }
  return startNotifier({ intervalMs, look: () => look(request), onReport: notify.onReport ?? (() => undefined) })
}

/** Whether a request's Accept header asks for an HTML page, as a browser's navigation does. */
function acceptsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/html\s*(;|,|$)/.test(accept)
}
