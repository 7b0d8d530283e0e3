import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Local HTTP servers that implement the tracker endpoints the ticket sync calls, as the trackers document them
 * (docs/tickets.md lists them): paths, methods, auth headers and body shapes are checked, and anything else is
 * answered 400 and kept in `violations`, so that a test fails on a request the real tracker would refuse.
 */

export interface Issue {
  key: string
  title: string
  body: unknown
  labels: string[]
  assignees: unknown[]
  state: 'open' | 'closed'
  comments: unknown[]
  /** Every state change, in order. */
  history: string[]
}

export interface Hit {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: unknown
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> }
type Handler = (method: string, url: URL, body: unknown, headers: IncomingHttpHeaders) => Reply | Promise<Reply>

async function serve(handle: Handler) {
  const hits: Hit[] = []
  const violations: string[] = []
  const script: Reply[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const url = new URL(req.url ?? '/', 'http://fake')
        let body: unknown = null
        if (raw) {
          try {
            body = JSON.parse(raw)
          } catch {
            violations.push(`${req.method} ${url.pathname}: body is not JSON`)
          }
        }
        hits.push({ method: req.method!, path: url.pathname + url.search, headers: req.headers, body })
        let reply = script.shift()
        if (!reply) {
          try {
            reply = await handle(req.method!, url, body, req.headers)
          } catch (error) {
            violations.push(`${req.method} ${url.pathname}: ${(error as Error).message}`)
            reply = { status: 400, body: { message: (error as Error).message } }
          }
        }
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body))
      })()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    violations,
    /** The next requests get these answers, before any handling (a 503, a 429 with Retry-After). */
    respond(...replies: Reply[]) {
      script.push(...replies)
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what)
}

const isStringArray = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string')

/** GitHub's REST API for issues: https://docs.github.com/rest/issues. */
export async function fakeGithub(opts: {
  repo: string
  token: string
  collaborators?: string[]
  createDelayMs?: number
}) {
  const issues: Issue[] = []
  const repoPath = `/repos/${opts.repo}`
  const json = (n: number, i: Issue) => ({
    number: n,
    html_url: `https://github.example/${opts.repo}/issues/${n}`,
    state: i.state,
    title: i.title,
    body: i.body,
    labels: i.labels.map((name) => ({ name })),
  })
  const server = await serve(async (method, url, body, headers) => {
    check(
      headers.authorization === `token ${opts.token}` || headers.authorization === `bearer ${opts.token}`,
      'Authorization: token <token>',
    )
    check(String(headers.accept).includes('application/vnd.github'), 'Accept: application/vnd.github+json')
    check(String(headers['user-agent']).includes('flakewatch/'), 'a User-Agent naming flakewatch')
    check(url.pathname.startsWith(`${repoPath}/issues`), `unknown path ${url.pathname}`)
    const rest = url.pathname.slice(`${repoPath}/issues`.length)
    if (method === 'GET' && rest === '') {
      const labels = (url.searchParams.get('labels') ?? '').split(',').filter(Boolean)
      const state = url.searchParams.get('state') ?? 'open'
      const per = Number(url.searchParams.get('per_page') ?? 30)
      const page = Number(url.searchParams.get('page') ?? 1)
      check(per >= 1 && per <= 100, 'per_page 1–100')
      const all = issues
        .map((i, n) => json(n + 1, i))
        .filter((i) => labels.every((l) => i.labels.some((x) => x.name === l)))
        .filter((i) => state === 'all' || i.state === state)
      return { status: 200, body: all.slice((page - 1) * per, page * per) }
    }
    if (method === 'POST' && rest === '') {
      const b = body as Record<string, unknown>
      check(typeof b.title === 'string' && b.title.length > 0 && b.title.length <= 256, 'title: a string')
      check(typeof b.body === 'string' && b.body.length <= 65_536, 'body: a string of at most 65,536 characters')
      check(isStringArray(b.labels) && b.labels.every((l) => l.length <= 50), 'labels: names of at most 50 characters')
      check(b.assignees === undefined || isStringArray(b.assignees), 'assignees: logins')
      const bad = (b.assignees ?? []).filter((a) => !(opts.collaborators ?? []).includes(a))
      if (bad.length) return { status: 422, body: { message: 'Validation Failed', errors: [{ field: 'assignees' }] } }
      if (opts.createDelayMs) await new Promise((r) => setTimeout(r, opts.createDelayMs))
      const i: Issue = {
        key: String(issues.length + 1),
        title: b.title,
        body: b.body,
        labels: b.labels,
        assignees: (b.assignees as string[]) ?? [],
        state: 'open',
        comments: [],
        history: ['opened'],
      }
      issues.push(i)
      return { status: 201, body: json(issues.length, i) }
    }
    const m = /^\/(\d+)(\/comments)?$/.exec(rest)
    check(m, `unknown path ${url.pathname}`)
    const issue = issues[Number(m[1]) - 1]
    if (!issue) return { status: 404, body: { message: 'Not Found' } }
    if (method === 'POST' && m[2]) {
      const b = body as Record<string, unknown>
      check(typeof b.body === 'string' && b.body.length > 0, 'body: a string')
      issue.comments.push(b.body)
      return { status: 201, body: { id: issue.comments.length, body: b.body } }
    }
    if (method === 'PATCH' && !m[2]) {
      const b = body as Record<string, unknown>
      check(b.state === 'open' || b.state === 'closed', 'state: open or closed')
      check(
        b.state_reason === undefined || ['completed', 'not_planned', 'reopened'].includes(b.state_reason as string),
        'state_reason',
      )
      issue.state = b.state
      issue.history.push(b.state === 'closed' ? 'closed' : 'reopened')
      return { status: 200, body: json(Number(m[1]), issue) }
    }
    throw new Error(`unknown endpoint ${method} ${url.pathname}`)
  })
  return { ...server, issues, apiUrl: server.url }
}

