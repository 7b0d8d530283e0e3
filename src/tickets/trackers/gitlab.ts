import { createRequesterFn, type ResponseBodyTypes } from '@gitbeaker/requester-utils'
import { Gitlab } from '@gitbeaker/rest'
import { VERSION } from '../../version.js'
import { renderBlocks, type Block } from '../document.js'
import { describeError, TrackerError, trackerFetch, type RateLimitState, type TrackerHttpOptions } from './http.js'
import { markerLine, ownerLabels, ownerUsers, TICKET_LABEL, type NewTicket, type TicketTracker } from './tracker.js'

export interface GitlabTrackerOptions extends TrackerHttpOptions {
  /** The project's path (`group/sub/project`) or numeric id. */
  project: string
  /** Default `https://gitlab.com`. */
  url?: string
  /** A personal, project or group access token (`PRIVATE-TOKEN`). */
  token: string
}

interface Issue {
  iid: number
  web_url: string
  state: string
  description?: string | null
}

interface RequestOptions {
  method?: string
  headers?: Record<string, string>
  body?: BodyInit
  prefixUrl?: string
  searchParams?: string
}

/**
 * Gitbeaker's requester on our `fetch`: its own retries only know 429 and 502 and ignore `Retry-After`; ours retry
 * every 5xx and 429 with backoff, honour `Retry-After`, and report a rate limit to the sync.
 */
function requester(fetchFn: typeof fetch) {
  return createRequesterFn(
    (_, options) => Promise.resolve(options),
    async (endpoint: string, options?: RequestOptions) => {
      const base = options?.prefixUrl ?? ''
      const url = new URL(endpoint, base.endsWith('/') ? base : `${base}/`)
      url.search = options?.searchParams ?? ''
      const headers = { ...options?.headers, 'user-agent': `flakewatch/${VERSION}` }
      const res = await fetchFn(url.href, { method: options?.method, headers, body: options?.body })
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim()
      const body: unknown =
        res.status === 204 ? null : type === 'application/json' ? await res.json().catch(() => null) : await res.text()
      if (!res.ok) {
        const said = (body as { message?: unknown; error?: unknown } | null) ?? null
        const message = typeof body === 'string' ? body : JSON.stringify(said?.message ?? said?.error ?? '')
        throw new TrackerError(message.slice(0, 300), res.status)
      }
      return { body: body as ResponseBodyTypes, headers: Object.fromEntries(res.headers.entries()), status: res.status }
    },
  )
}

/**
 * GitLab issues through Gitbeaker (REST v4): `GET /projects/:id/issues?labels=flakewatch&search=<marker>&in=description`
 * to find a ticket, `POST /projects/:id/issues`, `POST …/issues/:iid/notes`, `PUT …/issues/:iid` (`state_event`), and
 * `GET /users?username=` for assignees from CODEOWNERS.
 */
export function gitlabTracker(opts: GitlabTrackerOptions): TicketTracker {
  const rateLimit: RateLimitState = { until: null }
  const api = new Gitlab({
    host: (opts.url ?? 'https://gitlab.com').replace(/\/+$/, '').replace(/\/api\/v4$/, ''),
    token: opts.token,
    requesterFn: requester(trackerFetch(opts, rateLimit)),
  })
  const project = /^\d+$/.test(opts.project) ? Number(opts.project) : opts.project
  const userIds = new Map<string, number | null>()
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (error) {
      throw describeError(`GitLab ${what}`, error)
    }
  }
  const userId = async (username: string): Promise<number | null> => {
    if (!userIds.has(username)) {
      const users = (await call('looking up a user', () => api.Users.all({ username }))) as { id: number }[]
      userIds.set(username, users[0]?.id ?? null)
    }
    return userIds.get(username)!
  }
  const asTicket = (i: Issue) => ({
    key: String(i.iid),
    url: i.web_url,
    state: i.state === 'closed' ? ('closed' as const) : ('open' as const),
  })
  return {
    kind: 'gitlab',
    markup: 'markdown',
    rateLimit,
    async find(marker) {
      const found = (await call('searching issues', () =>
        api.Issues.all({
          projectId: project,
          labels: TICKET_LABEL,
          search: marker,
          in: 'description',
          perPage: 100,
          maxPages: 1,
        }),
      )) as unknown as Issue[]
      const mine = found.filter((i) => (i.description ?? '').includes(markerLine(marker)))
      mine.sort((a, b) => a.iid - b.iid)
      return mine[0] ? asTicket(mine[0]) : null
    },
    async open(t: NewTicket) {
      const users = ownerUsers(t.owners)
      const ids: number[] = []
      const assigned: string[] = []
      for (const u of users) {
        const id = await userId(u)
        if (id !== null) {
          ids.push(id)
          assigned.push(u)
        }
      }
      const labels = [TICKET_LABEL, ...t.labels, ...ownerLabels(t.owners, assigned)]
      const issue = (await call('creating an issue', () =>
        api.Issues.create(project, t.title, {
          description: `${renderBlocks(t.blocks, 'markdown')}\n\n${markerLine(t.marker)}`,
          labels: labels.join(','),
          ...(ids.length && { assigneeIds: ids }),
        }),
      )) as unknown as Issue
      return asTicket(issue)
    },
    async comment(key: string, blocks: Block[]) {
      await call('commenting', () => api.IssueNotes.create(project, Number(key), renderBlocks(blocks, 'markdown')))
    },
    async setState(key, state) {
      await call(state === 'closed' ? 'closing an issue' : 'reopening an issue', () =>
        api.Issues.edit(project, Number(key), { stateEvent: state === 'closed' ? 'close' : 'reopen' }),
      )
    },
  }
}
