import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Logged {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

interface Note {
  id: number
  body: string
}

/**
 * The comment endpoints of GitHub's REST API and GitLab's v4 API, on 127.0.0.1, as documented:
 * GitHub `GET/POST /repos/{o}/{r}/issues/{n}/comments` (paged by `page`/`per_page`) and
 * `PATCH /repos/{o}/{r}/issues/comments/{id}`; GitLab `GET/POST /projects/{id}/merge_requests/{iid}/notes` and
 * `PUT …/notes/{id}`. `fail` scripts error statuses (with `Retry-After`) for the next requests.
 */
export async function fakeForge(opts: { token: string; comments?: Note[] }) {
  const comments: Note[] = [...(opts.comments ?? [])]
  const log: Logged[] = []
  const fail: { status: number; retryAfter?: string }[] = []
  let nextId = 500
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      log.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      const send = (status: number, data?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers })
        res.end(data === undefined ? undefined : JSON.stringify(data))
      }
      const scripted = fail.shift()
      if (scripted)
        return send(
          scripted.status,
          { message: 'scripted' },
          scripted.retryAfter ? { 'retry-after': scripted.retryAfter } : {},
        )
      const url = new URL(req.url!, 'http://x')
      const gh = /^\/repos\/acme\/shop\/issues\/(\d+)\/comments$/.exec(url.pathname)
      const ghEdit = /^\/repos\/acme\/shop\/issues\/comments\/(\d+)$/.exec(url.pathname)
      const gl = /^\/api\/v4\/projects\/42\/merge_requests\/(\d+)\/notes$/.exec(url.pathname)
      const glEdit = /^\/api\/v4\/projects\/42\/merge_requests\/7\/notes\/(\d+)$/.exec(url.pathname)
      const authed =
        gh || ghEdit
          ? req.headers.authorization === `Bearer ${opts.token}`
          : req.headers['private-token'] === opts.token || req.headers['job-token'] === opts.token
      if (!authed) return send(401, { message: 'Bad credentials' })
      if ((gh && gh[1] !== '12') || (gl && gl[1] !== '7')) return send(404, { message: 'Not Found' })
      if ((gh || gl) && req.method === 'GET') {
        const page = Number(url.searchParams.get('page') ?? 1)
        const per = Number(url.searchParams.get('per_page') ?? 30)
        return send(200, comments.slice((page - 1) * per, page * per))
      }
      if ((gh || gl) && req.method === 'POST') {
        const note = { id: nextId++, body: (JSON.parse(body) as { body: string }).body }
        comments.push(note)
        return send(201, { ...note, html_url: `https://github.example/acme/shop/pull/12#issuecomment-${note.id}` })
      }
      const edit = ghEdit ?? glEdit
      if (edit && req.method === (ghEdit ? 'PATCH' : 'PUT')) {
        const note = comments.find((c) => c.id === Number(edit[1]))
        if (!note) return send(404, { message: 'Not Found' })
        note.body = (JSON.parse(body) as { body: string }).body
        return send(200, { ...note, html_url: `https://github.example/acme/shop/pull/12#issuecomment-${note.id}` })
      }
      send(404, { message: `no route ${req.method} ${url.pathname}` })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    comments,
    log,
    fail,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}
