import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { HttpError } from './http-error.js'

/** A write token and the name it acts under: the audit trail's actor for every change made with it. */
export interface NamedToken {
  name: string
  token: string
}

export interface AuthTokens {
  writeTokens: NamedToken[]
  readToken: string | null
}

/** The actor name of the single, unnamed write token (`server.writeToken`, `FLAKEWATCH_WRITE_TOKEN`). */
export const SINGLE_TOKEN_ACTOR = 'api'

/**
 * The write tokens a config grants: every named one (`server.writeTokens`, `FLAKEWATCH_WRITE_TOKENS`), plus the
 * single unnamed one as {@link SINGLE_TOKEN_ACTOR}.
 * @example resolveAuthTokens({ writeToken: null, writeTokens: { ci: 'tok-ci-123' }, readToken: null })
 */
export function resolveAuthTokens(server: {
  writeToken: string | null
  writeTokens: Record<string, string>
  readToken: string | null
}): AuthTokens {
  const writeTokens = Object.entries(server.writeTokens).map(([name, token]) => ({ name, token }))
  if (server.writeToken) writeTokens.push({ name: SINGLE_TOKEN_ACTOR, token: server.writeToken })
  return { writeTokens, readToken: server.readToken }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the write token this request presented; set by the write hook, null on reads. */
    flakewatchActor: string | null
  }
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization
  if (!header) return null
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match ? match[1]! : null
}

/**
 * Compares a presented token with the expected one in constant time. Both are hashed first so that neither the
 * length nor a common prefix leaks through timing.
 */
export function tokenMatches(presented: string | null, expected: string | null): boolean {
  if (presented === null || expected === null) return false
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/** The name of the write token presented, or null. Every token is compared, so timing shows no position. */
function matchWriteToken(presented: string, tokens: AuthTokens): string | null {
  let name: string | null = null
  for (const t of tokens.writeTokens) if (tokenMatches(presented, t.token) && name === null) name = t.name
  return name
}

/**
 * Writes need a write token; the request then acts under that token's name. With none configured, writes are
 * refused outright: an unconfigured server must never be an open door.
 */
export function requireWrite(request: FastifyRequest, tokens: AuthTokens): string {
  if (tokens.writeTokens.length === 0) {
    throw new HttpError(403, {
      code: 'FW_WRITES_DISABLED',
      message:
        'writes are disabled on this server: set FLAKEWATCH_WRITE_TOKENS (name:token,…), FLAKEWATCH_WRITE_TOKEN, ' +
        'or server.writeTokens in the config',
    })
  }
  const presented = bearer(request)
  if (presented === null) {
    throw new HttpError(401, { code: 'FW_AUTH', message: 'this needs the write token: Authorization: Bearer <token>' })
  }
  const name = matchWriteToken(presented, tokens)
  if (name === null) throw new HttpError(401, { code: 'FW_AUTH', message: 'wrong token' })
  return name
}

/** Reads are open unless a read token is configured; then the read token or the write token is needed. */
export function requireRead(request: FastifyRequest, tokens: AuthTokens): void {
  if (!tokens.readToken) return
  const presented = bearer(request)
  if (presented === null) {
    const message = 'this server needs a read token: Authorization: Bearer <token>'
    throw new HttpError(401, { code: 'FW_AUTH', message })
  }
  if (!tokenMatches(presented, tokens.readToken) && matchWriteToken(presented, tokens) === null) {
    throw new HttpError(401, { code: 'FW_AUTH', message: 'wrong token' })
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

/** An `onRequest` hook for a write route: it runs before the body is read, so refused uploads cost nothing. */
export function writeHook(tokens: AuthTokens): Hook {
  return (request, _reply, done) => {
    try {
      request.flakewatchActor = requireWrite(request, tokens)
      done()
    } catch (error) {
      done(error as Error)
    }
  }
}

/** An `onRequest` hook for the API: reads need the read token when one is configured; write routes check their own. */
export function readHook(tokens: AuthTokens): Hook {
  return (request, _reply, done) => {
    try {
      if (request.method === 'GET' || request.method === 'HEAD') requireRead(request, tokens)
      done()
    } catch (error) {
      done(error as Error)
    }
  }
}

/**
 * Who an MCP request is (`/mcp`): it may read when reads are open or it shows the read token or a write token,
 * exactly as the REST API's reads; its actor is the name of the write token it shows, or null when it may only
 * read (the tools that write then refuse). Throws 401 like `requireRead`.
 */
export function mcpActor(request: FastifyRequest, tokens: AuthTokens): string | null {
  requireRead(request, tokens)
  const presented = bearer(request)
  return presented === null ? null : matchWriteToken(presented, tokens)
}
