import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * How much of a request body that goes on arriving after its answer is read and dropped before the connection is
 * closed anyway. A client that sends this much past an answer it never reads has stopped listening.
 */
export const UNREAD_BODY_DRAIN_BYTES = 16 * 1024 * 1024

/**
 * Keeps reading a request body that is still arriving when its answer goes out (a 413 past a body limit, a 401 or a
 * 503 before the body is read): its bytes are dropped, and the connection stays open until the body ends.
 *
 * Fastify answers a refused body with `Connection: close`, and Node then closes the socket as soon as the answer is
 * written. The client, still sending, gets a reset; a client that is busy writing (a loaded CI machine) sees the
 * write fail before it reads the answer and loses the answer with the socket ("the connection closed before an
 * answer", or a retried upload). RFC 9112 section 9.6 asks a server to keep reading in that case, so it does, up to
 * {@link UNREAD_BODY_DRAIN_BYTES}; past that the connection is closed. Called from an `onSend` hook: the answer is
 * then about to be written, and nothing reads the body any more.
 */
export function drainUnreadBody(request: FastifyRequest, reply: FastifyReply, bound = UNREAD_BODY_DRAIN_BYTES): void {
  const body = request.raw
  if (body.complete || body.destroyed) return
  void reply.removeHeader('connection')
  // Whatever still parsed it (a multipart parser) has no use for the rest once the answer is out.
  body.unpipe()
  let dropped = 0
  body.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > bound) body.destroy()
  })
  // A body read through an iterator that stopped early (`spoolUpload`) is paused, not flowing.
  body.resume()
}
