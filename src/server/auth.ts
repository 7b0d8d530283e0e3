import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { HttpError } from './http-error.js'

export interface AuthTokens {
  writeToken: string | null
  readToken: string | null
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

/**
 * Writes need the write token. With none configured, writes are refused outright: an unconfigured server must
 * never be an open door.
 */
export function requireWrite(request: FastifyRequest, tokens: AuthTokens): void {
  if (!tokens.writeToken) {
    throw new HttpError(403, {
      code: 'FW_WRITES_DISABLED',
      message: 'writes are disabled on this server: set server.writeToken in the config or FLAKEWATCH_WRITE_TOKEN',
    })
  }
  const presented = bearer(request)
  if (presented === null) {
    throw new HttpError(401, { code: 'FW_AUTH', message: 'this needs the write token: Authorization: Bearer <token>' })
  }
  if (!tokenMatches(presented, tokens.writeToken)) throw new HttpError(401, { code: 'FW_AUTH', message: 'wrong token' })
}

/** Reads are open unless a read token is configured; then the read token or the write token is needed. */
export function requireRead(request: FastifyRequest, tokens: AuthTokens): void {
  if (!tokens.readToken) return
  const presented = bearer(request)
  if (presented === null) {
    const message = 'this server needs a read token: Authorization: Bearer <token>'
    throw new HttpError(401, { code: 'FW_AUTH', message })
  }
  if (!tokenMatches(presented, tokens.readToken) && !tokenMatches(presented, tokens.writeToken)) {
    throw new HttpError(401, { code: 'FW_AUTH', message: 'wrong token' })
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

/** An `onRequest` hook for a write route: it runs before the body is read, so refused uploads cost nothing. */
export function writeHook(tokens: AuthTokens): Hook {
  return (request, _reply, done) => {
    try {
      requireWrite(request, tokens)
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
