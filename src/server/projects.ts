import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Readable } from 'node:stream'
import { HttpError } from './http-error.js'
import { handleError } from './error-handler.js'
import { answerClientError, SECURITY_HEADERS } from './security-headers.js'
import { drainUnreadBody } from './unread-body.js'
import { tokenMatches } from './auth.js'
import { createApp, type AppDeps } from './app.js'
import type { ResolvedConfig } from '../config/load.js'
import { projectConfig } from '../config/project-config.js'
import type { ProjectConfig } from '../config/defaults.js'
import type { Store } from '../store/store.js'
import type { OverviewResponse, ProjectListResponse, ProjectOverview } from './api-types.js'

export type { ProjectOverview }

/** One project of a multi-project server: its own app (store, tokens, analysis) and the tokens that reach it. */
export interface ProjectEntry {
  key: string
  app: FastifyInstance
  readToken: string
  writeTokens: string[]
  /** The project's figures for the organisation overview. */
  overview: () => Promise<ProjectOverview>
}

export interface ProjectsAppOptions {
  projects: ProjectEntry[]
  defaultProject: string | null
  /** Reads the project list and the overview across projects; null: no organisation view. */
  orgToken: string | null
  bodyLimitMb: number
  /** pino's options, as `createApp` takes them (each project's app logs its own requests). Default: quiet. */
  logger?: FastifyServerOptions['logger']
}

export const PROJECT_HEADER = 'x-flakewatch-project'

function bearer(request: FastifyRequest): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
  return m ? m[1]! : null
}

/** Hop-by-hop and length headers are the outer server's own business. */
const NOT_FORWARDED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

/**
 * A server for many repositories: each request goes to the app of the project it names (the `X-Flakewatch-Project`
 * header or `?project=`, else `defaultProject`), and that app checks the project's own tokens, so that a token
 * of one project can neither read nor write another. Stores stay separate, one per project, so test ids are
 * unique per project and a single-project store is used unchanged.
 */
export async function createProjectsApp(opts: ProjectsAppOptions): Promise<FastifyInstance> {
  const projects = new Map(opts.projects.map((p) => [p.key, p]))
  if (opts.defaultProject !== null && !projects.has(opts.defaultProject)) {
    throw new Error(`server.defaultProject "${opts.defaultProject}" is not one of the projects`)
  }
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: Math.round(opts.bodyLimitMb * 1024 * 1024),
    routerOptions: { maxParamLength: 2000, ignoreTrailingSlash: true },
    frameworkErrors: (error, request, reply) => {
      handleError(error, request, reply)
    },
    clientErrorHandler: answerClientError,
  })
  app.setErrorHandler(handleError)
  app.addHook('onSend', async (request, reply) => {
    drainUnreadBody(request, reply)
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) if (!reply.hasHeader(k)) void reply.header(k, v)
  })
  // Bodies pass through unread: the project's app parses (and limits) them as it always does.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))

  /** Which projects a token may see: all with the organisation token, else the one it belongs to. */
  const visibleTo = (token: string | null): ProjectEntry[] => {
    if (token === null) return []
    if (opts.orgToken !== null && tokenMatches(token, opts.orgToken)) return opts.projects
    return opts.projects.filter(
      (p) => tokenMatches(token, p.readToken) || p.writeTokens.some((w) => tokenMatches(token, w)),
    )
  }
  const requireOrg = (request: FastifyRequest) => {
    const token = bearer(request)
    if (opts.orgToken === null) {
      throw new HttpError(403, { code: 'FW_AUTH', message: 'no organisation token is set (server.orgToken)' })
    }
    if (token === null || !tokenMatches(token, opts.orgToken)) {
      throw new HttpError(401, { code: 'FW_AUTH', message: 'this needs the organisation token' })
    }
  }

  app.get('/api/v1/projects', (request, reply) => {
    const visible = visibleTo(bearer(request))
    if (visible.length === 0) throw new HttpError(401, { code: 'FW_AUTH', message: 'this needs a token' })
    const body: ProjectListResponse = { default: opts.defaultProject, projects: visible.map((p) => ({ key: p.key })) }
    return reply.send(body)
  })

  app.get('/api/v1/overview', async (request): Promise<OverviewResponse> => {
    requireOrg(request)
    const rows = []
    // One project at a time: each builds a full analysis, and the machine is shared with the uploads.
    for (const p of opts.projects) rows.push({ project: p.key, ...(await p.overview()) })
    rows.sort((a, b) => b.ci_time_lost_ms - a.ci_time_lost_ms || a.project.localeCompare(b.project))
    return { projects: rows }
  })

  app.all('/*', async (request, reply) => {
    const url = new URL(request.url, 'http://x')
    const named = request.headers[PROJECT_HEADER]
    // The dashboard's files are the same in every project: a page or asset that names none comes from any of them.
    const anyForFiles = url.pathname.startsWith('/api/') ? null : (opts.projects[0]?.key ?? null)
    const key =
      (Array.isArray(named) ? named[0] : named) ?? url.searchParams.get('project') ?? opts.defaultProject ?? anyForFiles
    if (!key) {
      throw new HttpError(400, {
        code: 'FW_PROJECT',
        message: `name the project: the ${PROJECT_HEADER} header or ?project=<key>`,
      })
    }
    // A dashboard page of a project that does not exist still loads: its API calls then say "no such project".
    const project = projects.get(key) ?? (anyForFiles === null ? undefined : projects.get(anyForFiles))
    if (!project) throw new HttpError(404, { code: 'FW_PROJECT', message: 'no such project' })
    url.searchParams.delete('project')
    const headers = { ...request.headers }
    delete headers[PROJECT_HEADER]
    const res = await project.app.inject({
      method: request.method as 'GET',
      url: `${url.pathname}${url.search}`,
      headers,
      payload: request.body as Readable | undefined,
    })
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined && !NOT_FORWARDED.has(k.toLowerCase())) void reply.header(k, v)
    }
    return reply.code(res.statusCode).send(res.rawPayload)
  })
  app.addHook('onClose', async () => {
    for (const p of opts.projects) await p.app.close()
  })
  return app
}

/** The overview of one project is recomputed at most this often: it is a full analysis. */
export const OVERVIEW_TTL_MS = 60_000

/**
 * One project's app: the single-project server as it is, with the project's store and only its tokens.
 * @example await createProjectEntry({ key: 'acme/shop', project, store, config })
 */
export async function createProjectEntry(opts: {
  key: string
  project: ProjectConfig
  store: Store
  config: ResolvedConfig
  app?: Omit<AppDeps, 'store' | 'config'>
}): Promise<ProjectEntry> {
  const { key, project, store } = opts
  const writeTokens = project.writeTokens ?? {}
  // The project's own entry wins over the config's (tests build a project the config does not list).
  const config = projectConfig({ ...opts.config, projects: { ...opts.config.projects, [key]: project } }, key)
  const app = await createApp({ ...opts.app, store, config, db: opts.app?.db ?? project.db, project: key })
  let cached: { at: number; value: Promise<ProjectOverview> } | null = null
  return {
    key,
    app,
    readToken: project.readToken,
    writeTokens: Object.values(writeTokens),
    overview: () => {
      if (!cached || Date.now() - cached.at > OVERVIEW_TTL_MS) {
        const value = app.flakewatchOverview()
        cached = { at: Date.now(), value }
        value.catch(() => (cached = null))
      }
      return cached.value
    },
  }
}
