import { Octokit } from '@octokit/rest'
import { VERSION } from '../../version.js'
import { renderBlocks, type Block } from '../document.js'
import { describeError, trackerFetch, type RateLimitState, type TrackerHttpOptions } from './http.js'
import {
  FIND_MAX_PAGES,
  markerLine,
  ownerLabels,
  ownerUsers,
  TICKET_LABEL,
  type NewTicket,
  type TicketTracker,
  type TrackerTicket,
} from './tracker.js'

export interface GithubTrackerOptions extends TrackerHttpOptions {
  /** `owner/name`. */
  repo: string
  /** Default `https://api.github.com`. */
  apiUrl?: string
  token: string
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

interface Issue {
  number: number
  html_url: string
  state: string
  body?: string | null
  pull_request?: unknown
}

const asTicket = (i: Issue): TrackerTicket => ({
  key: String(i.number),
  url: i.html_url,
  state: i.state === 'closed' ? 'closed' : 'open',
})

/**
 * GitHub Issues through Octokit (REST): `GET /repos/{owner}/{repo}/issues?labels=flakewatch&state=all` to find a
 * ticket by the marker in its body, `POST …/issues`, `POST …/issues/{n}/comments`, `PATCH …/issues/{n}`.
 */
export function githubTracker(opts: GithubTrackerOptions): TicketTracker {
  const [owner, repo] = opts.repo.split('/') as [string, string]
  const rateLimit: RateLimitState = { until: null }
  const octokit = new Octokit({
    auth: opts.token,
    baseUrl: (opts.apiUrl ?? 'https://api.github.com').replace(/\/+$/, ''),
    userAgent: `flakewatch/${VERSION}`,
    log: quiet,
    request: { fetch: trackerFetch(opts, rateLimit) },
  })
  // The tickets carrying the label, read once per connection: one sync pass asks for many markers.
  let known: Promise<Map<string, TrackerTicket>> | null = null
  const scan = async () => {
    const found = new Map<string, TrackerTicket>()
    for (let page = 1; page <= FIND_MAX_PAGES; page++) {
      const { data } = await octokit.rest.issues.listForRepo({
        owner,
        repo,
        labels: TICKET_LABEL,
        state: 'all',
        per_page: 100,
        page,
      })
      for (const i of data as Issue[]) {
        const m = i.pull_request ? null : /<!-- (flakewatch-[0-9a-f]+) -->/.exec(i.body ?? '')
        // The oldest wins, should a ticket ever have been copied.
        if (m && !found.has(m[1]!)) found.set(m[1]!, asTicket(i))
      }
      if (data.length < 100) break
    }
    return found
  }
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (error) {
      throw describeError(`GitHub ${what}`, error)
    }
  }
  return {
    kind: 'github',
    markup: 'markdown',
    rateLimit,
    async find(marker) {
      known ??= call('listing issues', scan).catch((error: unknown) => {
        known = null
        throw error
      })
      return (await known).get(marker) ?? null
    },
    async open(t: NewTicket) {
      const body = `${renderBlocks(t.blocks, 'markdown')}\n\n${markerLine(t.marker)}`
      const assignees = ownerUsers(t.owners)
      const labels = [TICKET_LABEL, ...t.labels, ...ownerLabels(t.owners, assignees)]
      const create = (who: string[]) =>
        octokit.rest.issues.create({ owner, repo, title: t.title, body, labels, assignees: who })
      const { data } = await call('creating an issue', async () => {
        try {
          return await create(assignees)
        } catch (error) {
          // 422: an owner who cannot be assigned here (not a collaborator); the ticket matters more.
          if ((error as { status?: number }).status === 422 && assignees.length) return create([])
          throw error
        }
      })
      const ticket = asTicket(data)
      if (known) (await known).set(t.marker, ticket)
      return ticket
    },
    async comment(key: string, blocks: Block[]) {
      await call('commenting', () =>
        octokit.rest.issues.createComment({
          owner,
          repo,
          issue_number: Number(key),
          body: renderBlocks(blocks, 'markdown'),
        }),
      )
    },
    async setState(key, state) {
      await call(state === 'closed' ? 'closing an issue' : 'reopening an issue', () =>
        octokit.rest.issues.update({
          owner,
          repo,
          issue_number: Number(key),
          state,
          state_reason: state === 'closed' ? 'completed' : 'reopened',
        }),
      )
    },
  }
}
