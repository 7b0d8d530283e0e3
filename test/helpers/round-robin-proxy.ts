import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * The moments a test may hold a request at: just before the last byte of its body reaches the instance, and just
 * before the instance's answer reaches the client. `target` is the index of the instance it went to. At the
 * answer, `'drop'` loses it and answers 502 instead, as when an instance dies between its commit and its answer.
 */
export type ProxyGate = (moment: 'body-end' | 'answer', target: number, path: string) => Promise<void | 'drop'>

export interface RoundRobinProxy {
  url: string
  /** The instance each request went to, in order (refused connections tried elsewhere are not counted). */
  readonly routed: number[]
  gate: ProxyGate | null
  close(): Promise<void>
}

/**
 * A load balancer for tests, as a small one in front of `flakewatch serve` instances behaves: round robin, no
 * sticky sessions; a connection an instance refuses is tried on the next one (the body is buffered first); an
 * instance that fails after taking the request makes a 502, which the client may retry.
 */
export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  let next = 0
  const proxy: RoundRobinProxy = { url: '', routed: [], gate: null, close: () => Promise.resolve() }

  const forward = (req: IncomingMessage, body: Buffer, target: number): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const upstream = new URL(req.url ?? '/', upstreams[target])
      // A connection per request (no agent): a refused connection then always means this instance is down.
      const out = httpRequest(upstream, {
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
        agent: false,
      })
      out.on('response', resolve)
      out.on('error', reject)
      out.on('socket', (socket) =>
        socket.once('connect', () => {
          proxy.routed.push(target)
          // All but the last byte, then the gate, then the last byte: an instance can be stopped mid-upload.
          if (body.length > 1) out.write(body.subarray(0, body.length - 1))
          void (proxy.gate?.('body-end', target, upstream.pathname) ?? Promise.resolve()).then(() =>
            out.end(body.subarray(Math.max(0, body.length - 1))),
          )
        }),
      )
    })

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks)
        let lastError: Error | null = null
        for (let tried = 0; tried < upstreams.length; tried++) {
          const target = next
          next = (next + 1) % upstreams.length
          let answer: IncomingMessage
          try {
            answer = await forward(req, body, target)
          } catch (error) {
            lastError = error as Error
            // Refused: the instance never saw the request, so another may take it. Anything else may have reached it.
            if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') continue
            break
          }
          try {
            const received: Buffer[] = []
            for await (const c of answer) received.push(c as Buffer)
            const path = new URL(req.url ?? '/', 'http://x').pathname
            if ((await proxy.gate?.('answer', target, path)) === 'drop')
              throw new Error('the instance died before its answer')
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            res.end(Buffer.concat(received))
          } catch (error) {
            lastError = error as Error
            break
          }
          return
        }
        res.writeHead(502, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 'BAD_GATEWAY', message: lastError?.message ?? 'no instance' } }))
      })()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return proxy
}
