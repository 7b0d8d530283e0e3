import type { Socket } from 'node:net'

/**
 * Headers on every response: API answers, errors of every status, static files, and the answers Fastify gives
 * before routing (a malformed URL) or before parsing (a malformed request). The dashboard builds its DOM from text
 * and loads only its own files, so the policy can forbid everything else.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

/**
 * Answers a request Node's HTTP parser refused (bad request line, headers too large, a timeout) with the same
 * headers and error shape as every other response. Fastify never sees such a request, so its hooks cannot.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or an already-answered socket has nobody left to tell.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  const message =
    status === 431 ? 'request headers are too large' : status === 408 ? 'request timed out' : 'malformed HTTP request'
  const body = JSON.stringify({ error: { code: `FW_HTTP_${status}`, message } })
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    connection: 'close',
  }
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  socket.end(`HTTP/1.1 ${status} ${REASONS[status]}\r\n${head}\r\n${body}`)
}
