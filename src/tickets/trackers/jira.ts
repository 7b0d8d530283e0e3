import { VERSION } from '../../version.js'
import { renderBlocks, type Block } from '../document.js'
import { TrackerError, trackerFetch, type RateLimitState, type TrackerHttpOptions } from './http.js'
import { ownerLabels, TICKET_LABEL, type NewTicket, type TicketTracker, type TrackerTicket } from './tracker.js'

export interface JiraTrackerOptions extends TrackerHttpOptions {
  /** The site, `https://acme.atlassian.net`, or a Server/Data Center base URL. */
  url: string
  /** The project key. */
  project: string
  /** Default `Bug`. */
  issueType?: string
  /** `cloud`: REST v3, ADF, e-mail and API token (Basic). `server`: REST v2, wiki markup, a personal access token (Bearer). */
  deployment: 'cloud' | 'server'
  token: string
  /** Jira Cloud: the account the API token belongs to. */
  email?: string | null
}

interface Issue {
  key: string
  fields?: { status?: { statusCategory?: { key?: string } } }
}

interface Transition {
  id: string
  name?: string
  to?: { statusCategory?: { key?: string } }
}

/**
 * Jira issues over its REST API, without a client library: Cloud's v3 (ADF bodies, `GET /rest/api/3/search/jql`)
 * and Server/Data Center's v2 (wiki-markup bodies, `GET /rest/api/2/search`) differ in exactly the version, the body
 * format, the search path and how a user is named, which this one module says. A ticket is found again by its
 * marker label; it is closed and reopened through the workflow's transitions (to a status in the `done` category,
 * and out of it).
 */
export function jiraTracker(opts: JiraTrackerOptions): TicketTracker {
  const cloud = opts.deployment === 'cloud'
  const base = opts.url.replace(/\/+$/, '')
  const api = `${base}/rest/api/${cloud ? 3 : 2}`
  const markup = cloud ? 'adf' : 'jira-wiki'
  const rateLimit: RateLimitState = { until: null }
  const doFetch = trackerFetch(opts, rateLimit)
  const auth = cloud
    ? `Basic ${Buffer.from(`${opts.email ?? ''}:${opts.token}`).toString('base64')}`
    : `Bearer ${opts.token}`
  const headers = {
    Authorization: auth,
    Accept: 'application/json',
    'Content-Type': 'application/json',
    'User-Agent': `flakewatch/${VERSION}`,
  }
  const request = async <T>(what: string, method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response
    try {
      res = await doFetch(`${api}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    } catch (error) {
      throw new TrackerError(`Jira ${what}: ${(error as Error).message}`)
    }
    const text = await res.text().catch(() => '')
    if (!res.ok) {
      // eslint-disable-next-line no-control-regex
      const said = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 300)
      throw new TrackerError(`Jira ${what}: HTTP ${res.status}${said ? `: ${said}` : ''}`, res.status)
    }
    return (text ? JSON.parse(text) : null) as T
  }
  const asTicket = (i: Issue): TrackerTicket => ({
    key: i.key,
    url: `${base}/browse/${encodeURIComponent(i.key)}`,
    state: i.fields?.status?.statusCategory?.key === 'done' ? 'closed' : 'open',
  })
  /** Cloud names a user by account id, found from an e-mail; Server/DC by user name. */
  const assignee = async (owners: string[]): Promise<Record<string, string> | null> => {
    for (const o of owners) {
      const email = /^[^@\s]+@[^@\s]+$/.test(o) ? o : null
      const name = /^@[A-Za-z0-9_.-]+$/.test(o) ? o.slice(1) : null
      if (cloud && email) {
        const q = encodeURIComponent(email)
        const users = await request<{ accountId?: string }[]>('looking up a user', 'GET', `/user/search?query=${q}`)
        if (users?.[0]?.accountId) return { accountId: users[0].accountId }
      } else if (!cloud && (email || name)) {
        const q = encodeURIComponent((email ?? name)!)
        const users = await request<{ name?: string }[]>('looking up a user', 'GET', `/user/search?username=${q}`)
        if (users?.[0]?.name) return { name: users[0].name }
      }
    }
    return null
  }
  return {
    kind: 'jira',
    markup,
    rateLimit,
    async find(marker) {
      const jql = `project = "${opts.project}" AND labels = "${marker}" ORDER BY created ASC`
      const q = `jql=${encodeURIComponent(jql)}&fields=status&maxResults=10`
      const found = await request<{ issues?: Issue[] }>(
        'searching issues',
        'GET',
        cloud ? `/search/jql?${q}` : `/search?${q}`,
      )
      const first = found?.issues?.[0]
      return first ? asTicket(first) : null
    },
    async open(t: NewTicket) {
      const who = await assignee(t.owners)
      const labels = [TICKET_LABEL, t.marker, ...t.labels, ...ownerLabels(t.owners, [])].map((l) =>
        l.replace(/\s+/g, '_'),
      )
      const fields = {
        project: { key: opts.project },
        issuetype: { name: opts.issueType ?? 'Bug' },
        summary: t.title.slice(0, 250),
        description: renderBlocks(t.blocks, markup),
        labels: [...new Set(labels)],
      }
      let made: { key: string }
      try {
        made = await request('creating an issue', 'POST', '/issue', {
          fields: { ...fields, ...(who && { assignee: who }) },
        })
      } catch (error) {
        // 400 naming the assignee: an owner who cannot be assigned in this project; the ticket matters more.
        if (!who || !(error instanceof TrackerError) || error.status !== 400 || !/assignee/i.test(error.message))
          throw error
        made = await request('creating an issue', 'POST', '/issue', { fields })
      }
      return { key: made.key, url: `${base}/browse/${encodeURIComponent(made.key)}`, state: 'open' }
    },
    async comment(key: string, blocks: Block[]) {
      await request('commenting', 'POST', `/issue/${encodeURIComponent(key)}/comment`, {
        body: renderBlocks(blocks, markup),
      })
    },
    async setState(key, state) {
      const path = `/issue/${encodeURIComponent(key)}/transitions`
      const { transitions = [] } = await request<{ transitions?: Transition[] }>('reading transitions', 'GET', path)
      const category = (t: Transition) => t.to?.statusCategory?.key ?? ''
      const pick =
        state === 'closed'
          ? transitions.find((t) => category(t) === 'done')
          : (transitions.find((t) => category(t) === 'new') ?? transitions.find((t) => category(t) === 'indeterminate'))
      if (!pick) {
        throw new TrackerError(
          `Jira ${key}: no transition to a status ${state === 'closed' ? 'in' : 'out of'} the done category`,
        )
      }
      await request(state === 'closed' ? 'closing an issue' : 'reopening an issue', 'POST', path, {
        transition: { id: pick.id },
      })
    },
  }
}
