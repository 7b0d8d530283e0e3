import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export const NOW = Date.UTC(2026, 5, 1, 12)
export const TOKEN = 's3cret-token'

export interface Pkg {
  id: number
  name: string
  version: string
  package_type: string
  created_at?: string
}

export interface Logged {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

/**
 * The four GitLab endpoints publish uses, on 127.0.0.1: generic upload, package list (with GitLab's substring
 * name filter and X-Next-Page pagination), package delete. `fail` scripts error responses per route.
 */
export async function fakeGitlab(
  opts: {
    project?: string
    packages?: Pkg[]
    perPage?: number
    fail?: Partial<Record<'PUT' | 'GET' | 'DELETE', number[]>>
  } = {},
) {
  const project = opts.project ?? 'group%2Fsub%2Fapp'
  const packages = [...(opts.packages ?? [])]
  const log: Logged[] = []
  const fail = {
    PUT: [...(opts.fail?.PUT ?? [])],
    GET: [...(opts.fail?.GET ?? [])],
    DELETE: [...(opts.fail?.DELETE ?? [])],
  }
  let nextId = 1000
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      const method = req.method as 'PUT' | 'GET' | 'DELETE'
      log.push({ method, url: req.url!, headers: req.headers, body })
      const send = (status: number, data?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers })
        res.end(data === undefined ? undefined : JSON.stringify(data))
      }
      const scripted = fail[method]?.shift()
      if (scripted) return send(scripted, { message: `${scripted} scripted` })
      if (req.headers['job-token'] !== TOKEN && req.headers['private-token'] !== TOKEN)
        return send(401, { message: '401 Unauthorized' })
      const url = new URL(req.url!, 'http://x')
      const prefix = `/api/v4/projects/${project}/packages`
      if (!req.url!.startsWith(prefix)) return send(404, { message: '404 Project Not Found' })
      const rest = req.url!.slice(prefix.length)
      const upload = /^\/generic\/([^/]+)\/([^/]+)\/bundle\.json$/.exec(rest)
      if (method === 'PUT' && upload) {
        packages.push({
          id: nextId++,
          name: upload[1]!,
          version: upload[2]!,
          package_type: 'generic',
          created_at: new Date(NOW).toISOString(),
        })
        return send(201, { message: '201 Created' })
      }
      if (method === 'GET' && url.pathname === prefix) {
        const name = url.searchParams.get('package_name') ?? ''
        const matching = packages.filter(
          (p) => p.name.includes(name) && p.package_type === url.searchParams.get('package_type'),
        )
        const per = Math.min(Number(url.searchParams.get('per_page') ?? 20), opts.perPage ?? 100)
        const page = Number(url.searchParams.get('page') ?? 1)
        const slice = matching.slice((page - 1) * per, page * per)
        const more = page * per < matching.length
        return send(200, slice, { 'x-page': String(page), 'x-next-page': more ? String(page + 1) : '' })
      }
      const del = /^\/(\d+)$/.exec(rest)
      if (method === 'DELETE' && del) {
        const i = packages.findIndex((p) => p.id === Number(del[1]))
        if (i < 0) return send(404, { message: '404 Not found' })
        packages.splice(i, 1)
        return send(204)
      }
      send(404, { message: '404 Not Found' })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  servers.push(server)
  return { url, log, packages }
}

const servers: Server[] = []

/** Closes every fake GitLab started so far (after each test). */
export async function closeFakeGitlabs(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
}