/** GitLab's REST API v4 for issues, notes and users: https://docs.gitlab.com/api/issues/. */
export async function fakeGitlab(opts: { project: string; token: string; users?: Record<string, number> }) {
  const issues: Issue[] = []
  const base = `/api/v4/projects/${encodeURIComponent(opts.project)}`
  const json = (i: Issue) => ({
    iid: Number(i.key),
    web_url: `https://gitlab.example/${opts.project}/-/issues/${i.key}`,
    state: i.state === 'open' ? 'opened' : 'closed',
    title: i.title,
    description: i.body,
    labels: i.labels,
  })
  const server = await serve((method, url, body, headers) => {
    check(headers['private-token'] === opts.token, 'PRIVATE-TOKEN: <token>')
    if (method === 'GET' && url.pathname === '/api/v4/users') {
      const u = url.searchParams.get('username') ?? ''
      const id = opts.users?.[u]
      return { status: 200, body: id === undefined ? [] : [{ id, username: u }] }
    }
    // The project path is one URL-encoded segment.
    const raw = url.pathname
    check(raw.startsWith(`${base}/issues`), `unknown path ${raw} (the project must be URL-encoded)`)
    const rest = raw.slice(`${base}/issues`.length)
    if (method === 'GET' && rest === '') {
      const labels = (url.searchParams.get('labels') ?? '').split(',').filter(Boolean)
      const search = url.searchParams.get('search')
      check(
        url.searchParams.get('in') === null ||
          url.searchParams.get('in') === 'description' ||
          url.searchParams.get('in') === 'title,description',
        'in: title or description',
      )
      const found = issues
        .filter((i) => labels.every((l) => i.labels.includes(l)))
        .filter((i) => !search || String(i.body).includes(search))
      return { status: 200, body: found.map(json) }
    }
    if (method === 'POST' && rest === '') {
      const b = body as Record<string, unknown>
      check(typeof b.title === 'string' && b.title.length > 0 && b.title.length <= 255, 'title: a string')
      check(typeof b.description === 'string' && b.description.length <= 1_048_576, 'description: a string')
      check(typeof b.labels === 'string', 'labels: comma-separated names')
      check(
        b.assignee_ids === undefined || (Array.isArray(b.assignee_ids) && b.assignee_ids.every(Number.isInteger)),
        'assignee_ids: user ids',
      )
      const i: Issue = {
        key: String(issues.length + 1),
        title: b.title,
        body: b.description,
        labels: b.labels.split(','),
        assignees: (b.assignee_ids as number[]) ?? [],
        state: 'open',
        comments: [],
        history: ['opened'],
      }
      issues.push(i)
      return { status: 201, body: json(i) }
    }
    const m = /^\/(\d+)(\/notes)?$/.exec(rest)
    check(m, `unknown path ${raw}`)
    const issue = issues[Number(m[1]) - 1]
    if (!issue) return { status: 404, body: { message: '404 Not found' } }
    if (method === 'POST' && m[2]) {
      const b = body as Record<string, unknown>
      check(typeof b.body === 'string' && b.body.length > 0, 'body: a string')
      issue.comments.push(b.body)
      return { status: 201, body: { id: issue.comments.length, body: b.body } }
    }
    if (method === 'PUT' && !m[2]) {
      const b = body as Record<string, unknown>
      check(b.state_event === 'close' || b.state_event === 'reopen', 'state_event: close or reopen')
      issue.state = b.state_event === 'close' ? 'closed' : 'open'
      issue.history.push(b.state_event === 'close' ? 'closed' : 'reopened')
      return { status: 200, body: json(issue) }
    }
    throw new Error(`unknown endpoint ${method} ${raw}`)
  })
  return { ...server, issues }
}

