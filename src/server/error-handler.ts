import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ZodError } from 'zod'
import { FlakewatchError } from '../errors.js'
import type { ErrorBody } from './api-types.js'
import { HttpError } from './http-error.js'
import { SECURITY_HEADERS } from './security-headers.js'

/** The one mapping from error codes to HTTP statuses. */
export const STATUS_BY_CODE: Record<string, number> = {
  FW_INPUT: 400,
  FW_CONFIG: 400,
  FW_REPORT_PARSE: 422,
  FW_REPORT_LIMIT: 422,
  FW_NOT_FOUND: 404,
  FW_AUTH: 401,
  FW_STORE: 503,
  FW_EXIT: 500,
  FW_INTERNAL: 500,
}

export function zodMessage(error: ZodError, where = ''): string {
  return error.issues
    .map((i) => `${[where, ...i.path.map(String)].filter(Boolean).join('.') || '(input)'}: ${i.message}`)
    .join('; ')
}

/** Status and body for any error a request can raise. Server faults never echo their message to the client. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  const body = (code: string, message: string): ErrorBody => ({ error: { code, message } })
  if (error instanceof HttpError) return { status: error.statusCode, body: body(error.code, error.message) }
  if (error instanceof ZodError) return { status: 400, body: body('FW_INPUT', zodMessage(error)) }
  if (error instanceof FlakewatchError) {
    const status = STATUS_BY_CODE[error.code] ?? 500
    const message = status >= 500 && error.code !== 'FW_STORE' ? 'internal error' : error.message
    return { status, body: body(error.code, message) }
  }
  const fe = error as Partial<FastifyError>
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: body(fe.code ?? 'FW_HTTP', fe.message ?? 'bad request') }
  }
  return { status: 500, body: body('FW_INTERNAL', 'internal error') }
}

/** Fastify's own refusal of a body over a route's limit, said as flakewatch's uploads say it: with the limit. */
function bodyTooLarge(error: unknown, request: FastifyRequest): HttpError | null {
  if ((error as Partial<FastifyError>).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return null
  const limit = request.routeOptions.bodyLimit
  const message = limit ? `request bodies here are limited to ${limit} bytes` : 'the request body is too large'
  return new HttpError(413, { code: 'FW_TOO_LARGE', message })
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body } = errorResponse(bodyTooLarge(error, request) ?? error)
  if (status >= 500) request.log.error({ err: error }, 'request failed')
  // A client's mistake is the client's to see in the answer; the log shows it with the requests (debug).
  else request.log.debug({ code: body.error.code, status }, body.error.message)
  if (status === 401) void reply.header('www-authenticate', 'Bearer')
  // Also set by the app's onSend hook; set here too because framework errors (a malformed URL) bypass hooks.
  void reply.headers(SECURITY_HEADERS).header('cache-control', 'no-store')
  return reply.status(status).type('application/json; charset=utf-8').send(body)
}