interface AdfNode {
  type?: unknown
  text?: unknown
  content?: unknown
}

/** A document Jira Cloud accepts: version 1, type doc, nodes with types, text nodes non-empty. */
function validAdf(doc: unknown): boolean {
  const d = doc as { version?: unknown; type?: unknown; content?: unknown }
  if (d?.version !== 1 || d.type !== 'doc' || !Array.isArray(d.content)) return false
  const walk = (n: AdfNode): boolean =>
    typeof n.type === 'string' &&
    (n.type !== 'text' || (typeof n.text === 'string' && n.text.length > 0)) &&
    (n.content === undefined || (Array.isArray(n.content) && (n.content as AdfNode[]).every(walk)))
  return (d.content as AdfNode[]).every(walk)
}

/**
 * Jira's REST API: Cloud v3 (https://developer.atlassian.com/cloud/jira/platform/rest/v3/: ADF bodies, Basic
 * e-mail:token, `GET /search/jql`) or Server/Data Center v2 (wiki-markup strings, a Bearer personal access token,
 * `GET /search`).
 */
export async function fakeJira(opts: {
  deployment: 'cloud' | 'server'
  project: string
  token: string
  email?: string
  users?: Record<string, string>
}) {
  const issues: Issue[] = []
  const cloud = opts.deployment === 'cloud'
  const v = `/rest/api/${cloud ? 3 : 2}`
  const auth = cloud ? `Basic ${Buffer.from(`${opts.email}:${opts.token}`).toString('base64')}` : `Bearer ${opts.token}`
  const statusOf = (i: Issue) => ({ statusCategory: { key: i.state === 'closed' ? 'done' : 'new' } })
  const textBody = (x: unknown) => (cloud ? validAdf(x) : typeof x === 'string' && x.length > 0)
  const server = await serve((method, url, body, headers) => {
    check(headers.authorization === auth, cloud ? 'Authorization: Basic e-mail:token' : 'Authorization: Bearer <PAT>')
    check(String(headers.accept).includes('application/json'), 'Accept: application/json')
    check(url.pathname.startsWith(v), `the ${opts.deployment} API is ${v}, got ${url.pathname}`)
    const path = url.pathname.slice(v.length)
    if (method === 'GET' && path === (cloud ? '/search/jql' : '/search')) {
      const jql = url.searchParams.get('jql') ?? ''
      const m = /^project = "([^"]+)" AND labels = "([^"]+)" ORDER BY created ASC$/.exec(jql)
      check(m && m[1] === opts.project, `jql: ${jql}`)
      const found = issues.filter((i) => i.labels.includes(m[2]!))
      return { status: 200, body: { issues: found.map((i) => ({ key: i.key, fields: { status: statusOf(i) } })) } }
    }
    if (method === 'GET' && path === '/user/search') {
      const q = url.searchParams.get(cloud ? 'query' : 'username')
      check(q, cloud ? 'query=' : 'username=')
      const id = opts.users?.[q]
      return { status: 200, body: id ? [cloud ? { accountId: id } : { name: id }] : [] }
    }
    if (method === 'POST' && path === '/issue') {
      const f = (body as { fields?: Record<string, unknown> }).fields
      check(f, 'fields')
      check((f.project as { key?: string })?.key === opts.project, 'fields.project.key')
      check(typeof (f.issuetype as { name?: string })?.name === 'string', 'fields.issuetype.name')
      check(
        typeof f.summary === 'string' && f.summary.length > 0 && f.summary.length <= 255,
        'fields.summary: at most 255 characters',
      )
      check(textBody(f.description), cloud ? 'fields.description: an ADF document' : 'fields.description: wiki markup')
      check(
        isStringArray(f.labels) && f.labels.every((l) => !/\s/.test(l) && l.length <= 255),
        'fields.labels: no spaces',
      )
      const a = f.assignee as Record<string, unknown> | undefined
      check(
        a === undefined || (cloud ? typeof a.accountId === 'string' : typeof a.name === 'string'),
        cloud ? 'assignee.accountId' : 'assignee.name',
      )
      const key = `${opts.project}-${issues.length + 1}`
      issues.push({
        key,
        title: f.summary,
        body: f.description,
        labels: f.labels,
        assignees: a ? [a] : [],
        state: 'open',
        comments: [],
        history: ['opened'],
      })
      return { status: 201, body: { id: String(10_000 + issues.length), key, self: `${server.url}${v}/issue/${key}` } }
    }
    const m = /^\/issue\/([A-Z][A-Z0-9_]*-\d+)\/(comment|transitions)$/.exec(path)
    check(m, `unknown endpoint ${method} ${url.pathname}`)
    const issue = issues.find((i) => i.key === m[1])
    if (!issue) return { status: 404, body: { errorMessages: ['Issue does not exist'] } }
    if (m[2] === 'comment' && method === 'POST') {
      const b = (body as { body?: unknown }).body
      check(textBody(b), cloud ? 'body: an ADF document' : 'body: wiki markup')
      issue.comments.push(b)
      return { status: 201, body: { id: String(issue.comments.length) } }
    }
    if (m[2] === 'transitions' && method === 'GET') {
      return {
        status: 200,
        body: {
          transitions: [
            { id: '11', name: 'To Do', to: { statusCategory: { key: 'new' } } },
            { id: '21', name: 'In Progress', to: { statusCategory: { key: 'indeterminate' } } },
            { id: '31', name: 'Done', to: { statusCategory: { key: 'done' } } },
          ],
        },
      }
    }
    if (m[2] === 'transitions' && method === 'POST') {
      const id = (body as { transition?: { id?: unknown } }).transition?.id
      check(id === '11' || id === '21' || id === '31', 'transition.id: one of the issue’s transitions')
      issue.state = id === '31' ? 'closed' : 'open'
      issue.history.push(id === '31' ? 'closed' : 'reopened')
      return { status: 204 }
    }
    throw new Error(`unknown endpoint ${method} ${url.pathname}`)
  })
  return { ...server, issues }
}
